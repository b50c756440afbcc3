//! Control flow: cond and while_loop eagerly and inside compiled functions (traced once; the data
//! picks the branch and the trip count at replay), TensorArrays filled by loops, the errors of
//! the closures and of the runtime, and the headline case: an RNN over a data-dependent length.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cairn::ops::{EqualAttrs, MatMulAttrs};
use cairn::{
    cond, ops, tensor_array, while_loop, Code, Context, DType, Error, Function, GradientTape, Result, Tensor, Variable,
};

fn i32_scalar(ctx: &Context, v: i32) -> Tensor {
    Tensor::scalar(ctx, v).unwrap()
}

fn f32_scalar(ctx: &Context, v: f32) -> Tensor {
    Tensor::scalar(ctx, v).unwrap()
}

fn count(c: &AtomicUsize) -> usize {
    c.load(Ordering::SeqCst)
}

/// x > 0 ? 2x : -x, counting the runs of each branch.
fn double_or_negate(ctx: &Context, x: &Tensor, then_runs: &AtomicUsize, else_runs: &AtomicUsize) -> Result<Tensor> {
    let positive = ops::greater(ctx, x, &Tensor::scalar(ctx, 0.0f32)?)?;
    let then_branch = |ctx: &Context, v: &[Tensor]| {
        then_runs.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::add(ctx, &v[0], &v[0])?])
    };
    let else_branch = |ctx: &Context, v: &[Tensor]| {
        else_runs.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::neg(ctx, &v[0])?])
    };
    let mut out = cond(ctx, &positive, &[x], then_branch, else_branch, 1)?;
    Ok(out.remove(0))
}

/// 0 + 1 + ... + (n - 1) with a loop over (i, total, n), counting the closures' runs.
fn sum_below(
    ctx: &Context,
    n: &Tensor,
    max_iterations: Option<u64>,
    cond_runs: &AtomicUsize,
    body_runs: &AtomicUsize,
) -> Result<Vec<Tensor>> {
    let (i, total, one) = (Tensor::scalar(ctx, 0i32)?, Tensor::scalar(ctx, 0i32)?, Tensor::scalar(ctx, 1i32)?);
    let i_below_n = |ctx: &Context, v: &[Tensor]| {
        cond_runs.fetch_add(1, Ordering::SeqCst);
        ops::less(ctx, &v[0], &v[2])
    };
    let add_i = |ctx: &Context, v: &[Tensor]| {
        body_runs.fetch_add(1, Ordering::SeqCst);
        Ok(vec![ops::add(ctx, &v[0], &one)?, ops::add(ctx, &v[1], &v[0])?, v[2].clone()])
    };
    while_loop(ctx, i_below_n, add_i, &[&i, &total, n], max_iterations)
}

#[test]
fn eager_cond_runs_the_branch_the_predicate_picks() {
    let ctx = Context::new().unwrap();
    let (then_runs, else_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let y = double_or_negate(&ctx, &f32_scalar(&ctx, 3.0), &then_runs, &else_runs).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [6.0]);
    assert_eq!((count(&then_runs), count(&else_runs)), (1, 0));
    let y = double_or_negate(&ctx, &f32_scalar(&ctx, -4.0), &then_runs, &else_runs).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [4.0]);
    assert_eq!((count(&then_runs), count(&else_runs)), (1, 1));
}

#[test]
fn eager_while_loop_sums_below_n() {
    let ctx = Context::new().unwrap();
    for n in [0, 1, 5, 10] {
        let (cond_runs, body_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let out = sum_below(&ctx, &i32_scalar(&ctx, n), None, &cond_runs, &body_runs).unwrap();
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].to_vec::<i32>().unwrap(), [n]);
        assert_eq!(out[1].to_vec::<i32>().unwrap(), [n * (n - 1) / 2], "n = {n}");
        // Eagerly the closures run once per test and iteration.
        assert_eq!((count(&cond_runs), count(&body_runs)), (n as usize + 1, n as usize));
    }
}

