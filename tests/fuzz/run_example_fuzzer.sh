#!/usr/bin/env bash
# Builds the tf.train.Example fuzzer (tests/fuzz/example_fuzzer.cc) with clang (libFuzzer + ASan +
# UBSan) straight from the sources, then fuzzes for a bounded time over a scratch copy of the
# committed seed corpus. Exits 0 when no crash was found; a crash leaves its input under
# $FUZZ_OUT/artifacts/.
#
#   tests/fuzz/run_example_fuzzer.sh [SECONDS]   (default 20; FUZZ_OUT defaults to /tmp/cairn-fuzz-example)
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-fuzz-example}"
cxx="${CXX_FUZZ:-clang++}"
jobs="${FUZZ_BUILD_JOBS:-2}"
gen="$out/gen/runtime/io/proto"
mkdir -p "$gen" "$out/obj" "$out/artifacts"
cd "$root"
# shellcheck source=tests/fuzz/fuzz_lib.sh
source tests/fuzz/fuzz_lib.sh

# The nanopb headers are generated, never committed (as nanopb_library does).
if [[ ! "$gen/example.pb.h" -nt runtime/io/proto/example.proto || ! "$gen/feature.pb.h" -nt runtime/io/proto/feature.proto ]]; then
  /usr/bin/nanopb_generator.py --quiet -I runtime/io/proto -D "$gen" runtime/io/proto/feature.proto runtime/io/proto/example.proto
fi

flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=fuzzer-no-link
       -fno-sanitize-recover=undefined -I"$root" -I"$out/gen")
sources=(
  runtime/core/allocator.cc runtime/core/dtype.cc runtime/core/shape.cc runtime/core/thread_pool.cc
  runtime/tensor/tensor.cc runtime/tensor/device.cc
  runtime/cpu/block_cache.cc runtime/cpu/cpu_device.cc runtime/io/example.cc
  tests/fuzz/example_fuzzer.cc
)
# The newest header any source may include: an object older than it is rebuilt.
newest_header="$(ls -t runtime/core/*.h runtime/tensor/*.h runtime/cpu/block_cache.h runtime/cpu/cpu_device.h runtime/io/example.h "$gen"/*.pb.h | head -1)"

fuzz_build "$out" example_fuzzer "$newest_header" -lfmt -lpthread

# New inputs go to the scratch corpus (the first directory); the committed seeds stay as they are.
scratch="$out/corpus"
mkdir -p "$scratch"
"$out/example_fuzzer" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$out/artifacts/" "$scratch" tests/fuzz/corpus/example
