#!/usr/bin/env bash
# bindings/go/docs.sh OUTDIR: the Go binding's API reference. First checks that every exported
# name of packages cairn.dev/cairn and cairn.dev/cairn/ops has a doc comment starting with the
# name (internal/doccheck; exits 1 and lists them otherwise), then writes `go doc -all` of each
# package into OUTDIR/go/cairn.txt and OUTDIR/go/cairn-ops.txt. Needs no library or pkg-config.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bindings/go/docs.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1/go"
out=$(cd "$1/go" && pwd -P)
cd "$(dirname "$0")"
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off

go run ./internal/doccheck . ops
go doc -all . >"$out/cairn.txt"
go doc -all ./ops >"$out/cairn-ops.txt"
echo "docs.sh: $(grep -c '^func ' "$out/cairn.txt") + $(grep -c '^func ' "$out/cairn-ops.txt") functions documented in $out"