#[test]
fn max_iterations_stops_the_loop_eagerly_and_in_a_function() {
    let ctx = Context::new().unwrap();
    let (cond_runs, body_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let n = i32_scalar(&ctx, 10);
    let out = sum_below(&ctx, &n, Some(3), &cond_runs, &body_runs).unwrap();
    assert_eq!((out[0].to_vec::<i32>().unwrap(), out[1].to_vec::<i32>().unwrap()), (vec![3], vec![3]));
    let out = sum_below(&ctx, &n, Some(0), &cond_runs, &body_runs).unwrap();
    assert_eq!(out[1].to_vec::<i32>().unwrap(), [0]);

    let mut f = Function::new(&ctx, "sum_at_most_4", |ctx, x| {
        Ok(vec![sum_below(ctx, &x[0], Some(4), &cond_runs, &body_runs)?.remove(1)])
    })
    .unwrap();
    for (n, expected) in [(2, 1), (4, 6), (100, 6)] {
        assert_eq!(f.call(&[&i32_scalar(&ctx, n)]).unwrap()[0].to_vec::<i32>().unwrap(), [expected], "n = {n}");
    }
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn a_loop_with_a_data_dependent_trip_count_is_traced_once() {
    let ctx = Context::new().unwrap();
    let (cond_runs, body_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut f = Function::new(&ctx, "sum_below", |ctx, x| {
        Ok(vec![sum_below(ctx, &x[0], None, &cond_runs, &body_runs)?.remove(1)])
    })
    .unwrap();
    for n in [0, 3, 10, 100, 7] {
        let y = f.call(&[&i32_scalar(&ctx, n)]).unwrap();
        assert_eq!(y[0].to_vec::<i32>().unwrap(), [n * (n - 1) / 2], "n = {n}");
    }
    // Traced once (each closure ran once, into its subgraph); every replay stayed in C.
    assert_eq!((count(&cond_runs), count(&body_runs)), (1, 1));
    assert_eq!(f.num_traces(), 1);
    assert_eq!(f.num_outputs(0).unwrap(), 1);
    assert_eq!(f.num_outputs(1).unwrap_err().code(), Code::OutOfRange);
    assert!(f.dump(0).unwrap().contains("While"), "{}", f.dump(0).unwrap());
    // Exported with its loop and loaded back: the same results, no closure involved.
    let path = std::env::temp_dir().join(format!("cairn_rust_sum_below_{}.cairnfn", std::process::id()));
    f.export(&path).unwrap();
    let mut loaded = Function::load(&ctx, &path, 1).unwrap();
    for n in [0, 4, 9] {
        let y = loaded.call(&[&i32_scalar(&ctx, n)]).unwrap();
        assert_eq!(y[0].to_vec::<i32>().unwrap(), [n * (n - 1) / 2], "loaded, n = {n}");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_cond_in_a_function_picks_the_branch_from_the_data() {
    let ctx = Context::new().unwrap();
    let (then_runs, else_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut f = Function::new(&ctx, "double_or_negate", |ctx, x| {
        Ok(vec![double_or_negate(ctx, &x[0], &then_runs, &else_runs)?])
    })
    .unwrap();
    for (x, expected) in [(3.0, 6.0), (-4.0, 4.0), (0.5, 1.0), (0.0, -0.0), (-0.25, 0.25)] {
        assert_eq!(f.call(&[&f32_scalar(&ctx, x)]).unwrap()[0].to_vec::<f32>().unwrap(), [expected], "x = {x}");
    }
    // Both branches were traced once, at the first call.
    assert_eq!((count(&then_runs), count(&else_runs)), (1, 1));
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn a_cond_nested_in_a_loop_body_sums_the_even_numbers() {
    let ctx = Context::new().unwrap();
    let evens_below = |ctx: &Context, n: &Tensor| -> Result<Tensor> {
        let (zero, one, two) = (Tensor::scalar(ctx, 0i32)?, Tensor::scalar(ctx, 1i32)?, Tensor::scalar(ctx, 2i32)?);
        let body = |ctx: &Context, v: &[Tensor]| {
            let even = ops::equal(ctx, &ops::floor_mod(ctx, &v[0], &two)?, &zero, EqualAttrs::default())?;
            let term =
                cond(ctx, &even, &[&v[0]], |_, t| Ok(vec![t[0].clone()]), |_, _| Ok(vec![zero.clone()]), 1)?.remove(0);
            Ok(vec![ops::add(ctx, &v[0], &one)?, ops::add(ctx, &v[1], &term)?, v[2].clone()])
        };
        let out = while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], &v[2]), body, &[&zero, &zero, n], None)?;
        Ok(out[1].clone())
    };
    let mut f = Function::new(&ctx, "evens_below", |ctx, x| Ok(vec![evens_below(ctx, &x[0])?])).unwrap();
    for n in [0, 1, 4, 9, 20] {
        let expected: i32 = (0..n).filter(|i| i % 2 == 0).sum();
        let n = i32_scalar(&ctx, n);
        assert_eq!(evens_below(&ctx, &n).unwrap().to_vec::<i32>().unwrap(), [expected]);
        assert_eq!(f.call(&[&n]).unwrap()[0].to_vec::<i32>().unwrap(), [expected]);
    }
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn a_branch_may_assign_a_variable_and_return_nothing() {
    let ctx = Context::new().unwrap();
    let v = Variable::new(&ctx, &f32_scalar(&ctx, 0.0)).unwrap();
    let one = f32_scalar(&ctx, 1.0);
    let count_positive = |ctx: &Context, x: &Tensor| -> Result<()> {
        let positive = ops::greater(ctx, x, &Tensor::scalar(ctx, 0.0f32)?)?;
        let increment = |_: &Context, _: &[Tensor]| {
            v.assign_add(&one)?;
            Ok(vec![])
        };
        let outputs = cond(ctx, &positive, &[], increment, |_, _| Ok(vec![]), 0)?;
        assert!(outputs.is_empty());
        Ok(())
    };
    count_positive(&ctx, &f32_scalar(&ctx, 2.0)).unwrap();
    count_positive(&ctx, &f32_scalar(&ctx, -2.0)).unwrap();
    assert_eq!(v.read().unwrap().to_vec::<f32>().unwrap(), [1.0]);

    // Traced, the assignment happens at replay, only when the data picks its branch.
    let mut f = Function::new(&ctx, "count_positive", |ctx, x| {
        count_positive(ctx, &x[0])?;
        Ok(vec![v.read()?])
    })
    .unwrap();
    for (x, expected) in [(1.0, 2.0), (-1.0, 2.0), (3.0, 3.0), (0.0, 3.0)] {
        assert_eq!(f.call(&[&f32_scalar(&ctx, x)]).unwrap()[0].to_vec::<f32>().unwrap(), [expected], "x = {x}");
    }
    assert_eq!(f.num_traces(), 1);
}

/// x^n by a loop over (i, x^i), for the gradient tests.
fn power(ctx: &Context, x: &Tensor, n: &Tensor) -> Result<Tensor> {
    let (i, start, one) = (Tensor::scalar(ctx, 0i32)?, Tensor::scalar(ctx, 1.0f32)?, Tensor::scalar(ctx, 1i32)?);
    let times_x = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::add(ctx, &v[0], &one)?, ops::mul(ctx, &v[1], x)?]);
    let out = while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], n), times_x, &[&i, &start], None)?;
    Ok(out[1].clone())
}

