#!/usr/bin/env bash
# bindings/rust/install.sh PREFIX: installs the sources of the Rust crates `cairn` and `cairn-sys`
# into PREFIX/share/cairn/rust/{cairn,cairn-sys} (tools/install calls it), without build outputs,
# so a project outside the source tree can depend on them by path:
#     cairn = { path = "PREFIX/share/cairn/rust/cairn" }
# The crates' manifests inherit version, edition and rust-version from this workspace; the
# installed copies get the values written out, so each crate stands alone.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 PREFIX" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
dest="$1/share/cairn/rust"

workspace_value() { # the workspace's `key = "value"`, e.g. version
  sed -n "/^\[workspace.package\]/,/^\[/s/^$1 = \"\(.*\)\"$/\1/p" "$here/Cargo.toml"
}
version=$(workspace_value version)
edition=$(workspace_value edition)
rust_version=$(workspace_value rust-version)
[ -n "$version" ] && [ -n "$edition" ] && [ -n "$rust_version" ] ||
  { echo "install.sh: cannot read [workspace.package] of $here/Cargo.toml" >&2; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
for crate in cairn-sys cairn; do
  mkdir -p "$dest/$crate"
  (cd "$here/$crate" && tar --exclude=./target -cf - .) | (cd "$dest/$crate" && tar -xf -)
  sed -i -e "s/^version.workspace = true$/version = \"$version\"/" \
    -e "s/^edition.workspace = true$/edition = \"$edition\"/" \
    -e "s/^rust-version.workspace = true$/rust-version = \"$rust_version\"/" "$dest/$crate/Cargo.toml"
  if grep -q 'workspace = true' "$dest/$crate/Cargo.toml"; then
    echo "install.sh: $crate/Cargo.toml still inherits from the workspace" >&2
    exit 1
  fi
done
# cairn's doc tests include the binding's README (../../README.md from cairn/src).
cp "$here/README.md" "$dest/README.md"
chmod -R a+rX,go-w "$dest"
echo "installed the Rust crates into $dest"
