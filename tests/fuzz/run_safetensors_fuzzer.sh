#!/usr/bin/env bash
# Builds the safetensors reader fuzzer (tests/fuzz/safetensors_fuzzer.cc) with clang (libFuzzer +
# ASan + UBSan) straight from the sources, then fuzzes for a bounded time over a scratch copy of the
# committed seed corpus. Exits 0 when no crash was found; a crash leaves its input under
# $FUZZ_OUT/artifacts/.
#
#   tests/fuzz/run_safetensors_fuzzer.sh [SECONDS]   (default 20; FUZZ_OUT defaults to /tmp/cairn-fuzz-safetensors)
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-fuzz-safetensors}"
cxx="${CXX_FUZZ:-clang++}"
jobs="${FUZZ_BUILD_JOBS:-2}"
mkdir -p "$out/obj" "$out/artifacts"
cd "$root"
# shellcheck source=tests/fuzz/fuzz_lib.sh
source tests/fuzz/fuzz_lib.sh

flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=fuzzer-no-link
       -fno-sanitize-recover=undefined -I"$root")
sources=(
  runtime/core/allocator.cc runtime/core/dtype.cc runtime/core/shape.cc runtime/core/thread_pool.cc
  runtime/tensor/tensor.cc runtime/tensor/device.cc runtime/cpu/block_cache.cc runtime/cpu/cpu_device.cc
  runtime/io/file.cc runtime/io/safetensors.cc
  tests/fuzz/safetensors_fuzzer.cc
)
# The newest header any source may include: an object older than it is rebuilt.
newest_header="$(ls -t runtime/core/*.h runtime/tensor/*.h runtime/cpu/block_cache.h runtime/cpu/cpu_device.h runtime/io/safetensors.h runtime/io/internal/file.h | head -1)"

fuzz_build "$out" safetensors_fuzzer "$newest_header" -lxxhash -lfmt -lpthread

# -malloc_limit_mb: no input of at most 4 KiB may make the reader allocate 64 MiB at once (a header
# that declares huge shapes must be refused, not believed).
# New inputs go to the scratch corpus (the first directory); the committed seeds stay as they are.
scratch="$out/corpus"
mkdir -p "$scratch"
"$out/safetensors_fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -malloc_limit_mb=64 -print_final_stats=1 -dict=tests/fuzz/safetensors.dict -artifact_prefix="$out/artifacts/" "$scratch" \
  tests/fuzz/corpus/safetensors
