#!/usr/bin/env bash
# Makes the peers' venv for bench/data_bench.sh and tests/golden/data/make_golden.py:
# ~/.cache/cairn/bench-venv (or $CAIRN_BENCH_VENV) with the pinned requirements.txt beside this file.
# Benchmarks only: no test needs it. Idempotent: a venv that already has the pins is left alone.
#
# torch from PyPI on Linux x86_64 is the CUDA build: it pulls the nvidia-* and cuda-* wheels
# (about 4 GB installed) even on a machine without a GPU. PyPI has no CPU-only torch wheel for
# x86_64 and only PyPI is reachable here, so we take it as it is; the benchmark runs it on the CPU.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi
if "$venv/bin/python" - "$here/requirements.txt" <<'PY'
import sys
from importlib.metadata import version, PackageNotFoundError
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        if version(name) != want:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
PY
then
  echo "bench venv ready: $venv"
  exit 0
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
echo "bench venv ready: $venv"
