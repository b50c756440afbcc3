//! Export and load of compiled functions: a round trip through a file (with a variable the
//! function reads and updates), NOT_FOUND for inputs the file has no graph for, damaged and
//! foreign files, GraphDef text, and the status a failing closure hands the C API.

use std::ffi::CStr;
use std::path::PathBuf;
use std::ptr;

use cairn::{ops, sys, Code, Context, Function, Tensor, Variable};

fn f32s(ctx: &Context, values: &[f32]) -> Tensor {
    Tensor::new(ctx, values, &[values.len() as i64]).unwrap()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// A fresh directory for this test's files.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-rust-function-io-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// y = x * x + v, then v += x.
fn square_plus_var<'f>(ctx: &Context, v: &'f Variable) -> Function<'f> {
    Function::new(ctx, "square_plus_var", move |ctx, x| {
        let sq = ops::mul(ctx, &x[0], &x[0])?;
        let y = ops::add(ctx, &sq, &v.read()?)?;
        v.assign_add(&x[0])?;
        Ok(vec![y])
    })
    .unwrap()
}

#[test]
fn an_exported_function_loads_in_another_context_and_steps_like_the_original() {
    let dir = temp_dir("round_trip");
    let path = dir.join("square.cairnfn");
    let (ctx, ctx2) = (Context::new().unwrap(), Context::new().unwrap());
    let v = Variable::new(&ctx, &f32s(&ctx, &[10.0, 20.0])).unwrap();
    let mut f = square_plus_var(&ctx, &v);
    let err = f.export(&path).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    let x = f32s(&ctx, &[1.0, 2.0]);
    f.call(&[&x]).unwrap(); // v becomes [11, 22]
    f.export(&path).unwrap();

    let mut loaded = Function::load(&ctx2, &path, 1).unwrap();
    assert_eq!(loaded.num_traces(), 0);
    assert_eq!(loaded.num_outputs(0).unwrap_err().code(), Code::OutOfRange, "no trace yet");
    assert_eq!(loaded.name(), path.display().to_string());
    let x2 = f32s(&ctx2, &[1.0, 2.0]);
    for i in 0..3 {
        let want = [1.0 + 11.0 + i as f32, 4.0 + 22.0 + 2.0 * i as f32];
        assert_eq!(values(&f.call(&[&x]).unwrap()[0]), want, "original, step {i}");
        assert_eq!(values(&loaded.call(&[&x2]).unwrap()[0]), want, "loaded, step {i}");
    }
    assert_eq!(values(&v.read().unwrap()), [14.0, 28.0]); // the loaded copy never touched v
    assert_eq!(loaded.num_traces(), 1);
    assert_eq!(loaded.signature(0).unwrap(), "float32[2]");
    assert_eq!(loaded.num_outputs(0).unwrap(), 1);

    // A loaded function exports again.
    let again = dir.join("again.cairnfn");
    loaded.export(&again).unwrap();
    let mut reloaded = Function::load(&ctx, &again, 1).unwrap();
    assert_eq!(values(&reloaded.call(&[&x]).unwrap()[0]), [1.0 + 14.0, 4.0 + 28.0]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn inputs_without_a_stored_graph_and_bad_files_are_refused() {
    let dir = temp_dir("errors");
    let path = dir.join("f.cairnfn");
    let ctx = Context::new().unwrap();
    let v = Variable::new(&ctx, &f32s(&ctx, &[0.0, 0.0])).unwrap();
    let mut f = square_plus_var(&ctx, &v);
    f.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap();
    f.export(&path).unwrap();

    let mut loaded = Function::load(&ctx, &path, 1).unwrap();
    let err = loaded.call(&[&f32s(&ctx, &[1.0, 2.0, 3.0])]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("it has: (float32[2])"), "{err}");
    let err = loaded.call(&[&Tensor::new(&ctx, &[1.0f64, 2.0], &[2]).unwrap()]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");

    let mut two = Function::load(&ctx, &path, 2).unwrap();
    let err = two.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("returns 1 output(s), not 2"), "{err}");
    assert_eq!(two.num_outputs(0).unwrap_err().code(), Code::OutOfRange, "the failed call kept no trace");

    let err = Function::load(&ctx, dir.join("missing.cairnfn"), 1).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("missing.cairnfn"), "{err}");
    let bytes = std::fs::read(&path).unwrap();
    let broken = dir.join("broken.cairnfn");
    std::fs::write(&broken, &bytes[..bytes.len() - 10]).unwrap();
    let err = Function::load(&ctx, &broken, 1).unwrap_err();
    assert_eq!(err.code(), Code::DataLoss, "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn graphdef_text_shows_the_inputs_the_variable_and_its_updates() {
    let ctx = Context::new().unwrap();
    let v = Variable::new(&ctx, &f32s(&ctx, &[0.0, 0.0])).unwrap();
    let mut f = square_plus_var(&ctx, &v);
    assert_eq!(f.graphdef(0).unwrap_err().code(), Code::OutOfRange);
    f.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap();
    let text = f.graphdef(0).unwrap();
    for want in [
        "node {",
        "op: \"Placeholder\"",
        "op: \"VarHandleOp\"",
        "op: \"ReadVariableOp\"",
        "op: \"AssignVariableOp\"",
        "op: \"Mul\"",
        "name: \"output_0\"",
    ] {
        assert!(text.contains(want), "no {want} in\n{text}");
    }
    let err = f.graphdef(1).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange);
    assert!(err.message().contains("has 1 trace(s)"), "{err}");
}

#[test]
fn a_failing_closure_hands_the_c_api_its_code_and_message() {
    let ctx = Context::new().unwrap();
    let f = Function::new(&ctx, "picky", |_, _| Err(cairn::Error::new(Code::OutOfRange, "index 7 of 3"))).unwrap();
    let x = f32s(&ctx, &[1.0]);
    let inputs = [x.as_raw()];
    let mut out = ptr::null_mut();
    // SAFETY: live handles; one output slot. The raw call bypasses Function::call's own error.
    unsafe {
        let status = sys::cairn_function_call(f.as_raw(), inputs.as_ptr(), 1, &mut out, 1);
        assert!(!status.is_null());
        assert_eq!(sys::cairn_status_code(status), Code::OutOfRange.to_raw());
        assert_eq!(
            CStr::from_ptr(sys::cairn_status_message(status)).to_str().unwrap(),
            "function 'picky': index 7 of 3"
        );
        sys::cairn_status_free(status);
    }
    assert!(out.is_null());
}
