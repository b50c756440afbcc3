//! Compiled functions: the seed's quiz (what runs at trace time, what at replay), retracing on a
//! new dtype, variables captured by reference, input signatures, closure errors and panics, the
//! release of the closure, and a whole training step captured and replayed.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cairn::{
    losses, ops, Code, Context, ContextOptions, DType, DenseOptions, Error, Function, FunctionOptions, GradientTape,
    Initializer, Layer, Optimizer, OptimizerOptions, Sequential, Tensor, TensorSpec, Variable, VariableOptions,
};

fn f32s(ctx: &Context, values: &[f32]) -> Tensor {
    Tensor::new(ctx, values, &[values.len() as i64]).unwrap()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// y = x * x + v, counting the closure's runs (a host side effect).
fn square_plus<'f>(ctx: &Context, v: &'f Variable, traces: &'f AtomicUsize) -> Function<'f> {
    Function::new(ctx, "square_plus", move |ctx, x| {
        traces.fetch_add(1, Ordering::SeqCst);
        println!("tracing square_plus for {:?}", x[0]); // printed once per signature
        let sq = ops::mul(ctx, &x[0], &x[0])?;
        Ok(vec![ops::add(ctx, &sq, &v.read()?)?])
    })
    .unwrap()
}

#[test]
fn the_closure_runs_only_while_tracing_and_variables_are_captured_by_reference() {
    let ctx = Context::new().unwrap();
    let v = Variable::new(&ctx, &f32s(&ctx, &[10.0, 20.0])).unwrap();
    let traces = AtomicUsize::new(0);
    let mut f = square_plus(&ctx, &v, &traces);

    assert_eq!(values(&f.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap()[0]), [11.0, 24.0]);
    assert_eq!(values(&f.call(&[&f32s(&ctx, &[3.0, 4.0])]).unwrap()[0]), [19.0, 36.0]);
    assert_eq!(traces.load(Ordering::SeqCst), 1, "the second call replayed the graph");
    assert_eq!(f.num_traces(), 1);

    // The variable is captured by reference: the replay reads its live value.
    v.assign(&f32s(&ctx, &[0.0, 0.0])).unwrap();
    assert_eq!(values(&f.call(&[&f32s(&ctx, &[3.0, 4.0])]).unwrap()[0]), [9.0, 16.0]);
    assert_eq!(traces.load(Ordering::SeqCst), 1);

    let dump = f.dump(0).unwrap();
    assert!(dump.contains("Mul") && dump.contains("ReadVariable") && dump.contains("float32[2]"), "{dump}");
    assert_eq!(f.signature(0).unwrap(), "float32[2]");
    let err = f.dump(3).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange, "{err}");
    assert!(format!("{f:?}").contains("square_plus"), "{f:?}");
}

#[test]
fn a_replay_never_enters_rust() {
    let ctx = Context::new().unwrap();
    let entered = AtomicBool::new(false);
    let mut f = Function::new(&ctx, "once", |ctx, x| {
        // A second run of the closure would fail the call.
        assert!(!entered.swap(true, Ordering::SeqCst), "the closure ran at replay");
        Ok(vec![ops::neg(ctx, &x[0])?])
    })
    .unwrap();
    for i in 0..5 {
        let x = f32s(&ctx, &[i as f32, 1.0]);
        assert_eq!(values(&f.call(&[&x]).unwrap()[0]), [-(i as f32), -1.0]);
    }
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn a_new_dtype_or_shape_retraces() {
    let ctx = Context::new().unwrap();
    let traces = AtomicUsize::new(0);
    let mut f = Function::new(&ctx, "double", |ctx, x| {
        traces.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::add(ctx, &x[0], &x[0])?])
    })
    .unwrap();
    f.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap();
    let y = f.call(&[&Tensor::new(&ctx, &[1.5f64, 2.0], &[2]).unwrap()]).unwrap();
    assert_eq!(y[0].to_vec::<f64>().unwrap(), [3.0, 4.0]);
    assert_eq!(traces.load(Ordering::SeqCst), 2);
    f.call(&[&Tensor::new(&ctx, &[1.0f32, 2.0], &[1, 2]).unwrap()]).unwrap();
    f.call(&[&Tensor::new(&ctx, &[7i32, 8], &[2]).unwrap()]).unwrap();
    f.call(&[&f32s(&ctx, &[5.0, 6.0])]).unwrap(); // the first signature again: a replay
    assert_eq!(traces.load(Ordering::SeqCst), 4);
    assert_eq!(f.num_traces(), 4);
    assert_eq!(f.signature(1).unwrap(), "float64[2]");
    assert_eq!(f.signature(3).unwrap(), "int32[2]");
}

