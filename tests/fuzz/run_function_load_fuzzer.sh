#!/usr/bin/env bash
# Fuzzes cairn_function_load (tests/fuzz/function_load_fuzzer.cc) for a bounded time: the target
# under Bazel's ASan+UBSan build, driven by tests/fuzz/mutate_main.cc (seeded mutations of the
# committed corpus in tests/fuzz/corpus/function_load: raw files and entry lists sealed behind valid
# checksums). The target links the whole C API, which is too large to rebuild with clang's
# libFuzzer in the CI budget; with clang and time, link function_load_fuzzer.cc with
# -fsanitize=fuzzer against such a build instead. Exits 0 when no input crashed, hung or failed
# a check; a failing input is left in $FUNCTION_LOAD_FUZZ_OUT/crash-input.
#
#   tests/fuzz/run_function_load_fuzzer.sh [SECONDS]   (default 20; FUNCTION_LOAD_FUZZ_SEED default 1)
set -uo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${FUNCTION_LOAD_FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-function-load-fuzz}"
mkdir -p "$out"
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=1:symbolize=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export TMPDIR="$out"

echo "==> bazel build --config=asan //tests/fuzz:function_load_mutator"
if ! bazel build --config=asan //tests/fuzz:function_load_mutator >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log"
  exit 1
fi
install -m 0755 bazel-bin/tests/fuzz/function_load_mutator "$out/function_load_mutator_asan"
"$out/function_load_mutator_asan" --seconds="$seconds" --seed="${FUNCTION_LOAD_FUZZ_SEED:-1}" \
  --artifact="$out/crash-input" tests/fuzz/corpus/function_load
rc=$?
if [ "$rc" != 0 ]; then
  echo "function load fuzzer: FAILED (status $rc); the input is $out/crash-input"
  echo "  replay: bazel-bin/tests/fuzz/function_load_mutator --replay $out/crash-input"
fi
exit "$rc"
