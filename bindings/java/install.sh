#!/usr/bin/env bash
# bindings/java/install.sh PREFIX: installs the Java binding.
#   PREFIX/share/java/cairn-1.3.0.jar   the jar, a named module (dev.cairn) carrying libcairn_jni.so
#                                       and libcairn.so.1 for linux-x86_64
#   PREFIX/lib/libcairn_jni.so          the JNI library (RUNPATH $ORIGIN: it finds the
#                                       PREFIX/lib/libcairn.so.1 that tools/install puts beside it),
#                                       for -Dcairn.library.path=PREFIX/lib
# and dev.cairn:cairn:1.3.0 in the local Maven repository (~/.m2, or wherever Maven's settings put
# it), so a Maven project can depend on it. Builds with Bazel and Maven (Maven fetches its plugins
# from Maven Central on first use; no tests run here, bindings/test_java runs them).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bindings/java/install.sh PREFIX" >&2; exit 2; }
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
cd "$(dirname "$0")/../.."

bazel build //bindings/java:natives >/dev/null 2>&1 || { bazel build //bindings/java:natives; exit 1; }
natives="$(bazel info bazel-bin 2>/dev/null)/bindings/java"

version=1.3.0
jar="bindings/java/target/cairn-$version.jar"
rm -f "$jar"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
(cd bindings/java && mvn -B -q install -Dmaven.test.skip=true -Dcairn.native.dir="$natives" >"$log" 2>&1) \
  || { cat "$log" >&2; echo "install.sh: mvn install failed" >&2; exit 1; }

# A jar without its natives would only fail at its user's first call: refuse it here.
listing="$(unzip -Z1 "$jar")"
for f in module-info.class dev/cairn/native/linux-x86_64/libcairn_jni.so dev/cairn/native/linux-x86_64/libcairn.so.1; do
  grep -qx "$f" <<<"$listing" || { echo "install.sh: $jar lacks $f" >&2; exit 1; }
done
if grep -q '^dev/cairn/raw/' <<<"$listing"; then echo "install.sh: $jar still has dev/cairn/raw" >&2; exit 1; fi

install -D -m 644 "$jar" "$prefix/share/java/cairn-$version.jar"
ln -sfn "cairn-$version.jar" "$prefix/share/java/cairn.jar"
install -D -m 755 "$natives/libcairn_jni.so" "$prefix/lib/libcairn_jni.so"
echo "install.sh: $prefix/share/java/cairn-$version.jar ($(stat -c %s "$jar") bytes), $prefix/lib/libcairn_jni.so, and dev.cairn:cairn:$version in the local Maven repository"
