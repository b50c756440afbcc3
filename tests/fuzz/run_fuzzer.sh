#!/usr/bin/env bash
# Builds the checkpoint reader fuzzer with clang (libFuzzer + ASan + UBSan) straight from the
# sources, then fuzzes for a bounded time over a scratch copy of the committed seed corpus.
# Exits 0 when no crash was found; a crash leaves its input under $FUZZ_OUT/artifacts/.
# The build ignores checksum mismatches (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, see format.h) so
# mutations reach the index parser and the decoders instead of stopping at the first checksum.
#
#   tests/fuzz/run_fuzzer.sh [SECONDS]        (default 30; FUZZ_OUT defaults to /tmp/cairn-fuzz)
set -euo pipefail

seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-fuzz}"
cxx="${CXX_FUZZ:-clang++}"
jobs="${FUZZ_BUILD_JOBS:-2}"
mkdir -p "$out/gen/schemas" "$out/obj" "$out/artifacts"
cd "$root"
# shellcheck source=tests/fuzz/fuzz_lib.sh
source tests/fuzz/fuzz_lib.sh

# The FlatBuffers header is generated, never committed (as the Bazel genrule does).
gen="$out/gen/schemas/checkpoint_generated.h"
if [[ ! "$gen" -nt schemas/checkpoint.fbs ]]; then
  flatc --cpp --scoped-enums -o "$out/gen/schemas" schemas/checkpoint.fbs
fi

flags=(-std=c++17 -O1 -g -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=fuzzer-no-link
       -fno-sanitize-recover=undefined -I"$root" -I"$out/gen")
sources=(
  runtime/core/dtype.cc runtime/core/shape.cc runtime/core/thread_pool.cc runtime/tensor/tensor.cc runtime/tensor/device.cc
  runtime/checkpoint/format.cc runtime/checkpoint/index.cc runtime/checkpoint/io.cc runtime/io/file.cc
  runtime/checkpoint/reader.cc runtime/checkpoint/writer.cc
  tests/fuzz/checkpoint_reader_fuzzer.cc
)
# The newest header any source may include: an object older than it is rebuilt.
newest_header="$(ls -t runtime/core/*.h runtime/tensor/*.h runtime/checkpoint/*.h runtime/checkpoint/internal/*.h runtime/io/internal/*.h "$gen" | head -1)"

fuzz_build "$out" checkpoint_reader_fuzzer "$newest_header" -lzstd -lxxhash -lfmt -lpthread

# New inputs go to the scratch corpus (the first directory); the committed seeds stay as they are.
scratch="$out/corpus"
mkdir -p "$scratch"
"$out/checkpoint_reader_fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$out/artifacts/" "$scratch" tests/fuzz/corpus/checkpoint_reader
