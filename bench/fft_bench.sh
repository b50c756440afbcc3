#!/usr/bin/env bash
# Runs bench/fft_bench (Cairn's CPU FFT through eager dispatch, and kissfft directly) and, when the
# bench venv has numpy, numpy.fft.fft on the same lengths, in the same run. Figures only, never a
# test.
#
#   bench/fft_bench.sh [repetitions]     (5 by default)
#
# numpy comes from the bench venv (~/.cache/cairn/bench-venv, CAIRN_BENCH_VENV overrides it); it
# is skipped, with a note, when the venv or numpy is missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
reps="${1:-5}"
flags=(${CAIRN_BAZEL_FLAGS--c opt})
(cd "$here/.." && bazel build "${flags[@]}" //bench:fft_bench >&2)
bin="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)/bench/fft_bench"

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$bin" "$reps" | tee "$out"
if "$venv/bin/python" -c 'import numpy' 2>/dev/null; then
  "$venv/bin/python" - "$reps" <<'PY' | tee -a "$out"
import sys, time
import numpy as np
reps = int(sys.argv[1])
for n in (62501, 65536):
    i = np.arange(n)
    x = (((i * 37) % 101) / 101.0 - 0.5 + 1j * (((i * 53) % 97) / 97.0 - 0.5)).astype(np.complex64)
    np.fft.fft(x)  # numpy (pocketfft) caches its plan too
    best = 1e30
    for _ in range(reps):
        t0 = time.perf_counter()
        np.fft.fft(x)
        best = min(best, time.perf_counter() - t0)
    print(f"@ numpy/{n} {best:.6f}")
PY
else
  echo "# numpy.fft skipped: no numpy in $venv"
fi
awk '
  /^@/ { split($2, k, "/"); t[$2] = $3; sizes[k[2]] = 1 }
  END {
    for (n in sizes) {
      line = sprintf("n=%-6s cairn %.4fs  kissfft %.4fs", n, t["cairn/" n], t["kissfft/" n])
      if (("numpy/" n) in t) line = line sprintf("  numpy %.4fs  cairn/numpy %.2fx", t["numpy/" n], t["cairn/" n] / t["numpy/" n])
      print line
    }
    if (("cairn/62501" in t) && ("cairn/65536" in t))
      printf("62501/65536 cairn %.2fx (kissfft %.0fx)\n", t["cairn/62501"] / t["cairn/65536"],
             t["kissfft/62501"] / t["kissfft/65536"])
  }' "$out" | sort
