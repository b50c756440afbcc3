//! The hand-written half of the generated layout test: compiling and running the C program.

use std::path::PathBuf;
use std::process::Command;

/// The directory holding `cairn/cairn.h`: the one the build script found next to the library, else
/// `$CAIRN_INCLUDE_DIR`, else this source tree's `capi/include`.
fn include_dir() -> PathBuf {
    let candidates = [
        option_env!("CAIRN_SYS_INCLUDE_DIR").map(PathBuf::from),
        std::env::var_os("CAIRN_INCLUDE_DIR").map(PathBuf::from),
        Some(PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../capi/include"))),
    ];
    candidates.into_iter().flatten().find(|d| d.join("cairn/cairn.h").exists()).unwrap_or_else(|| {
        panic!("layout test: no cairn/cairn.h found; set CAIRN_INCLUDE_DIR to the directory holding cairn/cairn.h")
    })
}

/// Compiles `program` against cairn.h with the C compiler and returns the lines it prints.
pub fn c_layout(program: &str) -> Vec<String> {
    let dir = std::env::temp_dir().join(format!("cairn-sys-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (source, exe) = (dir.join("layout.c"), dir.join("layout"));
    std::fs::write(&source, program).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let compiled = Command::new(&cc)
        .args(["-std=c11", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(include_dir())
        .arg(&source)
        .output()
        .unwrap_or_else(|e| panic!("layout test: cannot run {cc}: {e}"));
    assert!(compiled.status.success(), "{cc} failed:\n{}", String::from_utf8_lossy(&compiled.stderr));
    let run = Command::new(&exe).output().unwrap();
    assert!(run.status.success());
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(run.stdout).unwrap().lines().map(str::to_string).collect()
}

/// Fails listing every line where the two layouts differ.
pub fn same_lines(c: &[String], rust: &[String]) {
    assert_eq!(c.len(), rust.len(), "the C program printed {} lines, Rust has {}", c.len(), rust.len());
    let diffs: Vec<String> =
        c.iter().zip(rust).filter(|(c, r)| c != r).map(|(c, r)| format!("  C: {c}\n  Rust: {r}")).collect();
    assert!(diffs.is_empty(), "{} layout differences:\n{}", diffs.len(), diffs.join("\n"));
    assert!(!c.is_empty());
}