#[test]
fn gradients_flow_through_eager_control_flow_and_compiled_calls_but_not_traced_tapes() {
    let ctx = Context::new().unwrap();
    let (x, n) = (f32_scalar(&ctx, 2.0), i32_scalar(&ctx, 3));

    // Eagerly every op of every iteration is taped: d(x^3)/dx = 3x^2 = 12.
    let tape = GradientTape::new(&ctx).unwrap();
    tape.watch(&x).unwrap();
    let y = power(&ctx, &x, &n).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), [8.0]);
    let dx = tape.gradient(&y, &[&x]).unwrap().remove(0).expect("connected");
    assert_eq!(dx.to_vec::<f32>().unwrap(), [12.0]);
    drop(tape); // it would go on recording this thread's ops

    // A compiled function called under a tape: the trace sees only symbolic inputs (nothing
    // watched), and the replay runs op by op under the tape, so it is differentiable too.
    let mut f = Function::new(&ctx, "power", |ctx, v| Ok(vec![power(ctx, &v[0], &v[1])?])).unwrap();
    for (n, expected, slope) in [(3, 8.0, 12.0), (4, 16.0, 32.0)] {
        let tape = GradientTape::new(&ctx).unwrap();
        tape.watch(&x).unwrap();
        let y = f.call(&[&x, &i32_scalar(&ctx, n)]).unwrap().remove(0); // traced, then replayed
        assert_eq!(y.to_vec::<f32>().unwrap(), [expected]);
        let dx = tape.gradient(&y, &[&x]).unwrap().remove(0).expect("connected");
        assert_eq!(dx.to_vec::<f32>().unwrap(), [slope], "n = {n}");
    }
    assert_eq!(f.num_traces(), 1);

    // A tape recording inside the trace would need the While node's gradient: refused.
    let mut taped = Function::new(&ctx, "taped_power", |ctx, v| {
        let tape = GradientTape::new(ctx)?;
        tape.watch(&v[0])?;
        let y = power(ctx, &v[0], &v[1])?;
        Ok(vec![tape.gradient(&y, &[&v[0]])?.remove(0).expect("connected")])
    })
    .unwrap();
    let err = taped.call(&[&x, &n]).unwrap_err();
    assert_eq!(err.code(), Code::Unimplemented, "{err}");
    assert!(err.message().contains("while_loop inside a traced function under a recording gradient tape"), "{err}");
}

