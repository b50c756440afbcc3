#!/usr/bin/env bash
# Cross-language checkpoints (tests/xlang/SPEC.md): C, Go, Rust and Java each save the same state;
# the four files must be byte-identical, and every language restores every other language's file.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export PATH="/usr/local/go/bin:$HOME/.cargo/bin:$PATH" GOTOOLCHAIN=local
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

bazel build //tests/xlang:xlang_c //capi:cairn //bindings/java:libcairn_jni.so >/dev/null 2>&1
. tests/xlang/prefix.sh
(cd bindings/rust && cargo build -q --example xlang)
(cd bindings/java && mvn -B -q compile >/dev/null)

run() {  # run LANG ACTION PATH
  case "$1" in
    c) "$root/bazel-bin/tests/xlang/xlang_c" "$2" "$3" ;;
    go) (cd "$root/bindings/go" && go run ./cmd/xlang "$2" "$3") ;;
    rust) (cd "$root/bindings/rust" && cargo run -q --example xlang -- "$2" "$3") ;;
    java) (cd "$root/bindings/java" && java -cp target/classes \
             -Dcairn.jni.path="$root/bazel-bin/bindings/java/libcairn_jni.so" xlang/Xlang.java "$2" "$3") ;;
  esac
}

langs=(c go rust java)
for l in "${langs[@]}"; do
  run "$l" save "$out/$l.ckpt"
  echo "saved $l: $(stat -c %s "$out/$l.ckpt") bytes"
done
for l in "${langs[@]}"; do
  cmp "$out/c.ckpt" "$out/$l.ckpt" || { echo "xlang: $l's checkpoint differs from C's" >&2; exit 1; }
done
echo "all four checkpoints are byte-identical"
for reader in "${langs[@]}"; do
  for writer in "${langs[@]}"; do
    [ "$reader" = "$writer" ] && continue
    msg=$(run "$reader" restore "$out/$writer.ckpt")
    [ "$msg" = "xlang restore ok" ] || { echo "xlang: $reader could not restore $writer's checkpoint: $msg" >&2; exit 1; }
  done
  echo "$reader restores every other language's checkpoint"
done
