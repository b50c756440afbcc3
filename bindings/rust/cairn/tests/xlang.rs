//! The cross-language program (examples/xlang.rs, tests/xlang/SPEC.md): its own round trip, the
//! spec's listing, a failing check, and, when `bazel build //tests/xlang:xlang_c` has run (as
//! bindings/test_rust does), byte-identical files with the C program and restores both ways.
#![allow(dead_code)] // main() of the included example

include!("../examples/xlang.rs");

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("xlang-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn saves_the_spec_listing_and_restores_it() {
    let file = dir("own").join("rust.ckpt");
    assert!(run("save", path_str(&file)).unwrap());
    let listing: Vec<(String, cairn::DType, Vec<i64>)> = cairn::CheckpointReader::open(&file)
        .unwrap()
        .entries()
        .into_iter()
        .map(|e| (e.key, e.dtype, e.shape))
        .collect();
    use cairn::DType;
    let want = [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", DType::String, vec![]),
        ("layers/0/k/.ATTRIBUTES/VARIABLE_VALUE", DType::Float64, vec![2]),
        ("layers/1/flag/.ATTRIBUTES/VARIABLE_VALUE", DType::Bool, vec![4]),
        ("model/b/.ATTRIBUTES/VARIABLE_VALUE", DType::Int64, vec![3]),
        ("model/w/.ATTRIBUTES/VARIABLE_VALUE", DType::Float32, vec![2, 3]),
        ("save_counter/.ATTRIBUTES/VARIABLE_VALUE", DType::Int64, vec![]),
        ("table/half/.ATTRIBUTES/VARIABLE_VALUE", DType::Float16, vec![]),
    ];
    let want: Vec<_> = want.into_iter().map(|(k, d, s)| (k.to_string(), d, s)).collect();
    assert_eq!(listing, want);
    assert!(run("restore", path_str(&file)).unwrap());
}

#[test]
fn other_values_fail_the_check() {
    let file = dir("zeros").join("zeros.ckpt");
    let ctx = Context::new().unwrap();
    build(&ctx, true).unwrap().checkpoint.write(&file).unwrap();
    assert!(!run("restore", path_str(&file)).unwrap());
    let missing = file.with_file_name("missing");
    assert_eq!(run("restore", path_str(&missing)).unwrap_err().code(), cairn::Code::NotFound);
}

#[test]
fn matches_the_c_program() {
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../bazel-bin/tests/xlang/xlang_c");
    if !c.exists() {
        eprintln!("skipped: no {} (bazel build //tests/xlang:xlang_c)", c.display());
        return;
    }
    let d = dir("c");
    let (c_file, rust_file) = (d.join("c.ckpt"), d.join("rust.ckpt"));
    let status = Command::new(&c).arg("save").arg(&c_file).status().unwrap();
    assert!(status.success());
    assert!(run("save", path_str(&rust_file)).unwrap());
    assert!(std::fs::read(&c_file).unwrap() == std::fs::read(&rust_file).unwrap(), "the files differ");
    assert!(run("restore", path_str(&c_file)).unwrap());
    let out = Command::new(&c).arg("restore").arg(&rust_file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "xlang restore ok");
}
