//! Errors read `<CODE>: <message>` as in the Go and Java bindings, and misuse the binding can see
//! itself is worded in its own terms, naming the Rust function (never the C API's wording).

use cairn::{Context, DenseOptions, Layer, Module, Optimizer, OptimizerOptions, Tensor, Trackable, Variable};

#[test]
fn display_is_code_colon_message() {
    let ctx = Context::new().unwrap();
    let x = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let y = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let err = cairn::ops::add(&ctx, &x, &y).unwrap_err();
    assert_eq!(err.to_string(), format!("INVALID_ARGUMENT: {}", err.message()));
    assert!(err.message().starts_with("Add: "), "{err}");
}

#[test]
fn misuse_is_worded_in_the_bindings_terms() {
    let ctx = Context::new().unwrap();
    let cases: Vec<(cairn::Error, &str)> = vec![
        (
            Tensor::new(&ctx, &[1.0f32, 2.0], &[3]).unwrap_err(),
            "INVALID_ARGUMENT: Tensor::new: 2 values for shape [3] (needs 3)",
        ),
        (
            Layer::dense(&ctx, DenseOptions::new(2).name("a\0b")).unwrap_err(),
            "INVALID_ARGUMENT: Layer::dense: name \"a\\0b\" contains a NUL byte",
        ),
        (
            Layer::dropout(&ctx, 0.5, Some(-2), None).unwrap_err(),
            "INVALID_ARGUMENT: Layer::dropout: seed -2 is negative; pass None to draw from the context's stream",
        ),
        (Module::new(&ctx, "m\0").unwrap_err(), "INVALID_ARGUMENT: Module::new: name \"m\\0\" contains a NUL byte"),
        (
            Trackable::new(&ctx).unwrap().set("x\0", Trackable::new(&ctx).unwrap()).unwrap_err(),
            "INVALID_ARGUMENT: Object::set: name \"x\\0\" contains a NUL byte",
        ),
    ];
    for (err, expected) in cases {
        assert_eq!(err.to_string(), expected);
    }
    let v = Variable::new(&ctx, &Tensor::new(&ctx, &[1.0f32], &[1]).unwrap()).unwrap();
    let sgd = Optimizer::new(&ctx, OptimizerOptions::sgd()).unwrap();
    let err = sgd.apply_gradients::<Tensor, _>(&[], &[&v]).unwrap_err();
    assert_eq!(err.to_string(), "INVALID_ARGUMENT: Optimizer::apply_gradients: 0 gradients for 1 variables");
}
