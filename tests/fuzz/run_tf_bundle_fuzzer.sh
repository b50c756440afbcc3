#!/usr/bin/env bash
# Builds the TensorFlow checkpoint (tensor_bundle) reader fuzzer with clang (libFuzzer + ASan +
# UBSan) straight from the
# sources, then fuzzes for a bounded time over a scratch copy of the committed seed corpus.
# Exits 0 when no crash was found; a crash leaves its input under $FUZZ_OUT/artifacts/.
#
#   tests/fuzz/run_tf_bundle_fuzzer.sh [SECONDS]   (default 20; FUZZ_OUT defaults to /tmp/cairn-tf-bundle-fuzz)
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-tf-bundle-fuzz}"
cxx="${CXX_FUZZ:-clang++}"
mkdir -p "$out/artifacts" "$out/corpus"
cd "$root"

bin="$out/tf_bundle_fuzzer"
sources=(runtime/checkpoint/tf_bundle.cc runtime/checkpoint/tf_table.cc runtime/checkpoint/io.cc runtime/io/file.cc runtime/io/crc32c.cc
         runtime/tensor/tensor.cc runtime/tensor/device.cc runtime/cpu/block_cache.cc runtime/cpu/cpu_device.cc runtime/core/allocator.cc runtime/core/shape.cc
         runtime/core/dtype.cc tests/fuzz/tf_bundle_fuzzer.cc)
# Rebuilt when any source or header it uses is newer than the binary. Checksums are off in this build
# (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) so mutations reach the parsers behind them.
if [[ ! -x "$bin" ]] || [[ -n "$(find runtime/checkpoint runtime/io runtime/core runtime/tensor runtime/cpu/block_cache.cc runtime/cpu/block_cache.h runtime/cpu/cpu_device.cc tests/fuzz/tf_bundle_fuzzer.cc -newer "$bin" -print -quit)" ]]; then
  echo "building $bin"
  "$cxx" -std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
    -I"$root" "${sources[@]}" -lisal -lz -lfmt -lpthread -o "$bin"
fi

# New inputs go to the scratch corpus (the first directory); the committed seeds stay as they are.
"$bin" -max_total_time="$seconds" -max_len=32768 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" tests/fuzz/corpus/tf_bundle
