//! Finds libcairn for the default build (see LOADING.md): `CAIRN_LIB_DIR` when set, else the
//! `libdir` of the `cairn` pkg-config package. Nothing is linked: the absolute path of the library
//! becomes `cairn_sys::BUILT_WITH`, which the crate opens at run time. With the `load-dynamic`
//! feature nothing is needed and nothing is looked up.
//!
//! Passed on to dependents (`DEP_CAIRN_LIB_DIR`, `DEP_CAIRN_INCLUDE`) and to this crate's tests
//! (`CAIRN_SYS_INCLUDE_DIR`, the headers the layout test compiles against) when found.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    for var in ["CAIRN_LIB_DIR", "PKG_CONFIG_PATH", "PKG_CONFIG_LIBDIR", "PKG_CONFIG_SYSROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let dynamic = env::var_os("CARGO_FEATURE_LOAD_DYNAMIC").is_some();
    let found = match env::var_os("CAIRN_LIB_DIR") {
        Some(dir) if !dir.is_empty() => Some((PathBuf::from(dir), None)),
        _ if dynamic => None,
        _ => pkg_config_var("libdir").map(|dir| (dir, pkg_config_var("includedir"))),
    };
    let Some((dir, include)) = found else {
        if !dynamic {
            fail("no cairn package found by pkg-config and CAIRN_LIB_DIR is not set");
        }
        return;
    };
    let dir = dir.canonicalize().unwrap_or_else(|e| fail(&format!("library directory {}: {e}", dir.display())));
    let Some(lib) = ["libcairn.so.1", "libcairn.so", "libcairn.dylib"].iter().map(|n| dir.join(n)).find(|p| p.exists())
    else {
        fail(&format!("no libcairn.so.1 or libcairn.so in {}", dir.display()));
    };
    if !dynamic {
        println!("cargo:rustc-env=CAIRN_SYS_LIBRARY={}", lib.display());
    }
    println!("cargo:lib_dir={}", dir.display());
    let include = include.unwrap_or_else(|| dir.join("../include"));
    if include.join("cairn/cairn.h").exists() {
        let include = include.canonicalize().unwrap_or(include);
        println!("cargo:include={}", include.display());
        println!("cargo:rustc-env=CAIRN_SYS_INCLUDE_DIR={}", include.display());
    }
}

fn pkg_config_var(var: &str) -> Option<PathBuf> {
    let out = Command::new("pkg-config").arg(format!("--variable={var}")).arg("cairn").output().ok()?;
    let value = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !value.is_empty()).then(|| PathBuf::from(value))
}

fn fail(why: &str) -> ! {
    eprintln!(
        "cairn-sys: {why}.\n\
         Install Cairn (`tools/install --prefix PREFIX` in its source tree) and set \
         PKG_CONFIG_PATH=PREFIX/lib/pkgconfig unless PREFIX is a system prefix, or set CAIRN_LIB_DIR to \
         the directory holding libcairn.so.1, or enable the `load-dynamic` feature to choose the library \
         at run time."
    );
    std::process::exit(1);
}
