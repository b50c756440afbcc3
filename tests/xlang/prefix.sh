# Sourced by the cross-language scripts (after their `bazel build`, with $out a temporary directory):
# installs Cairn into a fixed prefix outside the checkout and points pkg-config at it, which is how
# Go (#cgo pkg-config: cairn) and Rust (cairn-sys) find libcairn, as in bindings/test_go. The path
# is fixed because Go's build cache does not see pkg-config's output change; CGO_CPPFLAGS names the
# prefix so packages built against another one are not reused.
xlang_prefix="${XDG_CACHE_HOME:-$HOME/.cache}/cairn/xlang-prefix"
rm -rf "$xlang_prefix"
tools/install --prefix "$xlang_prefix" >"$out/install.log" 2>&1 || { cat "$out/install.log" >&2; exit 1; }
unset CAIRN_LIB_DIR CAIRN_LIBRARY_PATH
export PKG_CONFIG_PATH="$xlang_prefix/lib/pkgconfig" CGO_CPPFLAGS="-I$xlang_prefix/include"
