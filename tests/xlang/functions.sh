#!/usr/bin/env bash
# Cross-language compiled functions (tests/xlang/SPEC.md, "Compiled functions"): C, Go, Rust and
# Java each train y = x @ w + b through a captured training step and export `predict`; their
# losses and outputs must be identical (float32 bits). Every language loads C's file and C loads
# every language's file, each call giving the same outputs again.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export PATH="/usr/local/go/bin:$HOME/.cargo/bin:$PATH" GOTOOLCHAIN=local
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

bazel build //tests/xlang:function_c //capi:cairn //bindings/java:libcairn_jni.so >/dev/null 2>&1
. tests/xlang/prefix.sh
(cd bindings/rust && cargo build -q --example xfunction)
(cd bindings/java && mvn -B -q compile >/dev/null)

run() {  # run LANG ACTION PATH
  case "$1" in
    c) "$root/bazel-bin/tests/xlang/function_c" "$2" "$3" ;;
    go) (cd "$root/bindings/go" && go run ./cmd/xfunction "$2" "$3") ;;
    rust) (cd "$root/bindings/rust" && cargo run -q --example xfunction -- "$2" "$3") ;;
    java) (cd "$root/bindings/java" && java -cp target/classes \
             -Dcairn.jni.path="$root/bazel-bin/bindings/java/libcairn_jni.so" xlang/XFunction.java "$2" "$3") ;;
  esac
}

expect() {  # expect WHAT ACTUAL WANT
  if [ "$2" != "$3" ]; then
    printf 'functions: %s printed\n%s\nbut C printed\n%s\n' "$1" "$2" "$3" >&2
    exit 1
  fi
}

c_export=$(run c export "$out/c.cairnfn")
want=$(grep '^predict ' <<<"$c_export")
[ "$(grep -c '^loss ' <<<"$c_export")" = 3 ] && [ -n "$want" ] || { echo "functions: C printed: $c_export" >&2; exit 1; }
echo "C trained and exported predict: $want"
expect "C loading its own file" "$(run c load "$out/c.cairnfn")" "$want"
for l in go rust java; do
  expect "$l exporting" "$(run "$l" export "$out/$l.cairnfn")" "$c_export"
  expect "$l loading C's file" "$(run "$l" load "$out/c.cairnfn")" "$want"
  expect "C loading $l's file" "$(run c load "$out/$l.cairnfn")" "$want"
  echo "$l: same losses and outputs; loads C's file, and C loads $l's"
done
echo "all four languages agree"
