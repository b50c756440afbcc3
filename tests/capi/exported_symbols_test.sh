#!/usr/bin/env bash
# libcairn.so must export cairn_* symbols and nothing else, and carry SONAME libcairn.so.1. Every
# function of ABI 1.0 (the names capi/cairn.lds lists in node CAIRN_1) is exported as CAIRN_1, every
# one of 1.1 (node CAIRN_1.1) as CAIRN_1.1, of 1.2 as CAIRN_1.2, every later cairn_* symbol as CAIRN_1.3, and every export is a function the header
# declares (an internal symbol that happens to start with cairn_ would otherwise leak into the ABI).
set -euo pipefail
lib="$1"
# nm shows versioned names as name@@VERSION; compare the names alone.
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {sub(/@.*/, "", $3); print $3}')
count=$(printf '%s\n' "$syms" | grep -c . || true)
bad=$(printf '%s\n' "$syms" | grep -v '^cairn_' || true)
if [ -n "$bad" ]; then
  echo "non-cairn symbols exported by $lib:" >&2
  printf '%s\n' "$bad" >&2
  exit 1
fi
header="${3:-$(dirname "$lib")/../../capi/include/cairn/cairn.h}"
declared=$(grep -oE '\bcairn_[a-z0-9_]+\(' "$header" | tr -d '(' | sort -u)
undeclared=$(comm -23 <(printf '%s\n' "$syms" | sort -u) <(printf '%s\n' "$declared"))
if [ -n "$undeclared" ]; then
  echo "exported by $lib but not declared in $header:" >&2
  printf '%s\n' "$undeclared" >&2
  exit 1
fi
for required in cairn_abi_version cairn_version cairn_status_free cairn_context_create cairn_tensor_create cairn_op_run; do
  printf '%s\n' "$syms" | grep -x "$required" >/dev/null || { echo "missing export: $required" >&2; exit 1; }
done

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libcairn.so.1" ] || { echo "SONAME of $lib is '$soname', want libcairn.so.1" >&2; exit 1; }

# The frozen lists: the names in node CAIRN_1 (1.0, before "local:"), CAIRN_1.1 and CAIRN_1.2 of the
# version script; every other cairn_* symbol is in the newest node, CAIRN_1.3.
lds="${2:-$(dirname "$lib")/../../capi/cairn.lds}"
node_names() { sed -n "/^$1 {/,/^}/p" "$lds" | sed -n 's/^ *\(cairn_[a-z0-9_]*\);$/\1/p' | sort; }
v10=$(node_names 'CAIRN_1')
v11=$(node_names 'CAIRN_1\.1')
v12=$(node_names 'CAIRN_1\.2')
[ "$(printf '%s\n' "$v10" | grep -c .)" -ge 183 ] || { echo "cannot read the 1.0 list from $lds" >&2; exit 1; }
[ "$(printf '%s\n' "$v11" | grep -c .)" -ge 125 ] || { echo "cannot read the 1.1 list from $lds" >&2; exit 1; }
[ "$(printf '%s\n' "$v12" | grep -c .)" -ge 43 ] || { echo "cannot read the 1.2 list from $lds" >&2; exit 1; }
# objdump -T: "ADDR FLAGS SECTION SIZE VERSION NAME" for each defined dynamic symbol.
wrong=$(objdump -T "$lib" | awk '$NF ~ /^cairn_/ {print $(NF-1), $NF}' | while read -r version name; do
  if printf '%s\n' "$v10" | grep -x "$name" >/dev/null; then want=CAIRN_1
  elif printf '%s\n' "$v11" | grep -x "$name" >/dev/null; then want=CAIRN_1.1
  elif printf '%s\n' "$v12" | grep -x "$name" >/dev/null; then want=CAIRN_1.2
  else want=CAIRN_1.3; fi
  [ "$version" = "$want" ] || echo "$name is $version, want $want"
done)
if [ -n "$wrong" ]; then
  echo "symbol versions in $lib:" >&2
  printf '%s\n' "$wrong" >&2
  exit 1
fi
missing=$(comm -23 <(printf '%s\n%s\n%s\n' "$v10" "$v11" "$v12" | sort) <(printf '%s\n' "$syms" | sort))
[ -z "$missing" ] || { echo "ABI 1.0/1.1/1.2 functions missing from $lib: $missing" >&2; exit 1; }
versioned=$(objdump -T "$lib" | awk '$NF ~ /^cairn_/ && ($(NF-1) == "CAIRN_1" || $(NF-1) == "CAIRN_1.1" || $(NF-1) == "CAIRN_1.2" || $(NF-1) == "CAIRN_1.3")' | grep -c . || true)
[ "$versioned" -eq "$count" ] || { echo "$versioned versioned symbols but $count exports" >&2; exit 1; }
echo "$count exported symbols, all cairn_*: $(printf '%s\n' "$v10" | grep -c .) of ABI 1.0 in CAIRN_1, $(printf '%s\n' "$v11" | grep -c .) of 1.1 in CAIRN_1.1, $(printf '%s\n' "$v12" | grep -c .) of 1.2 in CAIRN_1.2, the rest in CAIRN_1.3; SONAME $soname"