#[test]
fn an_input_signature_with_unknown_dims_traces_once_for_every_length() {
    let ctx = Context::new().unwrap();
    let traces = AtomicUsize::new(0);
    let opts = FunctionOptions::new().input_signature(&[TensorSpec::new(DType::Float32, &[-1])]);
    let mut f = Function::with_options(&ctx, "relu", opts, |ctx, x| {
        traces.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::relu(ctx, &x[0])?])
    })
    .unwrap();
    assert_eq!(values(&f.call(&[&f32s(&ctx, &[-1.0, 2.0])]).unwrap()[0]), [0.0, 2.0]);
    assert_eq!(values(&f.call(&[&f32s(&ctx, &[3.0, -4.0, 5.0])]).unwrap()[0]), [3.0, 0.0, 5.0]);
    assert_eq!(values(&f.call(&[&f32s(&ctx, &[-6.0; 5])]).unwrap()[0]), [0.0; 5]);
    // The second length is traced once more, to check the graph does not depend on the length.
    assert_eq!(traces.load(Ordering::SeqCst), 2);
    assert_eq!(f.num_traces(), 1);
    assert_eq!(f.signature(0).unwrap(), "float32[-1]"); // the trace serves any length

    let err = f.call(&[&Tensor::new(&ctx, &[1.0f32, 2.0], &[1, 2]).unwrap()]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("input signature"), "{err}");
    let err = f.call(&[&Tensor::new(&ctx, &[1.0f64], &[1]).unwrap()]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(traces.load(Ordering::SeqCst), 2);

    let bad = FunctionOptions::new().input_signature(&[TensorSpec::new(DType::Float32, &[-2])]);
    let err = Function::with_options(&ctx, "bad", bad, |_, x| Ok(x.to_vec())).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("input_signature[0]"), "{err}");
}

#[test]
fn frequent_retracing_is_logged() {
    let messages = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&messages);
    let ctx =
        Context::with_options(ContextOptions::new().log_callback(move |_, m| sink.lock().unwrap().push(m.into())))
            .unwrap();
    let opts = FunctionOptions::new().retrace_warning(2);
    let mut f = Function::with_options(&ctx, "g", opts, |ctx, x| Ok(vec![ops::neg(ctx, &x[0])?])).unwrap();
    f.call(&[&f32s(&ctx, &[1.0])]).unwrap();
    assert!(messages.lock().unwrap().is_empty());
    f.call(&[&f32s(&ctx, &[1.0, 2.0])]).unwrap();
    let messages = messages.lock().unwrap();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("function 'g' has been traced 2 times"), "{messages:?}");
}

