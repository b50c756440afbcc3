#!/usr/bin/env bash
# The real-TensorFlow check of issue 15: write_sample (Cairn's BundleWriter) writes a checkpoint and
# verify_with_tf.py reads it with TensorFlow from the venv under the user's cache directory
# (tools/setup makes it). Prints SKIP and exits 0 when that python cannot import tensorflow.
# CAIRN_TF_PYTHON overrides the python (e.g. ~/.cache/cairn/bench-venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${CAIRN_TF_PYTHON:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/venv/bin/python}"
if [ ! -x "$python" ] || ! "$python" -c "import tensorflow" >/dev/null 2>&1; then
  echo "SKIP tests/tf_checkpoint: $python cannot import tensorflow (add it to tools/verify-requirements.txt)"
  exit 0
fi
bazel build //tests/tf_checkpoint:write_sample >/dev/null 2>&1 || bazel build //tests/tf_checkpoint:write_sample
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bazel-bin/tests/tf_checkpoint/write_sample "$out"
"$python" tests/tf_checkpoint/verify_with_tf.py "$out"
