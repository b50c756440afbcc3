#!/usr/bin/env bash
# bindings/go/docs.sh OUTDIR: the Go binding's API reference. First checks that every exported
# name of packages cairn.dev/cairn and cairn.dev/cairn/ops has a doc comment starting with the
# name (internal/doccheck; exits 1 and lists them otherwise), then writes `go doc -all` of each
# package into OUTDIR/cairn.txt and OUTDIR/cairn-ops.txt, and OUTDIR/index.html holding both
# (tools/docs links to it). Needs no library or pkg-config.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bindings/go/docs.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd -P)
cd "$(dirname "$0")"
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
export GOTOOLCHAIN=local GOFLAGS=-mod=mod GOPROXY=off

go run ./internal/doccheck . ops
go doc -all . >"$out/cairn.txt"
go doc -all ./ops >"$out/cairn-ops.txt"

escape() { sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g' "$1"; }
{
  printf '<!doctype html>\n<meta charset="utf-8">\n<title>Cairn for Go</title>\n'
  printf '<h1>Cairn for Go</h1>\n<p><a href="#cairn">cairn.dev/cairn</a> · <a href="#ops">cairn.dev/cairn/ops</a>'
  printf ' (also as text: <a href="cairn.txt">cairn.txt</a>, <a href="cairn-ops.txt">cairn-ops.txt</a>)</p>\n'
  printf '<h2 id="cairn">cairn.dev/cairn</h2>\n<pre>\n'
  escape "$out/cairn.txt"
  printf '</pre>\n<h2 id="ops">cairn.dev/cairn/ops</h2>\n<pre>\n'
  escape "$out/cairn-ops.txt"
  printf '</pre>\n'
} >"$out/index.html"
echo "docs.sh: $(grep -c '^func ' "$out/cairn.txt") + $(grep -c '^func ' "$out/cairn-ops.txt") functions documented in $out"
