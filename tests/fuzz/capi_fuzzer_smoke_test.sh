#!/usr/bin/env bash
# capi_fuzzer_smoke_test CAPI_FUZZER KNOWN_LIST: the self-test (each planted bug is reported), then
# 40 trials of every target with the known-problem list (no new problem).
set -euo pipefail
fuzzer="$1"
known="$2"
# Leaks are checked per child (LeakSanitizer, in the ASan build); huge allocations fail instead of aborting.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export CAPI_FUZZ_SCRATCH="${TEST_TMPDIR:-/tmp}"
"$fuzzer" --self-test
"$fuzzer" --seed=1 --trials=40 --jobs=2 --trial-timeout=30 --known="$known"
