#!/usr/bin/env bash
# Uses the Java binding the way bindings/java/README.md ("Use it from your own project") says, in a
# fresh Maven project outside the repository: installs into a temporary prefix with
# bindings/java/install.sh (or takes $CAIRN_TEST_PREFIX, made by tools/install, which calls it),
# builds the project offline (`mvn -o`: only what Maven already holds, the plugins the install
# fetched and dev.cairn:cairn:1.3.0), runs it with plain `java -cp` (no -D flags, no
# LD_LIBRARY_PATH: the natives come from the jar), on the module path, twice at once, and once with
# -Dcairn.library.path (and with a libcairn.so.1 of another ABI). Checks the jar's JNI library
# (RUNPATH $ORIGIN, NEEDED libcairn.so.1, no path into the checkout), that no extracted file is left
# behind, and that code outside the package cannot call the native bridge. Prints each phase's seconds.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
unset LD_LIBRARY_PATH
mvn=(mvn -B -q)

phase_start=$(date +%s.%N)
phase() { # phase NAME: prints the seconds since the last phase
  local now; now=$(date +%s.%N)
  printf 'test_outside (java): %-28s %6.1f s\n' "$1" "$(echo "$now - $phase_start" | bc)"
  phase_start=$now
}
fail() { echo "bindings/java/test_outside.sh: $*" >&2; exit 1; }

prefix="${CAIRN_TEST_PREFIX:-}"
if [ -z "$prefix" ]; then
  prefix="$tmp/prefix"
  "$repo/bindings/java/install.sh" "$prefix" >/dev/null
  phase "install (Bazel + mvn install)"
fi
jar="$prefix/share/java/cairn-1.3.0.jar"
[ -f "$jar" ] || fail "$jar is missing (bindings/java/install.sh PREFIX makes it)"
m2repo="$HOME/.m2/repository"
[[ " ${MAVEN_OPTS:-} " =~ \ -Dmaven\.repo\.local=([^ ]+)\  ]] && m2repo="${BASH_REMATCH[1]}"
m2jar="$m2repo/dev/cairn/cairn/1.3.0/cairn-1.3.0.jar"
if [ ! -f "$m2jar" ]; then # a prefix made elsewhere: put its jar in the local repository
  "${mvn[@]}" install:install-file -Dfile="$jar" -DgroupId=dev.cairn -DartifactId=cairn -Dversion=1.3.0 \
    -Dpackaging=jar >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; fail "mvn install:install-file failed"; }
fi

