#!/usr/bin/env bash
# bindings/rust/test_prefix.sh PREFIX: installs Cairn into PREFIX for the Rust tests, with
# tools/install when the source tree has it; otherwise by hand from `bazel build //capi:cairn`
# (lib/libcairn.so.1 and its links, include/cairn, lib/pkgconfig/cairn.pc, the crates' sources).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
prefix=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
if [ -x tools/install ]; then
  tools/install --prefix "$prefix" >&2
  [ -d "$prefix/share/cairn/rust/cairn" ] || bindings/rust/install.sh "$prefix" >&2
  exit 0
fi
bazel build //capi:cairn 2>&1 | tail -1 >&2
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include/cairn"
lib=bazel-bin/capi/libcairn.so.1
[ -e "$lib" ] || lib=bazel-bin/capi/libcairn.so
install -m 755 "$lib" "$prefix/lib/libcairn.so.1"
ln -sf libcairn.so.1 "$prefix/lib/libcairn.so"
install -m 644 capi/include/cairn/*.h "$prefix/include/cairn/"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' bindings/rust/Cargo.toml)
cat >"$prefix/lib/pkgconfig/cairn.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: cairn
Description: Cairn, an embeddable machine-learning runtime
Version: $version
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lcairn
Cflags: -I\${includedir}
PC
bindings/rust/install.sh "$prefix" >&2
