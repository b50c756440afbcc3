#!/usr/bin/env bash
# Runs bench/graph_bench section 2 (20 elementwise ops on 1M float32: eager, replay unfused, replay
# fused, and a memcpy of the same bytes) and bench/peers/chain_peer.py (PyTorch eager and
# torch.compile, TensorFlow) in the same run, `rounds` times alternating, and prints the ratios the
# issue's targets are stated in. Figures only, never a test.
#
#   bench/graph_bench.sh [rounds] [chain_peer.py flags...]     (1 round by default)
#
# CAIRN_SIMD (sse2, avx2, avx512) is passed through to graph_bench. The peers come from the bench
# venv (~/.cache/cairn/bench-venv, CAIRN_BENCH_VENV overrides it); without it only Cairn's figures
# are printed. CAIRN_GRAPH_BENCH_BIN runs that graph_bench binary instead of building one (a copy
# built from another commit: before/after figures against the same peers).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
rounds="${1:-1}"
shift || true
flags=(${CAIRN_BAZEL_FLAGS--c opt})
bin="${CAIRN_GRAPH_BENCH_BIN:-}"
if [[ -z "$bin" ]]; then
  (cd "$here/.." && bazel build "${flags[@]}" //bench:graph_bench >&2)
  bin="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)/bench/graph_bench"
fi

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  echo "# round $r: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bin" 2 | tee -a "$out"
  if [[ -x "$venv/bin/python" ]]; then
    "$venv/bin/python" "$here/peers/chain_peer.py" --threads "$(nproc)" "$@" 2>/dev/null | tee -a "$out"
  else
    echo "# peers skipped: no venv at $venv"
  fi
done

# Per figure: the median over the rounds; ratios are peer time / Cairn time (above 1: Cairn faster).
awk '
  /^@/ { v[$2] = v[$2] " " $3 }
  function median(s,   a, n, i, j, t) {
    n = split(s, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((n + 1) / 2)]
  }
  function ratio(peer, ours, what,   p, c) {
    if (!(peer in v) || !(ours in v)) return
    p = median(v[peer]); c = median(v[ours])
    printf("%-44s %8.2f ms vs %8.2f ms: %.2fx\n", what, c, p, p / c)
  }
  END {
    print "medians over the rounds (Cairn vs peer, peer/Cairn):"
    ratio("peer/torch_compile", "cairn/fused", "fused vs torch.compile (target >= 2x)")
    ratio("peer/torch_eager", "cairn/unfused", "replay unfused vs torch eager (target >= 1x)")
    ratio("peer/torch_eager", "cairn/eager", "eager vs torch eager (target >= 1x)")
    ratio("peer/tf_function", "cairn/fused", "fused vs tf.function")
    ratio("peer/tf_eager", "cairn/eager", "eager vs TF eager")
    if ("cairn/memcpy" in v) {
      m = median(v["cairn/memcpy"]); f = median(v["cairn/fused"])
      gb = 8 * 1048576 / 1e9  # the fused chain reads and writes 4 MB once
      printf("fused %.1f GB/s against memcpy of the same bytes %.1f GB/s (%.0fx the memcpy time)\n",
             gb / f * 1e3, gb / m * 1e3, f / m)
    }
  }' "$out"