# The jar's native code: found beside itself, nothing pointing into this checkout.
mkdir "$tmp/natives"
(cd "$tmp/natives" && unzip -q -j "$jar" 'dev/cairn/native/linux-x86_64/*')
[ -f "$tmp/natives/libcairn_jni.so" ] && [ -f "$tmp/natives/libcairn.so.1" ] || fail "the jar lacks its natives"
dyn="$(readelf -d "$tmp/natives/libcairn_jni.so")"
grep -q 'Library runpath: \[\$ORIGIN\]$' <<<"$dyn" || fail "libcairn_jni.so's runpath is not \$ORIGIN: $(grep -i path <<<"$dyn")"
grep -q 'Shared library: \[libcairn.so.1\]' <<<"$dyn" || fail "libcairn_jni.so does not need libcairn.so.1"
for f in "$tmp/natives"/*; do
  if strings "$f" | grep -qF "$repo"; then fail "$(basename "$f") holds a path into $repo"; fi
done
if readelf -d "$tmp/natives/libcairn.so.1" | grep -qi 'r.*path'; then fail "libcairn.so.1 has a runpath"; fi

# The README's project, step by step.
app="$tmp/hello-cairn"
mkdir -p "$app/src/main/java/example"
cat > "$app/pom.xml" <<'POM'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://maven.apache.org/POM/4.0.0 https://maven.apache.org/xsd/maven-4.0.0.xsd">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>hello-cairn</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>dev.cairn</groupId>
      <artifactId>cairn</artifactId>
      <version>1.3.0</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.1</version></plugin>
    </plugins>
  </build>
</project>
POM
cat > "$app/src/main/java/example/Hello.java" <<'JAVA'
package example;

import dev.cairn.Cairn;
import dev.cairn.CairnContext;
import dev.cairn.CairnException;
import dev.cairn.Ops;
import dev.cairn.Tensor;
import java.util.Arrays;

public class Hello {
  public static void main(String[] args) {
    try (CairnContext ctx = new CairnContext();
        Tensor a = Tensor.of(ctx, new float[] {1, 2, 3, 4, 5, 6}, 2, 3);
        Tensor b = Tensor.of(ctx, new float[] {10, 20, 30}, 3);
        Tensor sum = Ops.add(ctx, a, b)) {
      System.out.println("Cairn " + Cairn.version() + ": " + sum + " " + Arrays.toString(sum.toFloatArray()));
      try (Tensor c = Tensor.of(ctx, new float[] {1, 2}, 3)) {
        System.out.println("not reached");
      } catch (CairnException e) {
        System.out.println(e.getMessage());
      }
    }
  }
}
JAVA
phase "create the project"

(cd "$app" && "${mvn[@]}" -o package >"$tmp/build.log" 2>&1) || { cat "$tmp/build.log" >&2; fail "mvn -o package failed in $app"; }
[ -f "$app/target/hello-cairn-1.0.jar" ] || fail "no $app/target/hello-cairn-1.0.jar"
phase "build (mvn -o -q package)"

version="$(unzip -p "$jar" META-INF/maven/dev.cairn/cairn/pom.properties | sed -n 's/^version=//p')"
expected="Cairn ${version%%-*}: Tensor(float32[2,3], cpu) [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
INVALID_ARGUMENT: Tensor.of: 2 values for shape [3] (needs 3)"
expected="$(sed "1s/Cairn [^:]*:/Cairn VERSION:/" <<<"$expected")"
check() { # check WHAT OUTPUT
  local got; got="$(sed "1s/Cairn [^:]*:/Cairn VERSION:/" <<<"$2")"
  [ "$got" = "$expected" ] || fail "$1 printed:
$2
expected:
$expected"
}
before="$(ls -d /tmp/cairn-native-* 2>/dev/null | sort || true)" # java.io.tmpdir
cp="$app/target/hello-cairn-1.0.jar:$jar"
check "java -cp" "$(java -cp "$cp" example.Hello)"
phase "first run (java -cp)"

check "java --module-path" "$(java --module-path "$jar" --add-modules dev.cairn -cp "$app/target/hello-cairn-1.0.jar" example.Hello)"
java -cp "$cp" example.Hello >"$tmp/run1" & pid1=$!
java -cp "$cp" example.Hello >"$tmp/run2" & pid2=$!
wait "$pid1" && wait "$pid2" || fail "concurrent runs failed"
check "concurrent run 1" "$(cat "$tmp/run1")"
check "concurrent run 2" "$(cat "$tmp/run2")"
after="$(ls -d /tmp/cairn-native-* 2>/dev/null | sort || true)"
[ "$before" = "$after" ] || fail "extracted natives were left behind: $(comm -13 <(echo "$before") <(echo "$after"))"
phase "module path + 2 JVMs at once"

# The native bridge is not part of the API: code outside the package cannot call it.
mkdir -p "$tmp/bad/evil"
printf 'package evil;\npublic class Free { public static void main(String[] a) { dev.cairn.CairnNative.tensorFree(1); } }\n' \
  >"$tmp/bad/evil/Free.java"
if bad="$(javac -cp "$jar" -d "$tmp/bad" "$tmp/bad/evil/Free.java" 2>&1)"; then fail "outside code compiled a call to dev.cairn.CairnNative"; fi
grep -q "CairnNative is not public in dev.cairn" <<<"$bad" || fail "unexpected javac error: $bad"

libdir="$prefix/lib"
[ -e "$libdir/libcairn.so.1" ] || libdir="$tmp/natives" # install.sh alone: no tools/install libcairn.so.1
check "java -Dcairn.library.path=$libdir" "$(java -Dcairn.library.path="$libdir" -cp "$cp" example.Hello)"
bad="$(java -Dcairn.library.path="$tmp/nowhere" -cp "$cp" example.Hello 2>&1 || true)"
grep -q "UNAVAILABLE: Cairn native library not found: -Dcairn.library.path=$tmp/nowhere names a directory without libcairn_jni.so" <<<"$bad" \
  || fail "a wrong -Dcairn.library.path gave: $bad"

# A libcairn.so.1 of another ABI (every symbol the JNI library needs, cairn_abi_version() = 99): a
# CairnException at first use, no UnsatisfiedLinkError.
mkdir "$tmp/otherabi"
cp "$tmp/natives/libcairn_jni.so" "$tmp/otherabi/"
nm -D --undefined-only "$tmp/natives/libcairn_jni.so" | awk '$2 ~ /^cairn_/ {sub(/@.*/, "", $2); print $2}' |
  while read -r sym; do
    if [ "$sym" = cairn_abi_version ]; then echo "int $sym(void) { return 99; }"; else echo "void $sym(void) {}"; fi
  done >"$tmp/otherabi.c"
# The real library's version script, so its symbols carry the versions the JNI library asks for
# (CAIRN_1 for ABI 1.0's functions, CAIRN_1.1 for later ones).
gcc -shared -fPIC -fno-builtin -o "$tmp/otherabi/libcairn.so.1" -Wl,-soname,libcairn.so.1 \
  -Wl,--version-script="$repo/capi/cairn.lds" "$tmp/otherabi.c"
mismatch="$(java -Dcairn.library.path="$tmp/otherabi" -cp "$cp" example.Hello 2>&1 || true)"
grep -q "^Exception in thread \"main\" dev.cairn.CairnException: FAILED_PRECONDITION: Cairn ABI mismatch: .* reports cairn_abi_version() = 99" <<<"$mismatch" \
  || fail "a library of another ABI gave: $mismatch"
phase "run with -Dcairn.library.path"
echo "bindings/java/test_outside.sh: passed ($(stat -c %s "$jar") byte jar)"
