#!/usr/bin/env bash
# Runs bench/checkpoint_bench (Cairn against raw file I/O of the same bytes) and TensorFlow's save
# and restore of the same variables (256 MiB of float32 in 100 variables, bench/peers/tf_checkpoint_peer.py)
# one after the other, and prints the ratios from this run. Figures only, never a test.
#
#   bench/checkpoint_bench.sh [DIR]      (DIR defaults to /tmp/cairn-ckpt-bench)
#
# TensorFlow comes from the bench venv (~/.cache/cairn/bench-venv, CAIRN_BENCH_VENV overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}/bin/python"
dir="${1:-/tmp/cairn-ckpt-bench}"
bazel build -c opt //bench:checkpoint_bench >&2

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$dir"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
bazel-bin/bench/checkpoint_bench "$dir" | tee "$out"
(cd bench/peers && "$python" tf_checkpoint_peer.py "$dir" 2>/dev/null) | tee -a "$out"
awk '
  /^@/ { t[$2] = $3 }
  END {
    printf "TensorFlow, same 100 variables: save+fsync %.1f ms, restore into the variables %.1f ms\n", t["tf/save_s"] * 1e3, t["tf/restore_s"] * 1e3
    printf "  Checkpoint over the object graph: save %.1f ms (%.2fx TF), restore %.1f ms (%.2fx TF)\n",
           t["object/save_s"] * 1e3, t["tf/save_s"] / t["object/save_s"], t["object/restore_s"] * 1e3, t["tf/restore_s"] / t["object/restore_s"]
    printf "  restore with the old values held (fresh memory, no buffer reuse) %.1f ms (%.2fx TF)\n",
           t["object/restore_held_s"] * 1e3, t["tf/restore_s"] / t["object/restore_held_s"]
    printf "  format alone: restore %.1f ms (%.2fx TF)\n", t["cairn/restore_s"] * 1e3, t["tf/restore_s"] / t["cairn/restore_s"]
    if ("zstd/save_s" in t)
      printf "zstd save (default level): %.1f ms, raw write+fsync %.1f ms: %.2fx raw\n",
             t["zstd/save_s"] * 1e3, t["zstd/raw_write_s"] * 1e3, t["zstd/raw_write_s"] / t["zstd/save_s"]
  }' "$out"
