//! Runs examples/add.rs (the README example) so it cannot rot.

include!("../examples/add.rs");

#[test]
fn readme_example_runs() {
    main().unwrap();
}
