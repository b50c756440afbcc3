#!/usr/bin/env bash
# Runs bench/reduce_bench (Cairn's CPU Sum of float32, a read and a memcpy of the same bytes) and,
# when the bench venv has torch, bench/peers/reduce_peer.py (torch.sum) in the same run, then
# prints each case's times, GB/s read and the cairn/torch ratio. Figures only, never a test.
#
#   bench/reduce_bench.sh [repetitions]     (20 by default)
#
# torch comes from the bench venv (~/.cache/cairn/bench-venv, CAIRN_BENCH_VENV overrides it); it is
# skipped, with a note, when the venv or torch is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
reps="${1:-20}"
flags=(${CAIRN_BAZEL_FLAGS--c opt})
(cd "$here/.." && bazel build "${flags[@]}" //bench:reduce_bench >&2)
bin="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)/bench/reduce_bench"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" "$reps" | tee "$out"
if "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  "$venv/bin/python" "$here/peers/reduce_peer.py" "$reps" | tee -a "$out"
else
  echo "# torch skipped: no torch in $venv"
fi
awk '
  /^@/ { split($2, k, "/"); t[$2] = $3; bytes[k[2]] = $4; cases[k[2]] = 1 }
  function gbs(c, impl) { return bytes[c] / t[impl "/" c] / 1e9 }
  END {
    for (c in cases) {
      if (!(("cairn/" c) in t)) continue
      line = sprintf("%-16s cairn %8.3f ms %6.2f GB/s", c, t["cairn/" c] * 1e3, gbs(c, "cairn"))
      if (("torch/" c) in t)
        line = line sprintf("  torch %8.3f ms %6.2f GB/s  cairn/torch time %.2fx", t["torch/" c] * 1e3, gbs(c, "torch"),
                            t["cairn/" c] / t["torch/" c])
      print line
    }
    for (c in cases) {
      if (!(("read/" c) in t)) continue
      printf("%-16s read %8.3f ms %6.2f GB/s  memcpy %8.3f ms %6.2f GB/s\n", c, t["read/" c] * 1e3, gbs(c, "read"),
             t["memcpy/" c] * 1e3, gbs(c, "memcpy"))
    }
  }' "$out" | sort
