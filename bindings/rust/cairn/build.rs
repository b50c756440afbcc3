//! Gives this crate's own tests, examples and benchmarks an rpath to the libcairn that cairn-sys
//! linked, so `cargo test` and `cargo run --example` work without LD_LIBRARY_PATH. (Cargo passes
//! link arguments only to the package's own targets; other executables set their own loader path.)

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_CAIRN_LIB_DIR");
    if let Ok(dir) = std::env::var("DEP_CAIRN_LIB_DIR") {
        if std::env::var("CARGO_CFG_TARGET_FAMILY").as_deref() == Ok("unix") {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
