#!/usr/bin/env bash
# op_fuzzer_smoke_test OP_FUZZER KNOWN_LIST: the self-test (each planted bug is reported), then 30
# trials of every registered op on the CPU with the known-issue list (no new problem).
set -euo pipefail
fuzzer="$1"
known="$2"
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=0:${ASAN_OPTIONS:-}"
"$fuzzer" --self-test
"$fuzzer" --device=cpu --seed=1 --trials=30 --jobs=2 --trial-timeout=20 --known="$known"
