#!/usr/bin/env bash
# Programs built outside the repository against an installed prefix, as an adopter builds them:
#  1. examples/cmake/engine_plugin with CMake (find_package(Cairn 1), Cairn::cairn): the engine
#     dlopens the plugin, runs 100 frames of inference and checks them against a hand computation;
#  2. find_package's version rule (SameMajorVersion) and a relocated copy of the prefix;
#  3. a C program built with plain cc and `pkg-config --cflags --libs cairn`.
# None may refer into the checkout. Prints the seconds each phase took.
# Usage: tests/install/cmake_consumer.sh   (prefix: see tests/install/prefix.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
. tests/install/prefix.sh
fail() { echo "cmake_consumer: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { printf '%.1f' "$(echo "$2 - $1" | bc)"; }

# 1. The engine plugin, configured and built in a build directory outside the checkout.
cp -r examples/cmake/engine_plugin "$tmp/src"
t0=$(now)
cmake -S "$tmp/src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 ||
  { cat "$tmp/cmake.log" >&2; fail "cmake configure failed"; }
cmake --build "$tmp/build" >>"$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log" >&2; fail "cmake build failed"; }
t1=$(now)
out=$("$tmp/build/engine" "$tmp/build/npc_brain.so") || fail "the engine failed: $out"
t2=$(now)
echo "$out"
grep -q '^engine: 100 frames OK: max |plugin - reference| = ' <<< "$out" || fail "no result line from the engine"
dyn=$(readelf -d "$tmp/build/npc_brain.so")
grep -q 'NEEDED.*\[libcairn.so.1\]' <<< "$dyn" || fail "the plugin does not need libcairn.so.1: $dyn"
grep -q "RUNPATH.*\[$prefix/lib\]" <<< "$dyn" || fail "the plugin's runpath is not $prefix/lib: $(grep PATH <<< "$dyn")"

# 2. find_package(Cairn VERSION): same major and not newer than installed is found; else refused.
mkdir -p "$tmp/ver"
cat > "$tmp/ver/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(ver LANGUAGES NONE)
find_package(Cairn ${WANT} REQUIRED)
get_target_property(loc Cairn::cairn IMPORTED_LOCATION)
message(STATUS "Cairn ${Cairn_VERSION} at ${loc}")
CMAKE
find_version() {  # find_version PREFIX WANT: prints "Cairn V at LOCATION" or fails
  rm -rf "$tmp/ver/build"
  cmake -S "$tmp/ver" -B "$tmp/ver/build" -DCMAKE_PREFIX_PATH="$1" -DWANT="$2" 2>&1 | sed -n 's/^-- Cairn /Cairn /p'
  [ "${PIPESTATUS[0]}" -eq 0 ]
}
installed=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion cairn)
major=${installed%%.*}
find_version "$prefix" "$major" >/dev/null || fail "find_package(Cairn $major) failed"
find_version "$prefix" "$installed" >/dev/null || fail "find_package(Cairn $installed) failed"
if find_version "$prefix" "$((major + 1))" >/dev/null 2>&1; then fail "find_package(Cairn $((major + 1))) accepted $installed"; fi
if find_version "$prefix" "$major.999" >/dev/null 2>&1; then fail "find_package(Cairn $major.999) accepted $installed"; fi
cp -a "$prefix" "$tmp/moved"
found=$(find_version "$tmp/moved" "$major") || fail "find_package in a moved copy of the prefix failed"
[ "$found" = "Cairn $installed at $tmp/moved/lib/libcairn.so.$installed" ] || fail "moved prefix: $found"
rm -rf "$tmp/moved"

# 3. Plain cc with pkg-config; runs with no LD_LIBRARY_PATH (cairn.pc's rpath).
t3=$(now)
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
cc -std=c99 -Wall -Werror -o "$tmp/pc_app" tests/install/pkgconfig_consumer.c \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs cairn)
pc_out=$(env -u LD_LIBRARY_PATH "$tmp/pc_app") || fail "the pkg-config program failed: $pc_out"
t4=$(now)
echo "$pc_out"
grep -qx "cairn $installed (ABI $major): \[1 2 3\] + \[10 20 30\] = \[11 22 33\]" <<< "$pc_out" || fail "unexpected output: $pc_out"

for f in "$tmp/build/engine" "$tmp/build/npc_brain.so" "$tmp/pc_app"; do
  hits=$(strings -a "$f" | grep -E -e "$root/" -e "$root\$" | head -3 || true)
  [ -z "$hits" ] || fail "$f refers to the checkout $root: $hits"
done
echo "cmake_consumer: OK (CMake configure+build $(secs "$t0" "$t1")s, engine run $(secs "$t1" "$t2")s, pkg-config build+run $(secs "$t3" "$t4")s)"
