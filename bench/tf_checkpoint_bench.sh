#!/usr/bin/env bash
# Reading a TensorFlow checkpoint: Cairn's BundleReader against TensorFlow's own restore of the same
# files, in the same run (issue 15 target: >= 2x). TensorFlow comes from the bench venv.
#
#   bench/tf_checkpoint_bench.sh [MiB] [RUNS]   (default 256 MiB of float32, best of 5)
set -euo pipefail
cd "$(dirname "$0")/.."
mib="${1:-256}"
runs="${2:-5}"
python="${CAIRN_BENCH_PYTHON:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/bench-venv/bin/python}"
bazel build -c opt //bench:tf_checkpoint_bench >/dev/null 2>&1 || bazel build -c opt //bench:tf_checkpoint_bench
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tf_out=$("$python" bench/tf_checkpoint_bench.py "$dir" "$mib" "$runs" 2>/dev/null)
prefix=$(awk '$1 == "prefix" {print $2}' <<<"$tf_out")
cairn_out=$(bazel-bin/bench/tf_checkpoint_bench "$prefix" "$runs")
awk -v mib="$mib" '
  $1 == "tf_restore_s" { restore = $2 } $1 == "tf_reader_s" { reader = $2 } $1 == "cairn_read_s" { cairn = $2 }
  $1 == "cairn_restore_s" { cairn_restore = $2 }
  END {
    printf "TF checkpoint, %d MiB float32 (16 values), page cache, best of runs\n", mib
    printf "  restore by object graph into existing variables:\n"
    printf "    cairn restore_tf (cairn_checkpoint_restore) %8.1f ms  %6.2f GB/s\n", cairn_restore * 1e3, mib * 1048576 / cairn_restore / 1e9
    printf "    tf.train.Checkpoint.restore                 %8.1f ms  %6.2f GB/s  -> cairn %.2fx\n", restore * 1e3, mib * 1048576 / restore / 1e9, restore / cairn_restore
    printf "  every value by name:\n"
    printf "    cairn BundleReader load (CRC32C)            %8.1f ms  %6.2f GB/s\n", cairn * 1e3, mib * 1048576 / cairn / 1e9
    printf "    tf.train.load_checkpoint+get_tensor         %8.1f ms  %6.2f GB/s  -> cairn %.2fx\n", reader * 1e3, mib * 1048576 / reader / 1e9, reader / cairn
  }' <<<"$tf_out
$cairn_out"
