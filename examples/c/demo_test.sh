#!/usr/bin/env bash
# The demo and the README example run and print what they should.
set -euo pipefail
demo="$1" readme_example="$2" readme="$3" example_src="$4"
out=$("$demo")
echo "$out"
grep -q "predicted classes: 0 1 2 0" <<<"$out"
grep -q "error demo: Add: incompatible shapes \[4,3\] and \[4\]" <<<"$out"
[ "$("$readme_example")" = "11 22 33 / 14 25 36" ]
# README's C example is this file, verbatim.
diff <(sed -n '/^```c$/,/^```$/p' "$readme" | sed '1d;$d') "$example_src"
