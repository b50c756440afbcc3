#!/usr/bin/env bash
# bindings/rust/test_outside.sh: follows README.md's "Use it from your own project" outside the
# source tree. Installs Cairn into a temporary prefix (or uses $CAIRN_TEST_PREFIX when set), then in
# fresh `cargo new` projects in a temporary directory, offline (nothing is fetched):
#   1. a project depending on the installed `cairn` crate by path, found through PKG_CONFIG_PATH:
#      builds, runs with `cargo run` and directly (no LD_LIBRARY_PATH), prints the expected tensor;
#   2. a project using the `load-dynamic` feature: builds with no library to be found, then the
#      program chooses the library by argument or CAIRN_LIBRARY_PATH, and without one gets an error.
# Neither binary may hold a path into the source tree. Prints the seconds of each phase.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v cargo >/dev/null || { echo "test_outside: cargo not found" >&2; exit 1; }
unset CARGO_TARGET_DIR CAIRN_LIB_DIR CAIRN_LIBRARY_PATH LD_LIBRARY_PATH PKG_CONFIG_PATH RUSTFLAGS
export CARGO_NET_OFFLINE=true

t0=$(date +%s.%N)
phase() { # prints the seconds since the last phase
  local now; now=$(date +%s.%N)
  awk -v a="$t0" -v b="$now" -v what="$1" 'BEGIN { printf "test_outside: %-44s %6.1f s\n", what, b - a }'
  t0=$now
}
fail() { echo "test_outside: $*" >&2; exit 1; }
no_checkout_paths() { # binary
  if grep -qaF "$root" "$1"; then
    fail "$1 holds a path into the source tree ($root): $(strings "$1" | grep -F "$root" | head -3)"
  fi
}

. "$root/tests/install/prefix.sh" # sets prefix ($CAIRN_TEST_PREFIX or a new install) and tmp
[ -f "$prefix/lib/pkgconfig/cairn.pc" ] && [ -d "$prefix/share/cairn/rust/cairn" ] ||
  fail "$prefix has no lib/pkgconfig/cairn.pc or share/cairn/rust/cairn (install Cairn there first)"
phase "install (prefix $prefix)"

expected='Tensor(float32 [2, 3] on cpu) = [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]'
main_rs='fn main() -> Result<(), cairn::Error> {
    let ctx = cairn::Context::new()?;
    let x = cairn::Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    let y = cairn::Tensor::new(&ctx, &[10.0f32, 20.0, 30.0], &[3])?;
    let z = cairn::ops::add(&ctx, &x, &y)?;
    println!("{:?} = {:?}", z, z.to_vec::<f32>()?);
    Ok(())
}'

# 1. Linked the default way: the build finds the library through pkg-config.
cd "$tmp"
cargo new --quiet --bin app
cd app
printf 'cairn = { path = "%s/share/cairn/rust/cairn" }\n' "$prefix" >>Cargo.toml
printf '%s\n' "$main_rs" >src/main.rs
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cargo build --offline --quiet
phase "build app (cairn by path, pkg-config)"
out=$(cargo run --offline --quiet)
[ "$out" = "$expected" ] || fail "cargo run printed '$out', expected '$expected'"
phase "cargo run app"
out=$(./target/debug/app)
[ "$out" = "$expected" ] || fail "target/debug/app printed '$out', expected '$expected'"
phase "run target/debug/app directly"
no_checkout_paths target/debug/app
grep -qaF "$prefix/lib/libcairn.so" target/debug/app || fail "target/debug/app does not name the installed library"

# 2. load-dynamic: nothing to find at build time; the program names the library.
cd "$tmp"
cargo new --quiet --bin dynapp
cd dynapp
printf 'cairn = { path = "%s/share/cairn/rust/cairn", features = ["load-dynamic"] }\n' "$prefix" >>Cargo.toml
cat >src/main.rs <<'RS'
fn main() {
    if let Some(path) = std::env::args().nth(1) {
        if let Err(e) = cairn::init_from(&path) {
            println!("error: {e}");
            std::process::exit(3);
        }
    }
    let run = || -> Result<String, cairn::Error> {
        let ctx = cairn::Context::new()?;
        let x = cairn::Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
        let y = cairn::Tensor::new(&ctx, &[10.0f32, 20.0, 30.0], &[3])?;
        let z = cairn::ops::add(&ctx, &x, &y)?;
        Ok(format!("{:?} = {:?}", z, z.to_vec::<f32>()?))
    };
    match run() {
        Ok(line) => println!("{line}"),
        Err(e) => {
            println!("error: {e}");
            std::process::exit(3);
        }
    }
}
RS
unset PKG_CONFIG_PATH
cargo build --offline --quiet
phase "build dynapp (load-dynamic, no library)"
out=$(./target/debug/dynapp "$prefix/lib/libcairn.so.1")
[ "$out" = "$expected" ] || fail "dynapp PATH printed '$out', expected '$expected'"
out=$(CAIRN_LIBRARY_PATH="$prefix/lib/libcairn.so.1" cargo run --offline --quiet)
[ "$out" = "$expected" ] || fail "CAIRN_LIBRARY_PATH=... cargo run printed '$out', expected '$expected'"
set +e
out=$(./target/debug/dynapp)
rc=$?
set -e
[ $rc -eq 3 ] && [[ "$out" == "error: FAILED_PRECONDITION: cannot load libcairn from libcairn.so.1: "* ]] ||
  fail "dynapp without a library exited $rc and printed '$out' (expected an error, exit 3)"
phase "run dynapp (path, env var, none)"
no_checkout_paths target/debug/dynapp
echo "test_outside: ok (both projects built offline, ran via cargo and directly)"
