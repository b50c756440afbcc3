#!/usr/bin/env bash
# MpiCollective under mpirun on loopback (tests/mpi/mpi_collective_test.cc): 2 and 4 ranks, with the
# flags FORMATS.md gives for root on 2 shared cores, each run bounded by `timeout`; then the
# missing-plugin case in one process without mpirun. Prints SKIP when Open MPI is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v mpirun >/dev/null; then
  echo "SKIP: tests/mpi: no mpirun (install openmpi-bin and libopenmpi-dev: tools/setup)"
  exit 0
fi
bazel build //tests/mpi:mpi_collective_test >/dev/null 2>&1 || bazel build //tests/mpi:mpi_collective_test
test_bin=bazel-bin/tests/mpi/mpi_collective_test
export CAIRN_MPI_PLUGIN="$PWD/bazel-bin/runtime/distribute/mpi/libcairn_mpi.so"
. tests/mpi/mpirun_flags.sh

for ranks in 2 4; do
  echo "== $ranks ranks"
  timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" "$test_bin" --no-colors=true --minimal=true
done

echo "== no plugin"
CAIRN_MPI_TEST_MISSING=1 CAIRN_MPI_PLUGIN=/nonexistent/libcairn_mpi.so \
  timeout 60 "$test_bin" --no-colors=true --minimal=true --test-case="a missing plugin*"
echo "tests/mpi: passed"
