#!/usr/bin/env bash
# bindings/java/docs.sh OUTDIR: the javadoc of the module dev.cairn (its exported package only)
# into OUTDIR. Fails on any documentation warning (-Xdoclint:all -Werror: a public item without a
# comment, a missing @param or @return, a broken {@link}, malformed HTML). Needs JDK 17.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bindings/java/docs.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
out="$(cd "$1" && pwd)"
cd "$(dirname "$0")"
version="$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' pom.xml | head -1)"
javadoc -quiet -Xmaxwarns 100000 -Xmaxerrs 100000 -Xdoclint:all -Werror \
  --source-path src/main/java --module dev.cairn -d "$out" \
  -doctitle "Cairn $version for Java" -windowtitle "Cairn $version Java API" -notimestamp
echo "bindings/java/docs.sh: javadoc of dev.cairn in $out"
