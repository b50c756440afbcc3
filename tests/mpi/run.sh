#!/usr/bin/env bash
# MpiCollective under mpirun on loopback (tests/mpi/mpi_collective_test.cc) and the C API's
# cairn_mpi_* (capi_mpi_test.c): 2 and 4 ranks, with the flags FORMATS.md gives for root on 2 shared
# cores, each run bounded by `timeout`; then the missing-plugin case in one process without mpirun.
# Prints SKIP when Open MPI is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v mpirun >/dev/null; then
  echo "SKIP: tests/mpi: no mpirun (install openmpi-bin and libopenmpi-dev: tools/setup)"
  exit 0
fi
targets=(//tests/mpi:mpi_collective_test //tests/mpi:capi_mpi_test)
bazel build "${targets[@]}" >/dev/null 2>&1 || bazel build "${targets[@]}"
test_bin=bazel-bin/tests/mpi/mpi_collective_test
# The C program finds the plugin beside itself (the lookup libcairn.so uses), with no variable set.
beside=$(mktemp -d)
trap 'rm -rf "$beside"' EXIT
cp bazel-bin/tests/mpi/capi_mpi_test bazel-bin/runtime/distribute/mpi/libcairn_mpi.so "$beside/"
export CAIRN_MPI_PLUGIN="$PWD/bazel-bin/runtime/distribute/mpi/libcairn_mpi.so"
. tests/mpi/mpirun_flags.sh

for ranks in 2 4; do
  echo "== $ranks ranks"
  timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" "$test_bin" --no-colors=true --minimal=true
  (unset CAIRN_MPI_PLUGIN; timeout 120 mpirun -np "$ranks" "${CAIRN_MPIRUN_FLAGS[@]}" "$beside/capi_mpi_test")
done

echo "== no plugin"
CAIRN_MPI_TEST_MISSING=1 CAIRN_MPI_PLUGIN=/nonexistent/libcairn_mpi.so \
  timeout 60 "$test_bin" --no-colors=true --minimal=true --test-case="a missing plugin*"
echo "tests/mpi: passed"
