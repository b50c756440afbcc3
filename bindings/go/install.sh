#!/usr/bin/env bash
# bindings/go/install.sh PREFIX: installs the Go module cairn.dev/cairn (packages cairn and
# cairn/ops, their sources without tests, go.mod and README.md) into PREFIX/share/cairn/go/cairn,
# so that a user's go.mod can say `replace cairn.dev/cairn => PREFIX/share/cairn/go/cairn` and
# point into the prefix rather than into a checkout. tools/install calls it after the library;
# it replaces what an earlier install put there.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bindings/go/install.sh PREFIX" >&2; exit 2; }
prefix=$1
src=$(cd "$(dirname "$0")" && pwd -P)
dest="$prefix/share/cairn/go/cairn"

rm -rf "$dest"
mkdir -p "$dest/ops"
install -m 0644 "$src/go.mod" "$src/README.md" "$dest/"
for pkg in . ops; do
  for f in "$src/$pkg"/*.go; do
    case "$f" in *_test.go) continue ;; esac
    install -m 0644 "$f" "$dest/$pkg/"
  done
done
