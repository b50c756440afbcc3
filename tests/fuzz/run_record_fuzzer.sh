#!/usr/bin/env bash
# Builds the TFRecord reader fuzzer with clang (libFuzzer + ASan + UBSan) straight from the
# sources, then fuzzes for a bounded time over a scratch copy of the committed seed corpus.
# Exits 0 when no crash was found; a crash leaves its input under $FUZZ_OUT/artifacts/.
#
#   tests/fuzz/run_record_fuzzer.sh [SECONDS]   (default 20; FUZZ_OUT defaults to /tmp/cairn-record-fuzz)
set -euo pipefail

seconds="${1:-20}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${FUZZ_OUT:-${TMPDIR:-/tmp}/cairn-record-fuzz}"
cxx="${CXX_FUZZ:-clang++}"
mkdir -p "$out/artifacts" "$out/corpus"
cd "$root"

bin="$out/record_reader_fuzzer"
sources=(runtime/io/crc32c.cc runtime/io/file.cc runtime/io/record_index.cc runtime/io/record_reader.cc
         runtime/io/record_writer.cc tests/fuzz/record_reader_fuzzer.cc)
# Rebuilt when any source or header of runtime/io (or the error header) is newer than the binary.
if [[ ! -x "$bin" ]] || [[ -n "$(find runtime/io runtime/core/error.h tests/fuzz/record_reader_fuzzer.cc -newer "$bin" -print -quit)" ]]; then
  echo "building $bin"
  "$cxx" -std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root" "${sources[@]}" -lisal -lz -lfmt -lpthread -o "$bin"
fi

# New inputs go to the scratch corpus (the first directory); the committed seeds stay as they are.
"$bin" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/artifacts/" "$out/corpus" tests/fuzz/corpus/record_reader
