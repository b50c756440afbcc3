#!/usr/bin/env bash
# Runs bench/mpi_bench under mpirun on loopback with 2 and 4 ranks (flags from FORMATS.md, as
# tests/mpi/run.sh): allreduce bus bandwidth through Cairn against MPI_Allreduce on the same
# buffers, same run, 1 KB to 64 MB. Figures only, never a test.
#
#   bench/mpi_bench.sh [rounds]     (3 by default)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rounds="${1:-3}"
flags=(${CAIRN_BAZEL_FLAGS--c opt})
(cd "$here/.." && bazel build "${flags[@]}" //bench:mpi_bench >&2)
bin_dir="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)"
export CAIRN_MPI_PLUGIN="$bin_dir/runtime/distribute/mpi/libcairn_mpi.so"
. "$here/../tests/mpi/mpirun_flags.sh"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for ranks in 2 4; do
  timeout 600 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" "$bin_dir/bench/mpi_bench" "$rounds"
done
