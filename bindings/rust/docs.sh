#!/usr/bin/env bash
# bindings/rust/docs.sh OUTDIR: the API reference of the crates `cairn` and `cairn-sys` (cargo doc),
# copied into OUTDIR; OUTDIR/index.html links OUTDIR/cairn/index.html and OUTDIR/cairn_sys/index.html.
# Fails on any rustdoc warning (a broken link, an unclosed tag) and, through #![deny(missing_docs)]
# in both crates, on any undocumented public item. Built with the load-dynamic feature, so no installed library is
# needed; the API is the same in both builds.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")"
command -v cargo >/dev/null || { echo "docs.sh: cargo not found" >&2; exit 1; }
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --features cairn/load-dynamic --offline
cp -R target/doc/. "$out/"
cat >"$out/index.html" <<'HTML'
<!doctype html>
<meta charset="utf-8">
<title>Cairn for Rust</title>
<h1>Cairn for Rust</h1>
<ul>
  <li><a href="cairn/index.html">cairn</a>: the safe binding</li>
  <li><a href="cairn_sys/index.html">cairn-sys</a>: the raw C API, and how the library is found and loaded</li>
</ul>
HTML
echo "docs.sh: the Rust API reference is in $out/index.html"
