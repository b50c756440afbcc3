#!/usr/bin/env bash
# Runs bench/safetensors_bench (Cairn, raw mmap) and the Python package on the same file and prints
# the ratios from this run. Figures only, never a test.
#
#   bench/safetensors_bench.sh [MiB]      (256 by default; the file is $TMPDIR/cairn-st-bench.safetensors)
#
# The package comes from the bench venv (~/.cache/cairn/bench-venv, CAIRN_BENCH_VENV overrides it);
# it needs `safetensors` and numpy (`bench-venv/bin/pip install safetensors`).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
mib="${1:-256}"
file="${TMPDIR:-/tmp}/cairn-st-bench.safetensors"
flags=(${CAIRN_BAZEL_FLAGS--c opt})
(cd "$here/.." && bazel build "${flags[@]}" //bench:safetensors_bench >&2)
bin="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)/bench/safetensors_bench"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
out="$(mktemp)"
trap 'rm -f "$out" "$file"' EXIT
"$bin" "$file" "$mib" | tee "$out"
"$venv/bin/python" "$here/peers/safetensors_peer.py" "$file" | tee -a "$out"
awk '
  /^@/ { split($2, k, "/"); t[k[1] "/" k[2]] = $3; cases[k[2]] = 1 }
  END {
    for (c in cases)
      printf("%-11s cairn %.4fs  copy %.4fs  into a module %.4fs  raw mmap %.4fs  package %.4fs  safe_open %.4fs | package/cairn %.2fx  package/cairn_copy %.2fx  package/module %.2fx  raw/cairn %.2fx\n",
             c, t["cairn/" c], t["cairn_copy/" c], t["cairn_module/" c], t["raw_mmap/" c], t["package/" c], t["safe_open/" c],
             t["package/" c] / t["cairn/" c], t["package/" c] / t["cairn_copy/" c], t["package/" c] / t["cairn_module/" c],
             t["raw_mmap/" c] / t["cairn/" c])
  }' "$out" | sort
