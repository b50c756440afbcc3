#!/usr/bin/env bash
# The real-tool check of the safetensors writer: write_sample writes a file and a sharded model with
# Cairn; the Python safetensors package from the pinned venv (tools/setup) reads them back. Prints
# SKIP when the venv has no safetensors package.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/venv"
python="${CAIRN_SAFETENSORS_PYTHON:-$venv/bin/python}"
if [ ! -x "$python" ]; then
  echo "SKIP: tests/safetensors: no venv at $venv: run tools/setup"
  exit 0
fi
bazel build //tests/safetensors:write_sample >/dev/null 2>&1 || bazel build //tests/safetensors:write_sample
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bazel-bin/tests/safetensors/write_sample "$out"
"$python" tests/safetensors/check_with_python.py "$out"