/// A loop over (i, array, n) writing i * i to element i of an int32 array of 6 elements.
fn squares(ctx: &Context, n: &Tensor) -> Result<Tensor> {
    let (i, one) = (Tensor::scalar(ctx, 0i32)?, Tensor::scalar(ctx, 1i32)?);
    let array = tensor_array::create(ctx, DType::Int32, 6, &[])?;
    let write_square = |ctx: &Context, v: &[Tensor]| {
        let square = ops::mul(ctx, &v[0], &v[0])?;
        Ok(vec![ops::add(ctx, &v[0], &one)?, tensor_array::write(ctx, &v[1], &v[0], &square)?, v[2].clone()])
    };
    let out = while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], &v[2]), write_square, &[&i, &array, n], None)?;
    Ok(out[1].clone())
}

#[test]
fn a_tensor_array_filled_in_a_loop() {
    let ctx = Context::new().unwrap();
    let mut f = Function::new(&ctx, "squares", |ctx, x| Ok(vec![squares(ctx, &x[0])?])).unwrap();
    for (n, expected) in [(4, [0, 1, 4, 9, 0, 0]), (0, [0; 6]), (6, [0, 1, 4, 9, 16, 25]), (2, [0, 1, 0, 0, 0, 0])] {
        let n = i32_scalar(&ctx, n);
        let traced = f.call(&[&n]).unwrap().remove(0);
        assert_eq!(traced.shape(), [6]);
        assert_eq!(traced.to_vec::<i32>().unwrap(), expected);
        assert_eq!(squares(&ctx, &n).unwrap().to_vec::<i32>().unwrap(), expected, "eagerly");
    }
    assert_eq!(f.num_traces(), 1);

    // Reading the result eagerly, in and out of range (an int64 index works too).
    let array = f.call(&[&i32_scalar(&ctx, 5)]).unwrap().remove(0);
    let three = Tensor::scalar(&ctx, 3i64).unwrap();
    assert_eq!(tensor_array::read(&ctx, &array, &three).unwrap().to_vec::<i32>().unwrap(), [9]);
    let six = i32_scalar(&ctx, 6);
    let err = tensor_array::read(&ctx, &array, &six).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange, "{err}");
    assert!(err.message().contains("index 6"), "{err}");
    let err = tensor_array::write(&ctx, &array, &six, &i32_scalar(&ctx, 1)).unwrap_err();
    assert_eq!(err.code(), Code::OutOfRange, "{err}");
}

#[test]
fn tensor_array_writes_return_a_new_array() {
    let ctx = Context::new().unwrap();
    let empty = tensor_array::create(&ctx, DType::Float32, 3, &[2]).unwrap();
    assert_eq!((empty.dtype(), empty.shape()), (DType::Float32, vec![3, 2]));
    let one = i32_scalar(&ctx, 1);
    let value = Tensor::new(&ctx, &[5.0f32, 6.0], &[2]).unwrap();
    let array = tensor_array::write(&ctx, &empty, &one, &value).unwrap();
    assert_eq!(array.to_vec::<f32>().unwrap(), [0.0, 0.0, 5.0, 6.0, 0.0, 0.0]);
    assert_eq!(empty.to_vec::<f32>().unwrap(), [0.0; 6], "the old array is unchanged");
    assert_eq!(tensor_array::read(&ctx, &array, &one).unwrap().to_vec::<f32>().unwrap(), [5.0, 6.0]);
    assert_eq!(tensor_array::read(&ctx, &array, &i32_scalar(&ctx, 2)).unwrap().to_vec::<f32>().unwrap(), [0.0, 0.0]);

    let err = tensor_array::write(&ctx, &array, &one, &Tensor::new(&ctx, &[1.0f32; 3], &[3]).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "a value of another shape: {err}");
    let err = tensor_array::write(&ctx, &array, &f32_scalar(&ctx, 1.0), &value).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "a float index: {err}");
    let err = tensor_array::create(&ctx, DType::String, 3, &[]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = tensor_array::create(&ctx, DType::Float32, 2, &[-3]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "a negative dim: {err}");
}

