#!/usr/bin/env bash
# The C API fuzzer (tests/fuzz/capi_fuzzer.cc): every options struct and its constructors, and the
# checkpoint, reader, weights and function export/load calls, with hostile struct_size values, field
# values, paths and keys; built under ASan+UBSan (bazel --config=asan), with LeakSanitizer checking
# each target's child. Exits 0 when nothing outside tests/fuzz/capi_fuzzer_known.txt was found;
# every new problem prints a one-line repro (`capi_fuzzer --seed=S --target=T --trial=K   # description`).
#
#   tests/fuzz/run_capi_fuzzer.sh            # CI size (tools/test): 300 trials per target, ~30-60 s
#   tests/fuzz/run_capi_fuzzer.sh --full     # 3000 trials per target
#
# Environment: CAPI_FUZZ_SEED (default 1, reproducible; any number explores new trials),
# CAPI_FUZZ_TRIALS (overrides the count), CAPI_FUZZ_OUT (default ${TMPDIR:-/tmp}/cairn-capi-fuzz: the
# binary and the log), CAPI_FUZZ_SECONDS (default 120: the run's wall-clock bound after the build).
set -uo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${CAPI_FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-capi-fuzz}"
mkdir -p "$out/scratch"
seed="${CAPI_FUZZ_SEED:-1}"
trials=300
[ "${1:-}" = "--full" ] && trials=3000
trials="${CAPI_FUZZ_TRIALS:-$trials}"

# Huge allocations fail (and the call must say so) instead of aborting; leaks are checked per child
# (LeakSanitizer's recoverable check at the end of each target's trials).
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=1:symbolize=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export CAPI_FUZZ_SCRATCH="$out/scratch"

echo "==> bazel build --config=asan //tests/fuzz:capi_fuzzer"
if ! bazel build --config=asan //tests/fuzz:capi_fuzzer >"$out/build.log" 2>&1; then
  tail -n 30 "$out/build.log"
  exit 1
fi
install -m 0755 bazel-bin/tests/fuzz/capi_fuzzer "$out/capi_fuzzer_asan"

log="$out/capi_fuzzer.log"
echo "==> capi_fuzzer (ASan+UBSan+LSan): $trials trials per target, seed $seed (log: $log)"
start=$SECONDS
"$out/capi_fuzzer_asan" --self-test >"$out/self_test.log" 2>&1
self=$?
grep -a '^self-test' "$out/self_test.log" | sed 's/^/    /'
timeout "${CAPI_FUZZ_SECONDS:-120}" "$out/capi_fuzzer_asan" --seed="$seed" --trials="$trials" --jobs=2 \
  --trial-timeout=30 --target-seconds=30 --known=tests/fuzz/capi_fuzzer_known.txt >"$log" 2>&1
rc=$?
grep -a -A1 '^FAIL ' "$log" | cut -c1-600
# Sanitizer reports only when something new was found (the known crashes print theirs too).
[ "$rc" != 0 ] && grep -a -B2 -A30 'ERROR: \(Address\|Leak\)Sanitizer\|runtime error:' "$log" | head -n 60
sed -n '/^target /,$p' "$log"
echo "capi fuzzer: $((SECONDS - start)) s after the build, self-test $([ "$self" = 0 ] && echo passed || echo FAILED), $([ "$rc" = 0 ] && echo "no new problems" || echo "FAILED (status $rc; see the FAIL lines and repros above)")"
[ "$self" = 0 ] && [ "$rc" = 0 ]
