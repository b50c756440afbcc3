#!/usr/bin/env bash
# Runs bench/data_bench (Cairn) and the peers' scripts (tf.data, PyTorch) in one go and prints the
# ratios from this run. Figures only, never a test.
#
#   bench/data_bench.sh [guide] [images] [tfrecord] [--dir DIR] [--mib N] [--sizes B,B,..] [--epochs N]
#
# Builds //bench:data_bench with -c opt (or $CAIRN_BAZEL_FLAGS) unless CAIRN_DATA_BENCH names a data_bench binary already
# built (to run on another machine: copy the binary, which has Cairn linked in and needs only the
# system libraries ldd lists (openblas, zstd, isal, ...), and bench/). The peers' venv is bench/peers/setup.sh's (made on first use; CAIRN_BENCH_VENV
# overrides its place). Raw outputs stay in $CAIRN_BENCH_OUT (default: a new temp directory).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${CAIRN_BENCH_VENV:-$HOME/.cache/cairn/bench-venv}"
out="${CAIRN_BENCH_OUT:-$(mktemp -d /tmp/cairn-data-bench.XXXXXX)}"
mkdir -p "$out"

sections=()
epochs=5
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    guide | images | tfrecord) sections+=("${args[$i]}") ;;
    --epochs) epochs="${args[$((i + 1))]}" ;;
  esac
done
[[ ${#sections[@]} -gt 0 ]] || sections=(guide images tfrecord)
has() { [[ " ${sections[*]} " == *" $1 "* ]]; }

bin="${CAIRN_DATA_BENCH:-}"
if [[ -z "$bin" ]]; then
  # CAIRN_BAZEL_FLAGS replaces "-c opt" (set it empty to reuse a default build: .bazelrc has -O2).
  flags=(${CAIRN_BAZEL_FLAGS--c opt})
  (cd "$here/.." && bazel build "${flags[@]}" //bench:data_bench)
  bin="$(cd "$here/.." && bazel info "${flags[@]}" bazel-bin)/bench/data_bench"
fi
"$here/peers/setup.sh" >&2
py="$venv/bin/python"
export TF_CPP_MIN_LOG_LEVEL=2 PYTHONWARNINGS=ignore PYTHONDONTWRITEBYTECODE=1

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$bin" "$@" | tee "$out/cairn.txt"
peers=()
if has guide; then
  "$py" "$here/peers/tfdata_guide.py" 2>/dev/null | tee "$out/tf_guide.txt"
  peers+=("$out/tf_guide.txt")
fi
if has images; then
  "$py" "$here/peers/tfdata_images.py" --epochs "$epochs" 2>/dev/null | tee "$out/tf_images.txt"
  "$py" "$here/peers/torch_images.py" --epochs "$epochs" 2>/dev/null | tee "$out/torch_images.txt"
  peers+=("$out/tf_images.txt" "$out/torch_images.txt")
fi
if has tfrecord; then
  tf_args=()
  for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[$i]}" in --mib | --sizes | --dir) tf_args+=("${args[$i]}" "${args[$((i + 1))]}") ;; esac
  done
  "$py" "$here/peers/tfdata_tfrecord.py" "${tf_args[@]}" 2>/dev/null | tee "$out/tf_tfrecord.txt"
  peers+=("$out/tf_tfrecord.txt")
fi
echo
echo "# summary ($out)"
"$py" "$here/peers/summary.py" "$out/cairn.txt" "${peers[@]}"