#[test]
fn a_predicate_must_be_a_bool_of_one_element() {
    let ctx = Context::new().unwrap();
    let x = f32_scalar(&ctx, 1.0);
    let same = |_: &Context, v: &[Tensor]| Ok(vec![v[0].clone()]);
    let err = cond(&ctx, &i32_scalar(&ctx, 1), &[&x], same, same, 1).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("bool"), "{err}");
    let two_bools = Tensor::new(&ctx, &[true, false], &[2]).unwrap();
    assert_eq!(cond(&ctx, &two_bools, &[&x], same, same, 1).unwrap_err().code(), Code::InvalidArgument);

    // The same inside a function (checked at trace time), and a loop condition giving a float.
    let mut f = Function::new(&ctx, "int_predicate", |ctx, x| {
        let pred = ops::cast(ctx, &x[0], DType::Int32, Default::default())?;
        cond(ctx, &pred, &[&x[0]], same, same, 1)
    })
    .unwrap();
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().starts_with("function 'int_predicate': ") && err.message().contains("bool"), "{err}");
    assert_eq!(f.num_traces(), 0);

    let err = while_loop(&ctx, |_, v| Ok(v[0].clone()), same, &[&x], None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("bool"), "{err}");
}

#[test]
fn a_host_error_in_the_body_comes_back() {
    let ctx = Context::new().unwrap();
    let x = f32_scalar(&ctx, 1.0);
    let truth = Tensor::scalar(&ctx, true).unwrap();
    let refuse = |_: &Context, _: &[Tensor]| -> Result<Vec<Tensor>> {
        Err(Error::new(Code::FailedPrecondition, "the body refuses"))
    };

    // Eagerly: from while_loop, with the closure's code.
    let err = while_loop(&ctx, |_, _| Ok(truth.clone()), refuse, &[&x], None).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert_eq!(err.message(), "function 'while_loop's body': the body refuses");
    let err = cond(&ctx, &truth, &[&x], refuse, |_, v| Ok(vec![v[0].clone()]), 1).unwrap_err();
    assert_eq!(
        (err.code(), err.message()),
        (Code::FailedPrecondition, "function 'cond's then branch': the body refuses")
    );

    // During a trace: from Function::call, nothing cached, and the next call traces again.
    let fail = AtomicBool::new(true);
    let mut f = Function::new(&ctx, "refusing", |ctx, x| {
        let body = |ctx: &Context, v: &[Tensor]| {
            if fail.load(Ordering::SeqCst) {
                return Err(Error::new(Code::FailedPrecondition, "the body refuses"));
            }
            Ok(vec![ops::add(ctx, &v[0], &v[0])?])
        };
        let big = Tensor::scalar(ctx, 100.0f32)?;
        while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], &big), body, &[&x[0]], None)
    })
    .unwrap();
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert_eq!(err.message(), "function 'refusing': function 'while_loop's body': the body refuses");
    assert_eq!(f.num_traces(), 0);
    fail.store(false, Ordering::SeqCst);
    assert_eq!(f.call(&[&x]).unwrap()[0].to_vec::<f32>().unwrap(), [128.0]);
    assert_eq!(f.num_traces(), 1);
}

#[test]
fn a_panic_in_a_closure_comes_back_as_unknown() {
    let ctx = Context::new().unwrap();
    let x = f32_scalar(&ctx, 1.0);
    let pred = Tensor::scalar(&ctx, false).unwrap();
    let same = |_: &Context, v: &[Tensor]| Ok(vec![v[0].clone()]);
    let panicking = |_: &Context, _: &[Tensor]| -> Result<Vec<Tensor>> { panic!("boom in a branch") };
    let err = cond(&ctx, &pred, &[&x], same, panicking, 1).unwrap_err();
    assert_eq!(err.code(), Code::Unknown, "{err}");
    assert_eq!(err.message(), "function 'cond's else branch': the closure panicked: boom in a branch");

    // Traced, the then branch panics even though only the else branch would run.
    let mut f = Function::new(&ctx, "panicky", |ctx, x| {
        let pred = ops::greater(ctx, &x[0], &x[0])?;
        cond(ctx, &pred, &[&x[0]], panicking, same, 1)
    })
    .unwrap();
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::Unknown, "{err}");
    assert!(err.message().ends_with("the closure panicked: boom in a branch"), "{err}");
    let err = while_loop(&ctx, |_, _| panic!("boom in a condition"), same, &[&x], None).unwrap_err();
    assert_eq!(err.message(), "function 'while_loop's cond': the closure panicked: boom in a condition");
}

