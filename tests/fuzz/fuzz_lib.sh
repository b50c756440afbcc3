# Sourced by the tests/fuzz/run_*.sh scripts (not run itself): the parallel, incremental clang build
# of one fuzz target.
#
#   fuzz_build OUT BINARY NEWEST_HEADER [LINK_ARGS...]
# compiles every file of the caller's "${sources[@]}" with "$cxx" "${flags[@]}" into OUT/obj (an
# object newer than its source and than NEWEST_HEADER is kept), "$jobs" at a time, then links
# OUT/BINARY with libFuzzer, ASan and UBSan and LINK_ARGS.
fuzz_build() {
  local out="$1" binary="$2" newest_header="$3"
  shift 3
  local objects=() running=0 src obj
  mkdir -p "$out/obj"
  for src in "${sources[@]}"; do
    obj="$out/obj/${src//\//_}.o"
    objects+=("$obj")
    if [[ "$obj" -nt "$src" && "$obj" -nt "$newest_header" ]]; then continue; fi
    echo "compiling $src"
    "$cxx" "${flags[@]}" -c "$src" -o "$obj" &
    running=$((running + 1))
    if (( running >= jobs )); then wait -n; running=$((running - 1)); fi
  done
  wait
  "$cxx" -fsanitize=fuzzer,address,undefined "${objects[@]}" "$@" -o "$out/$binary"
}