#[test]
fn an_err_from_the_closure_comes_back_with_its_code_and_nothing_is_cached() {
    let ctx = Context::new().unwrap();
    let fail = AtomicBool::new(true);
    let mut f = Function::new(&ctx, "picky", |ctx, x| {
        if fail.load(Ordering::SeqCst) {
            return Err(Error::new(Code::FailedPrecondition, "not ready yet"));
        }
        Ok(vec![ops::square(ctx, &x[0])?])
    })
    .unwrap();
    let x = f32s(&ctx, &[3.0]);
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert_eq!(err.message(), "function 'picky': not ready yet");
    assert_eq!(f.num_traces(), 0);
    // Nothing was cached, so the next call traces again, and succeeds.
    fail.store(false, Ordering::SeqCst);
    assert_eq!(values(&f.call(&[&x]).unwrap()[0]), [9.0]);
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn an_op_error_inside_the_closure_names_the_op() {
    let ctx = Context::new().unwrap();
    let v = Variable::new(&ctx, &f32s(&ctx, &[1.0, 2.0])).unwrap();
    let traces = AtomicUsize::new(0);
    let mut f = square_plus(&ctx, &v, &traces);
    // float64 * float64 + the float32 variable: Add fails while tracing.
    let err = f.call(&[&Tensor::new(&ctx, &[1.0f64, 2.0], &[2]).unwrap()]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().starts_with("function 'square_plus': ") && err.message().contains("Add"), "{err}");
    assert_eq!(f.num_traces(), 0);
}

#[test]
fn a_panic_in_the_closure_becomes_an_error_and_never_unwinds_into_c() {
    let ctx = Context::new().unwrap();
    let calls = AtomicUsize::new(0);
    let mut f = Function::new(&ctx, "panicky", |ctx, x| {
        if calls.fetch_add(1, Ordering::SeqCst) == 0 {
            panic!("boom at trace time");
        }
        Ok(vec![ops::abs(ctx, &x[0])?])
    })
    .unwrap();
    let x = f32s(&ctx, &[-2.0]);
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::Unknown, "{err}");
    assert_eq!(err.message(), "function 'panicky': the closure panicked: boom at trace time");
    assert_eq!(f.num_traces(), 0);
    assert_eq!(values(&f.call(&[&x]).unwrap()[0]), [2.0]); // still usable
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn the_output_count_is_fixed_per_function() {
    let ctx = Context::new().unwrap();
    let opts = FunctionOptions::new().outputs(2);
    let mut split = Function::with_options(&ctx, "sum_and_diff", opts, |ctx, x| {
        Ok(vec![ops::add(ctx, &x[0], &x[1])?, ops::sub(ctx, &x[0], &x[1])?])
    })
    .unwrap();
    let (a, b) = (f32s(&ctx, &[5.0]), f32s(&ctx, &[3.0]));
    let out = split.call(&[&a, &b]).unwrap();
    assert_eq!((values(&out[0]), values(&out[1])), (vec![8.0], vec![2.0]));

    // Returning an input (shared) or an eager tensor (a constant) works too; a wrong count does not.
    let c = f32s(&ctx, &[7.0]);
    let mut passthrough = Function::with_options(&ctx, "pass", FunctionOptions::new().outputs(2), |_, x| {
        Ok(vec![x[0].clone(), c.clone()])
    })
    .unwrap();
    let out = passthrough.call(&[&a]).unwrap();
    assert_eq!((values(&out[0]), values(&out[1])), (vec![5.0], vec![7.0]));

    let mut wrong = Function::new(&ctx, "wrong", |_, x| Ok(vec![x[0].clone(), x[0].clone()])).unwrap();
    let err = wrong.call(&[&a]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("returned 2 tensor(s), but the function has 1 output(s)"), "{err}");
    assert_eq!(wrong.num_traces(), 0);
}

#[test]
fn symbolic_inputs_have_no_value_inside_the_closure() {
    let ctx = Context::new().unwrap();
    let mut f = Function::new(&ctx, "peek", |_, x| {
        let err = x[0].to_vec::<f32>().unwrap_err();
        Err(err)
    })
    .unwrap();
    let err = f.call(&[&f32s(&ctx, &[1.0])]).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
}

/// Counts drops of what the closure captures.
struct DropCounter(Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn the_closure_is_released_once_when_the_function_is_dropped() {
    let ctx = Context::new().unwrap();
    let drops = Arc::new(AtomicUsize::new(0));
    let guard = DropCounter(Arc::clone(&drops));
    let mut f = Function::new(&ctx, "owner", move |ctx, x| {
        let _keep = &guard;
        Ok(vec![ops::neg(ctx, &x[0])?])
    })
    .unwrap();
    f.call(&[&f32s(&ctx, &[1.0])]).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(f);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // A failed creation drops the closure too (the C API does not call release then).
    let guard = DropCounter(Arc::clone(&drops));
    let err = Function::new(&ctx, "", move |_, x| {
        let _keep = &guard;
        Ok(x.to_vec())
    })
    .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert_eq!(drops.load(Ordering::SeqCst), 2);
    assert_eq!(Arc::strong_count(&drops), 1);
}

#[test]
fn a_function_moves_to_another_thread() {
    let ctx = Context::new().unwrap();
    let mut f = Function::new(&ctx, "neg", |ctx, x| Ok(vec![ops::neg(ctx, &x[0])?])).unwrap();
    let x = f32s(&ctx, &[4.0]);
    let y = std::thread::scope(|s| s.spawn(|| f.call(&[&x]).unwrap()).join().unwrap());
    assert_eq!(values(&y[0]), [-4.0]);
}

/// Forward pass, loss, tape gradient and SGD update, all captured in one function.
#[test]
fn a_whole_training_step_is_captured_and_replayed() {
    let ctx = Context::with_options(ContextOptions::new().seed(1)).unwrap();
    let model = Sequential::new(&ctx, Some("model")).unwrap();
    model.add(&Layer::dense(&ctx, DenseOptions::new(1).kernel_initializer(Initializer::Zeros)).unwrap()).unwrap();
    let opt = Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(0.1)).unwrap();
    let traces = AtomicUsize::new(0);
    let mut train_step = Function::new(&ctx, "train_step", |ctx, xy| {
        traces.fetch_add(1, Ordering::SeqCst);
        let tape = GradientTape::new(ctx)?;
        let prediction = model.as_layer().call(&xy[0], true)?;
        let loss = losses::mean_squared_error(ctx, &xy[1], &prediction)?;
        let weights = model.as_layer().trainable_weights()?;
        let grads = tape.gradient_variables(&loss, &weights)?;
        opt.apply_gradients(&grads, &weights)?;
        Ok(vec![loss])
    })
    .unwrap();

    // y = 2x + 1
    let x = Tensor::new(&ctx, &[0.0f32, 1.0, 2.0, 3.0], &[4, 1]).unwrap();
    let y = Tensor::new(&ctx, &[1.0f32, 3.0, 5.0, 7.0], &[4, 1]).unwrap();
    let first = values(&train_step.call(&[&x, &y]).unwrap()[0])[0];
    let mut last = first;
    for _ in 0..300 {
        last = values(&train_step.call(&[&x, &y]).unwrap()[0])[0];
    }
    assert_eq!(traces.load(Ordering::SeqCst), 1);
    assert_eq!(opt.iterations().unwrap(), 301);
    assert!(last < first * 1e-3, "loss {first} -> {last}");
    let w = model.as_layer().weights().unwrap();
    let (kernel, bias) = (values(&w[0].read().unwrap())[0], values(&w[1].read().unwrap())[0]);
    assert!((kernel - 2.0).abs() < 1e-2 && (bias - 1.0).abs() < 1e-2, "kernel {kernel}, bias {bias}");
    let dump = train_step.dump(0).unwrap();
    assert!(dump.contains("AssignVariable") && dump.contains("MatMul"), "{dump}");
}

#[test]
fn variable_writes_inside_the_function_happen_on_every_replay() {
    let ctx = Context::new().unwrap();
    let zero = Tensor::scalar(&ctx, 0i64).unwrap();
    let counter = Variable::with_options(&ctx, &zero, VariableOptions::new().name("counter").trainable(false)).unwrap();
    let one = Tensor::scalar(&ctx, 1i64).unwrap();
    let mut step = Function::new(&ctx, "step", |ctx, x| {
        counter.assign_add(&one)?;
        Ok(vec![ops::add(ctx, &counter.read()?, &x[0])?])
    })
    .unwrap();
    let hundred = Tensor::scalar(&ctx, 100i64).unwrap();
    assert_eq!(step.call(&[&hundred]).unwrap()[0].to_vec::<i64>().unwrap(), [101]);
    assert_eq!(step.call(&[&hundred]).unwrap()[0].to_vec::<i64>().unwrap(), [102]);
    assert_eq!(counter.read().unwrap().to_vec::<i64>().unwrap(), [2]);
}

/// A static input's value keys the cache: the closure reads it while tracing (how many times to
/// double x), a new value retraces and a known one replays.
#[test]
fn a_static_input_value_keys_the_cache() {
    let ctx = Context::new().unwrap();
    let traces = AtomicUsize::new(0);
    let options = FunctionOptions::new().static_inputs(&[1]);
    let mut f = Function::with_options(&ctx, "double_n_times", options, |ctx, x| {
        traces.fetch_add(1, Ordering::SeqCst);
        let n = x[1].to_vec::<f32>()?[0] as usize;
        let mut y = ops::add(ctx, &x[0], &x[0])?;
        for _ in 1..n {
            y = ops::add(ctx, &y, &y)?;
        }
        Ok(vec![y])
    })
    .unwrap();
    let x = f32s(&ctx, &[1.0, 3.0]);
    for (n, want, traced) in [(2.0, [4.0, 12.0], 1), (3.0, [8.0, 24.0], 2), (2.0, [4.0, 12.0], 2)] {
        let y = f.call(&[&x, &Tensor::new(&ctx, &[n as f32], &[]).unwrap()]).unwrap();
        assert_eq!(values(&y[0]), want, "n = {n}");
        assert_eq!(traces.load(Ordering::SeqCst), traced, "n = {n}");
    }
    let err = f.export(std::env::temp_dir().join("cairn_rust_static.cairnfn")).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
}
