#!/usr/bin/env bash
# The fit demo: reaches >= 0.97 test accuracy in its default 30 epochs, the fresh model restored
# from the last checkpoint predicts as well, the manager keeps 3 checkpoints, and a run killed with
# SIGKILL mid-epoch ends, once restarted, with the uninterrupted run's weights, bit for bit.
set -euo pipefail
demo="$1" data="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
run() { "$demo" --data "$data" "$@"; }

full=$(run --dir "$tmp/full")
echo "$full" | tail -4
acc=$(sed -n 's/^test accuracy: //p' <<<"$full")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.97) }' || { echo "test accuracy $acc is below 0.97" >&2; exit 1; }
grep -q "^restored model accuracy: $acc$" <<<"$full" || { echo "the restored model predicts differently" >&2; exit 1; }
[ "$(cd "$tmp/full/checkpoints" && ls ckpt-* | sort -V | tr '\n' ' ')" = "ckpt-28 ckpt-29 ckpt-30 " ] ||
  { echo "expected ckpt-28, 29 and 30, found: $(ls "$tmp/full/checkpoints")" >&2; exit 1; }
[ ! -e "$tmp/full/backup" ] || { echo "the backup was not removed after a normal end" >&2; exit 1; }

# 45 steps an epoch; killed after step 97 (epoch 3; the last backup was at step 80), then restarted.
rc=0
run --dir "$tmp/killed" --epochs 6 --kill-after 97 >"$tmp/killed.out" 2>&1 || rc=$?
[ "$rc" = 137 ] || { echo "--kill-after 97 exited with $rc, expected 137 (SIGKILL)" >&2; cat "$tmp/killed.out" >&2; exit 1; }
[ -e "$tmp/killed/backup/ckpt-80" ] || { echo "no backup at step 80: $(ls "$tmp/killed/backup")" >&2; exit 1; }
restarted=$(run --dir "$tmp/killed" --epochs 6)
straight=$(run --dir "$tmp/straight" --epochs 6)
[ "$(grep '^weights' <<<"$restarted")" = "$(grep '^weights' <<<"$straight")" ] ||
  { echo "weights after the restart differ from an uninterrupted run:" >&2; diff <(echo "$restarted") <(echo "$straight") >&2; exit 1; }
# The restarted run continued in epoch 2 (1-based; step 80 is its 36th batch) and ran epochs 2 to 6.
[ "$(grep '^Epoch ' <<<"$restarted" | head -1)" = "Epoch 2/6" ] && [ "$(grep -c '^Epoch ' <<<"$restarted")" = 5 ] ||
  { echo "expected epochs 2 to 6 after the restart" >&2; echo "$restarted" >&2; exit 1; }
echo "a run killed mid-epoch continues from its backup and ends with the uninterrupted run's weights"
