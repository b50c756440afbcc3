#!/usr/bin/env bash
# tools/install into a prefix, then checks what landed: the files and links of the install contract
# (README "Install"), SONAME and CAIRN_1/CAIRN_1.1/CAIRN_1.2/CAIRN_1.3 symbol versions, the version in file names, cairn.pc and the
# CMake package, that nothing refers back into the checkout, and that installing again over the
# same prefix leaves the same result.
# Usage: tests/install/install_test.sh [PREFIX]
#   PREFIX given: install there and keep it (tools/test shares it with the later install suites
#   through CAIRN_TEST_PREFIX); otherwise a temporary prefix, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

if [ $# -ge 1 ]; then
  prefix="$1"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  prefix="$tmp/prefix"
fi

fail() { echo "install_test: $*" >&2; exit 1; }

# Wrong usage is refused with a hint; --help explains the command.
grep -q -- '--prefix DIR' <<< "$(tools/install --help)" || fail "--help does not document --prefix"
if tools/install --bogus >/dev/null 2>&1; then fail "tools/install accepted --bogus"; fi

header=capi/include/cairn/cairn.h
want_version=$(awk '/^#define CAIRN_VERSION_(MAJOR|MINOR|PATCH) / {v = v (v == "" ? "" : ".") $3} END {print v}' "$header")
[[ "$want_version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || fail "no CAIRN_VERSION_MAJOR/MINOR/PATCH in $header"

t0=$(date +%s.%N)
tools/install --prefix "$prefix" > "${TMPDIR:-/tmp}/install_test.$$.log" 2>&1 || { cat "${TMPDIR:-/tmp}/install_test.$$.log" >&2; fail "tools/install failed"; }
t1=$(date +%s.%N)
tail -n 1 "${TMPDIR:-/tmp}/install_test.$$.log"
rm -f "${TMPDIR:-/tmp}/install_test.$$.log"
prefix=$(cd "$prefix" && pwd -P)

check_prefix() {
  local lib="$prefix/lib" real="libcairn.so.$want_version"
  for h in capi/include/cairn/*.h; do
    cmp -s "$h" "$prefix/include/cairn/$(basename "$h")" || fail "include/cairn/$(basename "$h") differs from $h"
  done
  [ -f "$lib/$real" ] && [ ! -L "$lib/$real" ] || fail "lib/$real is missing or not a regular file"
  [ "$(readlink "$lib/libcairn.so.1")" = "$real" ] || fail "lib/libcairn.so.1 does not link to $real"
  [ "$(readlink "$lib/libcairn.so")" = "libcairn.so.1" ] || fail "lib/libcairn.so does not link to libcairn.so.1"

  local soname
  soname=$(readelf -d "$lib/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = libcairn.so.1 ] || fail "SONAME is '$soname'"
  # (grep reads captured text: grep -q on a pipe would stop the writer early, failing under pipefail)
  local dyn
  dyn=$(readelf -d "$lib/$real")
  grep -qE 'R(UN)?PATH' <<< "$dyn" && fail "libcairn has an rpath: $(grep -E 'R(UN)?PATH' <<< "$dyn")"
  grep -q 'NEEDED.*libmpi' <<< "$dyn" && fail "libcairn links libmpi (only the plugin may)"
  # The MPI plugin beside it (tools/setup installs Open MPI, so it is there): it alone links libmpi.
  [ -f "$lib/libcairn_mpi.so" ] || fail "lib/libcairn_mpi.so (the MPI plugin) is missing"
  grep -q 'NEEDED.*libmpi' <<< "$(readelf -d "$lib/libcairn_mpi.so")" || fail "libcairn_mpi.so does not link libmpi"
  grep -q 'Name: CAIRN_1' <<< "$(readelf -V "$lib/$real")" || fail "no version definition CAIRN_1"
  grep -q 'Name: CAIRN_1.1' <<< "$(readelf -V "$lib/$real")" || fail "no version definition CAIRN_1.1"
  grep -q 'Name: CAIRN_1.2' <<< "$(readelf -V "$lib/$real")" || fail "no version definition CAIRN_1.2"
  grep -q 'Name: CAIRN_1.3' <<< "$(readelf -V "$lib/$real")" || fail "no version definition CAIRN_1.3"
  # Every export is versioned: ABI 1.0's functions CAIRN_1, 1.1's CAIRN_1.1 and 1.2's CAIRN_1.2 (the
  # lists frozen in capi/cairn.lds), the ones added later CAIRN_1.3 (tests/capi/exported_symbols_test.sh checks which
  # is which).
  local exports outside
  exports=$(objdump -T "$lib/$real" | awk '$NF ~ /^cairn_/' | grep -c . || true)
  outside=$(objdump -T "$lib/$real" | awk '$NF ~ /^cairn_/ && $(NF-1) != "CAIRN_1" && $(NF-1) != "CAIRN_1.1" && $(NF-1) != "CAIRN_1.2" && $(NF-1) != "CAIRN_1.3"' | grep -c . || true)
  [ "$exports" -gt 100 ] && [ "$outside" -eq 0 ] || fail "$exports cairn_* exports, $outside outside CAIRN_1, CAIRN_1.1, CAIRN_1.2 and CAIRN_1.3"

  export PKG_CONFIG_PATH="$lib/pkgconfig"
  [ "$(pkg-config --modversion cairn)" = "$want_version" ] || fail "pkg-config --modversion: $(pkg-config --modversion cairn)"
  [ "$(pkg-config --cflags cairn | xargs)" = "-I$prefix/include" ] || fail "pkg-config --cflags: $(pkg-config --cflags cairn)"
  [ "$(pkg-config --libs cairn | xargs)" = "-L$lib -Wl,-rpath,$lib -lcairn" ] || fail "pkg-config --libs: $(pkg-config --libs cairn)"

  grep -q 'add_library(Cairn::cairn SHARED IMPORTED)' "$lib/cmake/Cairn/CairnConfig.cmake" || fail "CairnConfig.cmake lacks Cairn::cairn"
  grep -q "IMPORTED_SONAME \"libcairn.so.1\"" "$lib/cmake/Cairn/CairnConfig.cmake" || fail "CairnConfig.cmake lacks IMPORTED_SONAME"
  grep -q "set(PACKAGE_VERSION \"$want_version\")" "$lib/cmake/Cairn/CairnConfigVersion.cmake" || fail "CairnConfigVersion.cmake has another version"
  # Relocatable: the CMake package names no absolute prefix.
  grep -q "$prefix" "$lib/cmake/Cairn/"*.cmake && fail "the CMake package hard-codes $prefix"

  # Nothing installed refers back into the checkout or Bazel's output tree (absolute paths, a
  # runpath into _solib_k8, or a bazel-out/... name, which gold records as the base version of a
  # library linked without a SONAME).
  local f hits
  while IFS= read -r -d '' f; do
    hits=$(strings -a "$f" | grep -E -e "$root/" -e "$root\$" -e '_solib_k8|/\.cache/bazel|bazel-out/' | head -3 || true)
    [ -z "$hits" ] || fail "$f refers to the checkout or Bazel: $hits"
  done < <(find "$prefix" -type f -print0)
  [ -z "$(find "$prefix" -name '*.tmp.*')" ] || fail "temporary files left: $(find "$prefix" -name '*.tmp.*')"
  return 0
}

check_prefix
listing() { (cd "$prefix" && find . \( -type f -o -type l \) -printf '%p %s %l\n' | sort); }
first=$(listing)

# Installing again over the same prefix gives the same files and links.
t2=$(date +%s.%N)
tools/install --prefix "$prefix" >/dev/null 2>&1 || fail "second tools/install over $prefix failed"
t3=$(date +%s.%N)
check_prefix
[ "$(listing)" = "$first" ] || fail "the second install changed the prefix: $(diff <(echo "$first") <(listing) | head -5)"

printf 'install_test: %s OK (%s files, %s; tools/install %.1fs, again %.1fs)\n' "$prefix" \
  "$(echo "$first" | grep -c .)" "$(du -sh "$prefix" | cut -f1)" \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t3 - $t2" | bc)"
