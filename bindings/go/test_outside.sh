#!/usr/bin/env bash
# bindings/go/test_outside.sh: follows README.md's "Use it from your own project" outside the
# repository. Installs Cairn with tools/install into a temporary prefix (or uses
# $CAIRN_TEST_PREFIX, already installed), creates a fresh module in a temporary folder whose go.mod
# replaces cairn.dev/cairn with the prefix's copy, builds the README's first example with
# -trimpath (GOPROXY=off: nothing is fetched; a fresh GOCACHE: the build starts clean), runs it,
# checks its output, and checks that the binary's run path is the prefix's lib folder and that it
# holds no path into this checkout. Prints the seconds of each phase. Exit 0 when all holds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
if ! command -v go >/dev/null && [ -x /usr/local/go/bin/go ]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
command -v go >/dev/null || { echo "test_outside: Go is not installed (need go >= 1.23)" >&2; exit 1; }

now() { date +%s.%N; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

t0=$(now)
. "$root/tests/install/prefix.sh" # sets prefix ($CAIRN_TEST_PREFIX or a new install) and tmp
echo "== prefix $prefix"
t1=$(now)
[ -f "$prefix/share/cairn/go/cairn/go.mod" ] || { echo "test_outside: $prefix has no Go module (bindings/go/install.sh)" >&2; exit 1; }

# What the README tells a user to do, in a folder of its own. GOFLAGS=-mod=mod lets go build
# record the requirement; GOPROXY=off proves nothing comes from the network; GOCACHE is fresh so
# the build time is a clean machine's (and no package built against another prefix is reused).
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local \
  CGO_ENABLED=1 GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath"
app="$tmp/hello"
mkdir -p "$app"
cd "$app"
go mod init example.com/hello >/dev/null 2>&1
go mod edit -replace "cairn.dev/cairn=$prefix/share/cairn/go/cairn"
cat >main.go <<'GO'
package main

import (
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func main() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	x, err := cairn.NewTensor(ctx, []int64{2, 2}, []float32{1, 2, 3, 4})
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	z, err := ops.MatMul(ctx, x, x, ops.MatMulTransposeA(true))
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	values, err := cairn.Read[float32](z)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cairn.Version(), z.Shape(), values)
}
GO
echo "== go mod tidy && go build -trimpath in $app"
go mod tidy 2>"$tmp/tidy.log" || { cat "$tmp/tidy.log" >&2; exit 1; }
go build -trimpath -o hello .
t2=$(now)
echo "== ./hello"
out=$(./hello)
t3=$(now)
echo "$out"
# x^T x for x = [[1 2] [3 4]].
case "$out" in
  *" [2 2] [10 14 14 20]") ;;
  *) echo "test_outside: unexpected output: $out" >&2; exit 1 ;;
esac

needed=$(readelf -d hello | grep -F 'libcairn' || true)
case "$needed" in
  *"[libcairn.so.1]"*) ;;
  *) echo "test_outside: the binary does not ask for libcairn.so.1: ${needed:-none}" >&2; exit 1 ;;
esac
runpath=$(readelf -d hello | grep -E 'RPATH|RUNPATH' || true)
case "$runpath" in
  *"[$prefix/lib]"*) ;;
  *) echo "test_outside: run path is not $prefix/lib: ${runpath:-none}" >&2; exit 1 ;;
esac
if strings hello | grep -F "$root"; then
  echo "test_outside: the binary holds a path into the checkout ($root)" >&2
  exit 1
fi
if grep -rF "$root" go.mod; then
  echo "test_outside: go.mod points into the checkout" >&2
  exit 1
fi
echo "ok: runs from $prefix/lib, no path into $root"
echo "seconds: install $(seconds "$t0" "$t1"), build $(seconds "$t1" "$t2"), first run $(seconds "$t2" "$t3")"
