#!/usr/bin/env bash
# Runs bench/mpi_step_bench under mpirun with 1, 2 and 4 ranks (flags from FORMATS.md, as
# tests/mpi/run.sh): keras train_on_batch with a multi-worker strategy on the digits MLP's shapes
# and a larger synthetic MLP, the same global batch at every rank count, with the share of each
# step spent in collectives and blocked on them, with all gradients in one bucket and in small
# buckets (reduced while the backward pass goes on). Figures only, never a test.
#
#   bench/mpi_step_bench.sh [steps]     (200 by default)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
steps="${1:-200}"
flags=(${CAIRN_BAZEL_FLAGS--c opt})
(cd "$here/.." && bazel build "${flags[@]}" //bench:mpi_step_bench >&2)
bin_dir="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)"
export CAIRN_MPI_PLUGIN="$bin_dir/runtime/distribute/mpi/libcairn_mpi.so"
# One BLAS thread per rank, as one Cairn thread: otherwise one rank's MatMuls use both cores and
# ranks oversubscribe them (bench/distribute_bench's note in docs/benchmarks.md).
export OPENBLAS_NUM_THREADS=1
. "$here/../tests/mpi/mpirun_flags.sh"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ranks in 1 2 4; do
  timeout 600 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" -x OPENBLAS_NUM_THREADS "$bin_dir/bench/mpi_step_bench" "$steps" | tee -a "$out"
done
# Speedup of the step against one rank's (same global batch: strong scaling).
awk '/^@ .*\/ranks[0-9]+\/step_ms/ { split($2, k, "/"); t[k[1] "," k[2]] = $3; m[k[1]] = 1 }
  END { for (name in m) for (r = 2; r <= 4; r *= 2) if ((name ",ranks" r) in t)
          printf "%s: %d ranks %.2fx the step rate of 1 rank\n", name, r, t[name ",ranks1"] / t[name ",ranks" r] }' "$out"
# Small buckets against one bucket, same run.
awk '/^@ .*\/ranks[0-9]+(\/buckets)?\/step_ms/ { split($2, k, "/"); t[k[1] "," k[2] "," (k[3] == "buckets")] = $3; m[k[1] "," k[2]] = 1 }
  END { for (key in m) if ((key ",1") in t)
          printf "%s: small buckets %.2fx the step time of one bucket\n", key, t[key ",1"] / t[key ",0"] }' "$out"