#[test]
fn a_loop_variable_keeps_its_dtype_and_shape() {
    let ctx = Context::new().unwrap();
    let x = Tensor::new(&ctx, &[1.0f32, 2.0], &[2]).unwrap();
    let truth = Tensor::scalar(&ctx, true).unwrap();
    let reshape = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::reshape(ctx, &v[0], &[1, 2])?]);
    let err = while_loop(&ctx, |_, _| Ok(truth.clone()), reshape, &[&x], None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("body result 0 is float32[1,2], but loop variable 0 is float32[2]"), "{err}");

    // Inside a function the body's shape is checked at trace time, whatever the trip count.
    let mut f = Function::new(&ctx, "grows", |ctx, x| {
        let never = Tensor::scalar(ctx, false)?;
        let widen = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::cast(ctx, &v[0], DType::Float64, Default::default())?]);
        while_loop(ctx, |_, _| Ok(never.clone()), widen, &[&x[0]], None)
    })
    .unwrap();
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("body result 0 is float64[2]"), "{err}");

    let err = while_loop(&ctx, |_, _| Ok(truth.clone()), reshape, &[], None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("at least one loop variable"), "{err}");
}

#[test]
fn branches_must_return_what_cond_expects() {
    let ctx = Context::new().unwrap();
    let x = f32_scalar(&ctx, 1.0);
    let truth = Tensor::scalar(&ctx, true).unwrap();
    let twice = |_: &Context, v: &[Tensor]| Ok(vec![v[0].clone(), v[0].clone()]);
    let err = cond(&ctx, &truth, &[&x], twice, twice, 1).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("returned 2 tensor(s), but cond's then branch has 1 output(s)"), "{err}");

    // Traced, both branches must agree in dtype.
    let mut f = Function::new(&ctx, "disagree", |ctx, x| {
        let pred = ops::greater(ctx, &x[0], &x[0])?;
        let as_f64 = |ctx: &Context, v: &[Tensor]| Ok(vec![ops::cast(ctx, &v[0], DType::Float64, Default::default())?]);
        cond(ctx, &pred, &[&x[0]], |_, v| Ok(vec![v[0].clone()]), as_f64, 1)
    })
    .unwrap();
    let err = f.call(&[&x]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("then branch") && err.message().contains("else branch"), "{err}");
}

// ---- The headline case: an RNN over a data-dependent length ----

const STEPS: usize = 5;
const INPUT: usize = 3;
const HIDDEN: usize = 4;

/// h_t = tanh(x_t W + h_{t-1} U) for t < n, from h = 0; `xs` is [STEPS, 1, INPUT]. Returns the
/// last h ([1, HIDDEN]) and the TensorArray of every h_t ([STEPS, 1, HIDDEN], zeros past n).
/// `xs`, `n` and the weights are captured by the loop's closures, not loop variables.
fn rnn(
    ctx: &Context,
    xs: &Tensor,
    n: &Tensor,
    w: &Variable,
    u: &Variable,
    body_runs: &AtomicUsize,
) -> Result<Vec<Tensor>> {
    let t = Tensor::scalar(ctx, 0i32)?;
    let h = Tensor::new(ctx, &[0.0f32; HIDDEN], &[1, HIDDEN as i64])?;
    let outputs = tensor_array::create(ctx, DType::Float32, STEPS, &[1, HIDDEN as i64])?;
    let one = Tensor::scalar(ctx, 1i32)?;
    let step = |ctx: &Context, v: &[Tensor]| {
        body_runs.fetch_add(1, Ordering::SeqCst);
        let x_t = tensor_array::read(ctx, xs, &v[0])?;
        let input = ops::mat_mul(ctx, &x_t, &w.read()?, MatMulAttrs::default())?;
        let recurrent = ops::mat_mul(ctx, &v[1], &u.read()?, MatMulAttrs::default())?;
        let h = ops::tanh(ctx, &ops::add(ctx, &input, &recurrent)?)?;
        Ok(vec![ops::add(ctx, &v[0], &one)?, h.clone(), tensor_array::write(ctx, &v[2], &v[0], &h)?])
    };
    let out = while_loop(ctx, |ctx, v| ops::less(ctx, &v[0], n), step, &[&t, &h, &outputs], None)?;
    Ok(vec![out[1].clone(), out[2].clone()])
}

