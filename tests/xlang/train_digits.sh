#!/usr/bin/env bash
# The training demo in C, Go, Rust and Java (examples/TRAINING_DEMO.md): with the same data and
# epochs they print the same lines, apart from the examples/s figures. Each then resumes from its
# own checkpoints for one more epoch, and the four resumed runs agree too. The first runs also write
# TensorBoard summaries (--logdir), which the real TensorBoard reads back: the printed epoch metrics
# and the graph of the compiled training step. Last, each is killed mid-epoch (--kill-after) and
# run again: it resumes from its last checkpoint (pipeline position included) and ends with the
# same weights, bit for bit, as the uninterrupted run.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
export PATH="/usr/local/go/bin:$HOME/.cargo/bin:$PATH" GOTOOLCHAIN=local
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
data="$root/examples/data/digits.csv"

bazel build //examples/c:train_digits //capi:cairn //bindings/java:libcairn_jni.so >/dev/null 2>&1
. tests/xlang/prefix.sh
(cd bindings/rust && cargo build -q --example train_digits)
# A built binary, not `go run`, which reports any non-zero exit of the program as its own status 1.
(cd bindings/go && go build -o "$out/train_digits_go" ./cmd/train_digits)
(cd bindings/java && mvn -B -q compile >/dev/null)

run() {  # run LANG EPOCHS [ARGS...]; checkpoints in $out/ckpt-LANG, or $ckpt_suffix appended
  local args=(--data "$data" --dir "$out/ckpt-$1${ckpt_suffix:-}" --epochs "$2" "${@:3}")
  case "$1" in
    c) "$root/bazel-bin/examples/c/train_digits" "${args[@]}" ;;
    go) (cd "$root/bindings/go" && "$out/train_digits_go" "${args[@]}") ;;
    rust) (cd "$root/bindings/rust" && cargo run -q --example train_digits -- "${args[@]}") ;;
    java) (cd "$root/bindings/java" && java -cp target/classes \
             -Dcairn.jni.path="$root/bazel-bin/bindings/java/libcairn_jni.so" example/TrainDigits.java "${args[@]}") ;;
  esac
}
# The lines every language must print identically: examples/s and checkpoint paths vary.
normalize() { sed -e 's/  [0-9]* examples\/s$//' -e "s|$out/ckpt-[a-z-]*|DIR|"; }

langs=(c go rust java)
for epochs in 3 4; do
  for l in "${langs[@]}"; do
    if [ "$epochs" = 3 ]; then run "$l" "$epochs" --logdir "$out/logs-$l"; else run "$l" "$epochs"; fi |
      normalize >"$out/$l.$epochs.txt"
  done
  for l in "${langs[@]}"; do
    diff "$out/c.$epochs.txt" "$out/$l.$epochs.txt" >&2 || { echo "train_digits: $l differs from C ($epochs epochs)" >&2; exit 1; }
  done
done
# 1438 training samples in batches of 32: 45 steps per epoch.
grep -q "^resumed from DIR/ckpt-135 after step 135$" "$out/c.4.txt"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/venv"
for l in "${langs[@]}"; do
  "$venv/bin/python" tests/xlang/check_demo_logdir.py "$out/$l.3.txt" "$out/logs-$l" ||
    { echo "train_digits: $l's --logdir output is wrong" >&2; exit 1; }
done

# A crash at step 52 (mid-epoch 2; saves every 7 steps and at step 45, the end of epoch 1, so the
# last save was at step 49), then a fresh start: same weights.
ckpt_suffix=-killed
for l in "${langs[@]}"; do
  rc=0
  run "$l" 3 --save-every 7 --kill-after 52 >/dev/null || rc=$?
  [ "$rc" = 3 ] || { echo "train_digits: $l --kill-after 52 exited with $rc, expected 3" >&2; exit 1; }
  run "$l" 3 | normalize >"$out/$l.killed.txt"
  grep -q "^resumed from DIR/ckpt-49 after step 49$" "$out/$l.killed.txt" ||
    { echo "train_digits: $l did not resume from step 49:" >&2; cat "$out/$l.killed.txt" >&2; exit 1; }
  # The resumed epochs' metrics (restored mid-epoch) and the final weights match the uninterrupted run.
  [ "$(grep -E '^epoch +[23]/|^weights' "$out/$l.killed.txt")" = "$(grep -E '^epoch +[23]/|^weights' "$out/$l.3.txt")" ] ||
    { echo "train_digits: $l killed and resumed: $(tail -1 "$out/$l.killed.txt"), uninterrupted: $(tail -1 "$out/$l.3.txt")" >&2; exit 1; }
done
unset ckpt_suffix
tail -2 "$out/c.4.txt"
echo "C, Go, Rust and Java train, save, resume and print the same lines; TensorBoard reads their summaries;"
echo "killed mid-epoch and restarted, each ends with the uninterrupted run's weights"
