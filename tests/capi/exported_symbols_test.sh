#!/usr/bin/env bash
# libcairn.so must export cairn_* symbols and nothing else, every one in symbol version CAIRN_1
# (capi/cairn.lds), and carry SONAME libcairn.so.1.
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
for required in cairn_abi_version cairn_version cairn_status_free cairn_context_create cairn_tensor_create cairn_op_run; do
  printf '%s\n' "$syms" | grep -qx "$required" || { echo "missing export: $required" >&2; exit 1; }
done

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libcairn.so.1" ] || { echo "SONAME of $lib is '$soname', want libcairn.so.1" >&2; exit 1; }

# objdump -T: "ADDR FLAGS SECTION SIZE VERSION NAME" for each defined dynamic symbol.
unversioned=$(objdump -T "$lib" | awk '$NF ~ /^cairn_/ && $(NF-1) != "CAIRN_1" {print $(NF-1), $NF}')
if [ -n "$unversioned" ]; then
  echo "cairn_* symbols outside version CAIRN_1 in $lib:" >&2
  printf '%s\n' "$unversioned" >&2
  exit 1
fi
versioned=$(objdump -T "$lib" | awk '$NF ~ /^cairn_/ && $(NF-1) == "CAIRN_1"' | grep -c . || true)
[ "$versioned" -eq "$count" ] || { echo "$versioned CAIRN_1 symbols but $count exports" >&2; exit 1; }
echo "$count exported symbols, all cairn_*, all CAIRN_1; SONAME $soname"
