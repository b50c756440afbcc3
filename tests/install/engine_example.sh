#!/usr/bin/env bash
# examples/engine built outside the repository against an installed prefix, as an adopter builds
# it (CMake, find_package(Cairn 1), glslc at build time, libpng), then:
#  1. the engine's --check on lavapipe, once per way of putting the model in the frame (--sync
#     record: Cairn's recorded commands inside the engine's one command buffer; --sync
#     semaphores: Cairn's own submission between the engine's timeline values): 4 frames of
#     64x64, Cairn's output on the engine's device
#     equal to Cairn's CPU device within 1e-5, zero validation errors (synchronisation validation
#     on), every PNG decoded back to the frame's pixels, and the model's output at most half as far
#     (mean squared error) from the clean render as its noisy input; with the committed weights;
#  2. train_filter for a short run (a few scenes, one epoch) and the engine loading what it saved.
# None of the binaries may refer into the checkout. Prints the seconds each phase took.
# Usage: tests/install/engine_example.sh   (prefix: see tests/install/prefix.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
. tests/install/prefix.sh
fail() { echo "engine_example: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$2 - $1" | bc)"; }

cp -r examples/engine "$tmp/src"
t0=$(now)
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; fail "cmake configure failed"; }
cmake --build "$tmp/build" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "cmake build failed"; }
t1=$(now)

mkdir "$tmp/frames"
for sync in record semaphores; do
  out=$("$tmp/build/engine" --weights "$tmp/src/filter.safetensors" --check --sync "$sync" --out "$tmp/frames" 2>&1) ||
    fail "the engine's check (--sync $sync) failed: $out"
  echo "$out"
  grep -q "^engine check: 4 frames 64x64 OK: sync $sync, " <<< "$out" || fail "no result line from the engine (--sync $sync)"
  grep -q 'validation on' <<< "$out" || fail "the validation layer was not on: $out"
  # The committed weights must denoise: the model's output closer to the clean render than its input.
  read -r noisy denoised < <(sed -n 's/.*MSE vs clean render noisy \([0-9.]*\) -> denoised \([0-9.]*\).*/\1 \2/p' <<< "$out")
  [ -n "$denoised" ] && [ "$(echo "$denoised < $noisy / 2" | bc -l)" -eq 1 ] ||
    fail "the model does not halve the noise's mean squared error ($noisy -> $denoised, --sync $sync)"
  [ "$(find "$tmp/frames" -name 'frame_*.png' | wc -l)" -eq 4 ] || fail "expected 4 PNGs in $tmp/frames"
done
t2=$(now)

train=$("$tmp/build/train_filter" --out "$tmp/short.safetensors" --epochs 1 --images 16) || fail "train_filter failed: $train"
echo "$train"
out=$("$tmp/build/engine" --weights "$tmp/short.safetensors" --check --frames 1 --out "$tmp/frames" 2>&1) ||
  fail "the engine failed on train_filter's weights: $out"
grep -q '^engine check: 1 frames 64x64 OK: sync record, ' <<< "$out" || fail "no result line with train_filter's weights: $out"
t3=$(now)

for f in "$tmp/build/engine" "$tmp/build/train_filter"; do
  hits=$(strings -a "$f" | grep -E -e "$root/" -e "$root\$" | head -3 || true)
  [ -z "$hits" ] || fail "$f refers to the checkout $root: $hits"
done
echo "engine_example: OK (CMake configure+build $(secs "$t0" "$t1")s, checks (record, semaphores) $(secs "$t1" "$t2")s, short training + check $(secs "$t2" "$t3")s)"