/// The same recurrence in plain Rust: every h_t, row-major.
fn rnn_reference(xs: &[f32], n: usize, w: &[f32], u: &[f32]) -> Vec<Vec<f32>> {
    let mut h = vec![0.0f32; HIDDEN];
    let mut all = Vec::new();
    for t in 0..n {
        let x = &xs[t * INPUT..(t + 1) * INPUT];
        h = (0..HIDDEN)
            .map(|j| {
                let a: f32 = (0..INPUT).map(|k| x[k] * w[k * HIDDEN + j]).sum();
                let b: f32 = (0..HIDDEN).map(|k| h[k] * u[k * HIDDEN + j]).sum();
                (a + b).tanh()
            })
            .collect();
        all.push(h.clone());
    }
    all
}

fn assert_close(actual: &[f32], expected: &[f32], what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!((a - e).abs() <= 1e-5, "{what}: element {i} is {a}, expected {e}");
    }
}

#[test]
fn an_rnn_over_a_data_dependent_length_matches_eager_execution() {
    let ctx = Context::new().unwrap();
    let wave = |len: usize, scale: f32| -> Vec<f32> { (0..len).map(|i| scale * ((i as f32) * 0.7).sin()).collect() };
    let (w_values, u_values) = (wave(INPUT * HIDDEN, 0.8), wave(HIDDEN * HIDDEN, 0.5));
    let w = Variable::new(&ctx, &Tensor::new(&ctx, &w_values, &[INPUT as i64, HIDDEN as i64]).unwrap()).unwrap();
    let u = Variable::new(&ctx, &Tensor::new(&ctx, &u_values, &[HIDDEN as i64, HIDDEN as i64]).unwrap()).unwrap();
    let xs_values: Vec<f32> = (0..STEPS * INPUT).map(|i| ((i as f32) * 0.37).cos()).collect();
    let xs = Tensor::new(&ctx, &xs_values, &[STEPS as i64, 1, INPUT as i64]).unwrap();

    let (traced_runs, eager_runs) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut f = Function::with_options(&ctx, "rnn", cairn::FunctionOptions::new().outputs(2), |ctx, x| {
        rnn(ctx, &x[0], &x[1], &w, &u, &traced_runs)
    })
    .unwrap();

    let mut check_lengths = |u_values: &[f32]| {
        for len in [3, 0, 5, 1] {
            let n = i32_scalar(&ctx, len as i32);
            let traced = f.call(&[&xs, &n]).unwrap();
            let eager = rnn(&ctx, &xs, &n, &w, &u, &eager_runs).unwrap();
            let reference = rnn_reference(&xs_values, len, &w_values, u_values);
            let mut all = reference.concat();
            all.resize(STEPS * HIDDEN, 0.0); // unwritten steps are zeros
            let last = reference.last().cloned().unwrap_or_else(|| vec![0.0; HIDDEN]);
            for (got, what) in [(&traced, "traced"), (&eager, "eager")] {
                assert_eq!(got[1].shape(), [STEPS as i64, 1, HIDDEN as i64]);
                assert_close(&got[0].to_vec::<f32>().unwrap(), &last, &format!("{what} last h, n = {len}"));
                assert_close(&got[1].to_vec::<f32>().unwrap(), &all, &format!("{what} outputs, n = {len}"));
            }
            assert_eq!(traced[1].to_vec::<f32>().unwrap(), eager[1].to_vec::<f32>().unwrap(), "n = {len}");
        }
    };
    check_lengths(&u_values);
    // The weights are variables, captured by reference: a replay reads their new values.
    let u2: Vec<f32> = u_values.iter().map(|v| -v).collect();
    u.assign(&Tensor::new(&ctx, &u2, &[HIDDEN as i64, HIDDEN as i64]).unwrap()).unwrap();
    check_lengths(&u2);

    assert_eq!(f.num_traces(), 1);
    assert_eq!(count(&traced_runs), 1, "the body was traced once");
    assert_eq!(count(&eager_runs), 2 * (3 + 5 + 1), "eagerly it ran once per step");
    assert_eq!(f.num_outputs(0).unwrap(), 2);
}
