//! Finds libcairn and links it. In order:
//!  1. `CAIRN_LIB_DIR`: a directory holding libcairn.so;
//!  2. a pkg-config file named `cairn` (`pkg-config --variable=libdir cairn`);
//!  3. this source tree: `bazel build //capi:cairn` in the repository root, then bazel-bin/capi.
//!
//! The directory is passed on to dependents as `DEP_CAIRN_LIB_DIR`; the `cairn` crate's build
//! script uses it to set an rpath for its own tests and examples. Other executables need the
//! directory on their loader path (LD_LIBRARY_PATH, an rpath, or an installed libcairn).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CAIRN_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let dir = match env::var_os("CAIRN_LIB_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => pkg_config_libdir().unwrap_or_else(build_with_bazel),
    };
    if !dir.join("libcairn.so").exists() && !dir.join("libcairn.dylib").exists() {
        println!("cargo:warning=no libcairn shared library in {}", dir.display());
    }
    println!("cargo:rustc-link-search=native={}", dir.display());
    println!("cargo:rustc-link-lib=dylib=cairn");
    println!("cargo:lib_dir={}", dir.display());
}

fn pkg_config_libdir() -> Option<PathBuf> {
    let out = Command::new("pkg-config").args(["--variable=libdir", "cairn"]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let dir = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

fn build_with_bazel() -> PathBuf {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let root = manifest.join("../../..");
    let root = root.canonicalize().unwrap_or(root);
    if !root.join("capi/BUILD").exists() {
        panic!(
            "cairn-sys: libcairn not found. Set CAIRN_LIB_DIR to the directory holding libcairn.so, \
             install a cairn.pc for pkg-config, or build from the Cairn source tree."
        );
    }
    rerun_if_header_changes(&root);
    let mut bazel = Command::new("bazel");
    bazel.args(["build", "//capi:cairn"]).current_dir(&root);
    // Bazel passes LD_LIBRARY_PATH into its actions' keys. Cargo prepends its own directories to it
    // for build scripts, which would make this build miss every result of a plain `bazel build`.
    match env::var_os("LD_LIBRARY_PATH").map(|p| without_cargo_dirs(&p)) {
        Some(Some(path)) => bazel.env("LD_LIBRARY_PATH", path),
        Some(None) => bazel.env_remove("LD_LIBRARY_PATH"),
        None => &mut bazel,
    };
    let status = bazel
        .status()
        .unwrap_or_else(|e| panic!("cairn-sys: cannot run bazel to build libcairn ({e}); set CAIRN_LIB_DIR instead"));
    if !status.success() {
        panic!("cairn-sys: `bazel build //capi:cairn` failed in {} ({status})", root.display());
    }
    root.join("bazel-bin/capi")
}

/// The entries of a loader path that Cargo and rustup did not add (its target directory and the
/// toolchain's libraries); None when nothing is left.
fn without_cargo_dirs(path: &std::ffi::OsStr) -> Option<std::ffi::OsString> {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR")?);
    // OUT_DIR is <target>/<profile>/build/<pkg>-<hash>/out.
    let target = out_dir.ancestors().nth(4)?.to_path_buf();
    let kept: Vec<PathBuf> = env::split_paths(path)
        .filter(|p| !p.starts_with(&target) && !p.components().any(|c| c.as_os_str() == "toolchains"))
        .collect();
    if kept.is_empty() {
        None
    } else {
        env::join_paths(kept).ok()
    }
}

fn rerun_if_header_changes(root: &Path) {
    println!("cargo:rerun-if-changed={}", root.join("capi/include/cairn/cairn.h").display());
}
