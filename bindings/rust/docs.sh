#!/usr/bin/env bash
# bindings/rust/docs.sh OUTDIR: the API reference of the crates `cairn` and `cairn-sys` (cargo doc),
# copied into OUTDIR (OUTDIR/cairn/index.html, OUTDIR/cairn_sys/index.html). Fails on any rustdoc
# warning (a broken link, an unclosed tag) and, through #![deny(missing_docs)] in both crates, on
# any undocumented public item. Built with the load-dynamic feature, so no installed library is
# needed; the API is the same in both builds.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")"
command -v cargo >/dev/null || { echo "docs.sh: cargo not found" >&2; exit 1; }
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --features cairn/load-dynamic --offline
cp -R target/doc/. "$out/"
echo "docs.sh: the Rust API reference is in $out/cairn/index.html and $out/cairn_sys/index.html"
