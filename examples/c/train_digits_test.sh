#!/usr/bin/env bash
# The training demo: reaches >= 0.95 test accuracy in its default 20 epochs, keeps 3 checkpoints,
# and resumes bit-exactly: 3 epochs then 3 more give the same checkpoint as 6 uninterrupted.
set -euo pipefail
demo="$1" data="$2"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
run() { "$demo" --data "$data" "$@"; }

full=$(run --dir "$tmp/full")
echo "$full"
acc=$(sed -n 's/^test accuracy: //p' <<<"$full")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.95) }' || { echo "test accuracy $acc is below 0.95" >&2; exit 1; }
[ "$(cd "$tmp/full" && ls ckpt-* | sort -V | tr '\n' ' ')" = "ckpt-18 ckpt-19 ckpt-20 " ] ||
  { echo "expected the manager to keep ckpt-18..20, found: $(ls "$tmp/full")" >&2; exit 1; }

again=$(run --dir "$tmp/full")
grep -q "^resumed from $tmp/full/ckpt-20 after epoch 20$" <<<"$again"
[ "$(tail -1 <<<"$again")" = "test accuracy: $acc" ]

run --dir "$tmp/split" --epochs 3 >/dev/null
resumed=$(run --dir "$tmp/split" --epochs 6)
grep -q "^resumed from $tmp/split/ckpt-3 after epoch 3$" <<<"$resumed"
straight=$(run --dir "$tmp/straight" --epochs 6)
cmp "$tmp/split/ckpt-6" "$tmp/straight/ckpt-6"
[ "$(tail -1 <<<"$resumed")" = "$(tail -1 <<<"$straight")" ]
# The epochs after the resume print what the uninterrupted run printed (examples/s aside).
diff <(grep '^epoch [ 0-9]*[456]/6' <<<"$resumed" | sed 's/  [0-9]* examples\/s//') \
     <(grep '^epoch [ 0-9]*[456]/6' <<<"$straight" | sed 's/  [0-9]* examples\/s//')
echo "resume after 3 epochs is bit-exact with 6 uninterrupted epochs"
