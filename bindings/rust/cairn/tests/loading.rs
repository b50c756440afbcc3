//! Loading the library (cairn-sys's function table), in both builds: the default one, which opens
//! the library the build found, and `--features load-dynamic`, which has none built in. Wrong
//! libraries are errors from the call, never a panic, and leave nothing loaded.
//!
//! Loading is once per process, so the first test runs the other cases in child processes of this
//! test binary (selected by CAIRN_LOADING_CASE).

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn::{Code, Context, Tensor};

const CASE: &str = "CAIRN_LOADING_CASE";

/// The library the tests load on purpose: `$CAIRN_LIBRARY_PATH`, else the one the build found.
fn real_library() -> PathBuf {
    match std::env::var_os("CAIRN_LIBRARY_PATH") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(cairn::sys::BUILT_WITH.expect("set CAIRN_LIBRARY_PATH for a load-dynamic build")),
    }
}

/// Runs the test `case` of this binary in a child process with `env` changes; returns its output.
fn child(case: &str, env: &[(&str, Option<&str>)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", case, "--nocapture", "--test-threads=1"]).env(CASE, case);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child {case} failed:\n{text}");
    assert!(text.contains("1 passed"), "child {case} ran nothing:\n{text}");
    text
}

fn is_child(case: &str) -> bool {
    std::env::var(CASE).as_deref() == Ok(case)
}

/// A shared library whose `cairn_abi_version` returns 99, made with the C compiler.
fn fake_abi_library(dir: &Path) -> PathBuf {
    let (src, lib) = (dir.join("fake.c"), dir.join("libfakecairn.so"));
    std::fs::write(&src, "unsigned cairn_abi_version(void) { return 99; }\n").unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let ok = Command::new(cc).args(["-shared", "-fPIC", "-o"]).arg(&lib).arg(&src).status().unwrap();
    assert!(ok.success());
    lib
}

#[test]
fn cases() {
    if std::env::var_os(CASE).is_some() {
        return;
    }
    let real = real_library();
    let real = real.to_str().unwrap();
    child("wrong_libraries_are_errors_then_the_right_one_loads", &[("CAIRN_LIBRARY_PATH", Some(real))]);
    child("env_var_names_the_library", &[("CAIRN_LIBRARY_PATH", Some("/nonexistent/libcairn.so.1"))]);
    let unset = [("CAIRN_LIBRARY_PATH", None), ("LD_LIBRARY_PATH", None), ("CAIRN_TEST_REAL_LIBRARY", Some(real))];
    child("without_the_env_var", &unset);
}

#[test]
fn wrong_libraries_are_errors_then_the_right_one_loads() {
    if !is_child("wrong_libraries_are_errors_then_the_right_one_loads") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cairn-loading-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let err = cairn::init_from("/nonexistent/libcairn.so.1").unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.message().starts_with("init_from: cannot load libcairn from /nonexistent/libcairn.so.1: "), "{err}");

    let fake = fake_abi_library(&dir);
    let err = cairn::init_from(&fake).unwrap_err();
    assert!(err.message().contains("it has ABI version 99, but this binding was generated for ABI version"), "{err}");

    // A real shared library that is not Cairn: the C library itself.
    let err = cairn::init_from("libc.so.6").unwrap_err();
    assert!(err.message().contains("no cairn_abi_version: not a Cairn library"), "{err}");

    // A Cairn ABI with a function missing: the fake library again, with the right version.
    std::fs::write(
        dir.join("fake.c"),
        format!("unsigned cairn_abi_version(void) {{ return {}; }}\n", cairn::ABI_VERSION),
    )
    .unwrap();
    let partial = dir.join("libpartial.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    assert!(Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(&partial)
        .arg(dir.join("fake.c"))
        .status()
        .unwrap()
        .success());
    let err = cairn::init_from(&partial).unwrap_err();
    assert!(err.message().contains("it has no function cairn_"), "{err}");
    assert_eq!(cairn::sys::loaded_path(), None, "failed loads leave nothing loaded");

    // The right one: then a second, different path is refused, the same one is fine.
    let real = real_library();
    cairn::init_from(&real).unwrap();
    cairn::init_from(&real).unwrap();
    let err = cairn::init_from(&fake).unwrap_err();
    assert!(err.message().contains("already loaded from"), "{err}");
    let ctx = Context::new().unwrap();
    assert_eq!(Tensor::scalar(&ctx, 2.0f32).unwrap().to_vec::<f32>().unwrap(), [2.0]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn env_var_names_the_library() {
    if !is_child("env_var_names_the_library") {
        return;
    }
    // CAIRN_LIBRARY_PATH overrides the built-in path: a missing file is an error from Context::new.
    let err = Context::new().unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition);
    assert!(err.to_string().contains("cannot load libcairn from /nonexistent/libcairn.so.1"), "{err}");
    assert!(!cairn::vulkan::available());
    assert!(cairn::version().is_err());
}

#[test]
fn without_the_env_var() {
    if !is_child("without_the_env_var") {
        return;
    }
    match cairn::sys::BUILT_WITH {
        // The default build opens the library it was built against, with no loader path at all.
        Some(built) => {
            let ctx = Context::new().unwrap();
            drop(ctx);
            assert_eq!(cairn::sys::loaded_path().unwrap(), Path::new(built));
        }
        // load-dynamic: libcairn.so.1 is on no search path here, so Context::new fails and says how
        // to choose one; init_from then works.
        None => {
            let err = Context::new().unwrap_err();
            assert!(err.message().contains("libcairn.so.1"), "{err}");
            assert!(err.message().contains("cairn::init_from(path) or set CAIRN_LIBRARY_PATH"), "{err}");
            let path = std::env::var("CAIRN_TEST_REAL_LIBRARY").expect("passed by the parent");
            cairn::init_from(path).unwrap();
            Context::new().unwrap();
        }
    }
}
