#!/usr/bin/env bash
# The real-tool check of issue 12: write_sample (C API) writes records, events, a graph and a
# profile; the real TensorBoard from the pinned venv (tools/setup) reads them back, and its server
# serves the scalars over HTTP. See README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "tests/tensorboard: no venv at $venv: run tools/setup" >&2
  exit 1
fi
bazel build //tests/tensorboard:write_sample >/dev/null 2>&1 || bazel build //tests/tensorboard:write_sample
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bazel-bin/tests/tensorboard/write_sample "$out"
"$venv/bin/python" tests/tensorboard/check_with_tensorboard.py "$out"

# The TensorBoard callback of fit (examples/c/fit_digits), read by TensorBoard's event accumulator.
bazel build //examples/c:fit_digits >/dev/null 2>&1 || bazel build //examples/c:fit_digits
bazel-bin/examples/c/fit_digits --data examples/data/digits.csv --dir "$out/fit" --epochs 5 --logdir "$out/fit-logs" >/dev/null
"$venv/bin/python" tests/tensorboard/check_fit_logs.py "$out/fit-logs" 5
