#!/usr/bin/env bash
# fit on the digits MLP against the hand-written loop (bench/fit_bench.c), Keras model.fit and a
# PyTorch loop (bench/peers/fit_peer.py), on this machine in one run; prints the ratios.
# Needs the peers' venv: bench/peers/setup.sh. Usage: bench/fit_bench.sh [epochs per run] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
epochs="${1:-5}" runs="${2:-5}"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
bazel build -c opt //bench:fit_bench >/dev/null 2>&1 || bazel build -c opt //bench:fit_bench
cairn=$(bazel-out/k8-opt/bin/bench/fit_bench examples/data/digits.csv "$epochs" "$runs")
echo "$cairn"
peers=$(cd bench/peers && for peer in keras torch; do
  "$venv/bin/python" fit_peer.py "$peer" ../../examples/data/digits.csv "$epochs" "$runs" 2>/dev/null
done)
echo "$peers"
figure() { sed -n "s/^@ $1 //p" <<<"$cairn$(printf '\n')$peers"; }
fit=$(figure fit_examples_per_s) keras=$(figure keras_fit_examples_per_s) torch=$(figure torch_loop_examples_per_s)
awk -v f="$fit" -v k="$keras" -v t="$torch" \
  'BEGIN { printf "cairn fit / keras model.fit: %.2fx; cairn fit / torch loop: %.2fx\n", f / k, f / t }'
