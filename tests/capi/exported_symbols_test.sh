#!/usr/bin/env bash
# libcairn.so must export cairn_* symbols and nothing else.
set -euo pipefail
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}')
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
echo "$count exported symbols, all cairn_*"
