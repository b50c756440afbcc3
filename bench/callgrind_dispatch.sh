#!/usr/bin/env bash
# Instructions per eager op: callgrind counts for N=2000 and N=12000 Adds; the difference over
# 10,000 ops cancels process start-up and context creation. Target (issue 20): <= 1,200 instructions per op.
# `callgrind_dispatch.sh profile` counts them with the profiler on (docs/profiler.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build -c opt //bench:dispatch_loop >/dev/null 2>&1
bin=bazel-bin/bench/dispatch_loop
mode="${1:-}"
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$bin" "$1" $mode >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"
}
lo=$(count 2000)
hi=$(count 12000)
echo "callgrind${mode:+ (profiler on)}: $(( (hi - lo) / 10000 )) instructions per 16-element float32 Add through cairn_op_run (target <= 1200)"
