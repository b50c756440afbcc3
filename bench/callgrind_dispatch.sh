#!/usr/bin/env bash
# Instructions per eager op: callgrind counts for N=2000 and N=12000 Adds; the difference over
# 10,000 ops cancels process start-up and context creation. Target (issue 20): <= 1,200 instructions per op.
# `callgrind_dispatch.sh profile` counts them with the profiler on (docs/profiler.md).
# The peer, in the same run: libtorch's at::add on the same tensors (bench/peers/libtorch_dispatch.cc),
# built against the bench venv's torch (bench/peers/setup.sh; CAIRN_BENCH_VENV overrides the venv)
# when it is there; skipped otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build -c opt //bench:dispatch_loop >/dev/null 2>&1
bin=bazel-bin/bench/dispatch_loop
mode="${1:-}"
count() {  # count BINARY N [ARGS...]
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$@" >/dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"
}
per_op() { echo $(( ($(count "$@" 12000 ${extra[@]+"${extra[@]}"}) - $(count "$@" 2000 ${extra[@]+"${extra[@]}"})) / 10000 )); }
extra=($mode)
ours=$(per_op "$bin")
echo "callgrind${mode:+ (profiler on)}: $ours instructions per 16-element float32 Add through cairn_op_run (target <= 1200)"
[ -n "$mode" ] && exit 0

torch=$(echo "${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"/lib/python3*/site-packages/torch)
if [ ! -f "$torch/include/ATen/ATen.h" ]; then
  echo "libtorch peer skipped: no torch in the bench venv (bench/peers/setup.sh)"
  exit 0
fi
peer_dir=$(mktemp -d)
trap 'rm -rf "$peer_dir"' EXIT
g++ -O2 -std=c++20 -I"$torch/include" bench/peers/libtorch_dispatch.cc -L"$torch/lib" -ltorch_cpu -lc10 \
  -Wl,-rpath,"$torch/lib" -o "$peer_dir/libtorch_dispatch"
extra=()
theirs=$(per_op "$peer_dir/libtorch_dispatch")
version=$(sed -n 's/^__version__ = .\(.*\).$/\1/p' "$torch/version.py" 2>/dev/null || true)
echo "callgrind: $theirs instructions per at::add of the same tensors, libtorch ${version:-?} (same run): Cairn $(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", b / a }')x fewer"
