#!/usr/bin/env bash
# An old binary runs against the new library: tests/install/old_binary.c is compiled against
# capi/abi/cairn.h (the header of the committed ABI baseline, see tools/abi_check) and run against
# the libcairn.so.1 built and installed from this checkout.
# Usage: tests/install/old_binary.sh   (prefix: see tests/install/prefix.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/install/prefix.sh
[ -f capi/abi/cairn.h ] || { echo "old_binary: no capi/abi/cairn.h; make the baseline with tools/abi_check --update" >&2; exit 1; }
mkdir -p "$tmp/old/cairn"
cp capi/abi/cairn.h "$tmp/old/cairn/cairn.h"  # the old header only: no path to today's
cc -std=c99 -Wall -Wextra -Werror -I"$tmp/old" -o "$tmp/old_binary" tests/install/old_binary.c \
  -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lcairn -lm
loaded=$(ldd "$tmp/old_binary" | awk '$1 == "libcairn.so.1" {print $3}')
[ "$loaded" = "$prefix/lib/libcairn.so.1" ] || { echo "old_binary: loads libcairn.so.1 from '$loaded', not $prefix/lib" >&2; exit 1; }
"$tmp/old_binary" "$tmp"
