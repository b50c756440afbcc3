# Sourced by the tests in tests/install and bindings/<lang>/test_outside.sh: sets `prefix` to an installed Cairn prefix and `tmp` to a
# fresh temporary directory (removed on exit). The prefix is $CAIRN_TEST_PREFIX when set (tools/test
# installs once and shares it: see tools/test), else a new tools/install into $tmp/prefix.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${CAIRN_TEST_PREFIX:-}" ]; then
  prefix="$CAIRN_TEST_PREFIX"
  [ -f "$prefix/lib/pkgconfig/cairn.pc" ] || { echo "$0: CAIRN_TEST_PREFIX=$prefix holds no Cairn install" >&2; exit 1; }
else
  prefix="$tmp/prefix"
  "$(dirname "${BASH_SOURCE[0]}")/../../tools/install" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; exit 1; }
fi
