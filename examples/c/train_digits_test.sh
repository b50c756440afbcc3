#!/usr/bin/env bash
# The training demo: reaches >= 0.95 test accuracy in its default 20 epochs, keeps 3 checkpoints,
# and resumes bit-exactly: 3 epochs then 3 more give the same checkpoint as 6 uninterrupted, and a
# run killed mid-epoch ends, once restarted, with the uninterrupted run's metrics and weights.
set -euo pipefail
demo="$1" data="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
run() { "$demo" --data "$data" "$@"; }
no_speed() { sed 's/  [0-9]* examples\/s//'; }

# 1438 training samples in batches of 32: 45 steps per epoch, 900 in 20 epochs; a save every 20
# steps and at the end of each epoch.
full=$(run --dir "$tmp/full")
echo "$full"
acc=$(sed -n 's/^test accuracy: //p' <<<"$full")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }' || { echo "test accuracy $acc is below 0.95" >&2; exit 1; }
[ "$(cd "$tmp/full" && ls ckpt-* | sort -V | tr '\n' ' ')" = "ckpt-860 ckpt-880 ckpt-900 " ] ||
  { echo "expected the manager to keep ckpt-860, 880 and 900, found: $(ls "$tmp/full")" >&2; exit 1; }
grep -q '^weights: [0-9a-f]\{16\}$' <<<"$full"

again=$(run --dir "$tmp/full")
grep -q "^resumed from $tmp/full/ckpt-900 after step 900$" <<<"$again"
[ "$(tail -2 <<<"$again")" = "$(tail -2 <<<"$full")" ]

run --dir "$tmp/split" --epochs 3 >/dev/null
resumed=$(run --dir "$tmp/split" --epochs 6)
grep -q "^resumed from $tmp/split/ckpt-135 after step 135$" <<<"$resumed"
straight=$(run --dir "$tmp/straight" --epochs 6)
cmp "$tmp/split/ckpt-270" "$tmp/straight/ckpt-270"
[ "$(tail -2 <<<"$resumed")" = "$(tail -2 <<<"$straight")" ]
# The epochs after the resume print what the uninterrupted run printed (examples/s aside).
diff <(grep '^epoch [ 0-9]*[456]/6' <<<"$resumed" | no_speed) <(grep '^epoch [ 0-9]*[456]/6' <<<"$straight" | no_speed)

# Killed at step 52 (epoch 2; the last save was at step 49), then restarted.
rc=0
run --dir "$tmp/killed" --epochs 6 --save-every 7 --kill-after 52 >/dev/null || rc=$?
[ "$rc" = 3 ] || { echo "--kill-after 52 exited with $rc, expected 3" >&2; exit 1; }
restarted=$(run --dir "$tmp/killed" --epochs 6)
grep -q "^resumed from $tmp/killed/ckpt-49 after step 49$" <<<"$restarted"
diff <(grep -E '^epoch +[2-6]/6|^test|^weights' <<<"$restarted" | no_speed) \
     <(grep -E '^epoch +[2-6]/6|^test|^weights' <<<"$straight" | no_speed)
echo "resume after 3 epochs, and after a kill mid-epoch, is bit-exact with 6 uninterrupted epochs"
