//! Mirrored replicas (cairn::distribute): a run with an all-reduce on 2 logical CPU devices, reduce,
//! batches and iterators split over the replicas, failing and panicking steps (errors naming the
//! replica, no hang), fit of a model made in the strategy's scope against one device, bad input.

use std::time::{Duration, Instant};

use cairn::data::Dataset;
use cairn::distribute::{compute_average_loss, MirroredStrategy};
use cairn::{
    sys, Activation, Code, CompileOptions, Context, ContextOptions, DenseOptions, Error, FitOptions, Layer, Model,
    Optimizer, OptimizerOptions, Reduction, Tensor, Verbose,
};

/// A context seeded 1 whose CPU is split into `n` logical devices (through the raw layer).
fn split_context(n: usize) -> Context {
    let ctx = Context::with_options(ContextOptions::new().seed(1)).unwrap();
    if n > 1 {
        let configs = vec![sys::CAIRN_LOGICAL_DEVICE_CONFIG_INIT; n];
        // SAFETY: a live context, a NUL-terminated name and n configs borrowed for the call.
        let status =
            unsafe { sys::cairn_context_set_logical_devices(ctx.as_raw(), c"cpu:0".as_ptr(), configs.as_ptr(), n) };
        assert!(status.is_null(), "cairn_context_set_logical_devices failed");
    }
    ctx
}

#[test]
fn run_all_reduce_and_reduce() {
    let ctx = split_context(2);
    let s = MirroredStrategy::new(&ctx, &[]).unwrap();
    assert_eq!(s.num_replicas(), 2);
    assert_eq!(s.devices(), ["cpu:0", "cpu:1"]);
    let out = s
        .run(|r| {
            let mine = Tensor::scalar(r.context(), (r.id() + 1) as f32)?;
            let mut sum = r.all_reduce(Reduction::Sum, &[&mine])?;
            Ok(vec![sum.remove(0), mine])
        })
        .unwrap();
    assert_eq!(out.len(), 2);
    for (r, outs) in out.iter().enumerate() {
        assert_eq!(outs[0].to_vec::<f32>().unwrap(), [3.0]);
        assert_eq!(outs[0].device(), s.devices()[r]);
    }
    let mean = s.reduce(Reduction::Mean, &[&out[0][1], &out[1][1]]).unwrap();
    assert_eq!(mean.to_vec::<f32>().unwrap(), [1.5]);
    let err = s.reduce(Reduction::Sum, &[&out[0][1]]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("1 values for 2 replicas"), "{err}");

    // The replica's id and device as the step sees them.
    let seen =
        s.run(|r| Ok(vec![Tensor::scalar(r.context(), r.id() as i32)?, Tensor::scalar(r.context(), 0u8)?])).unwrap();
    for (r, outs) in seen.iter().enumerate() {
        assert_eq!(outs[0].to_vec::<i32>().unwrap(), [r as i32]);
        assert_eq!(outs[1].device(), s.devices()[r]);
    }
    let devices = s.run(|r| {
        assert_eq!(r.device(), r.context().device_scope_name());
        Ok(vec![])
    });
    assert!(devices.is_ok());
}

trait ScopeName {
    fn device_scope_name(&self) -> String;
}

impl ScopeName for Context {
    fn device_scope_name(&self) -> String {
        self.current_device_scope().unwrap().unwrap_or_default()
    }
}

#[test]
fn failing_and_panicking_replicas() {
    let ctx = split_context(2);
    let s = MirroredStrategy::with_collective_timeout(&ctx, &[], Duration::from_secs(60)).unwrap();
    // Replica 1 fails; replica 0 waits in an all-reduce that can never complete: it ends at once.
    let start = Instant::now();
    let err = s
        .run(|r| {
            if r.id() == 1 {
                return Err(Error::new(Code::DataLoss, "the replica's data is bad"));
            }
            let one = Tensor::scalar(r.context(), 1.0f32)?;
            r.all_reduce(Reduction::Sum, &[&one])?;
            Ok(vec![])
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::DataLoss);
    assert!(err.message().contains("replica 1") && err.message().contains("the replica's data is bad"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30), "the failed run took {:?}", start.elapsed());

    let err = s
        .run(|r| {
            if r.id() == 0 {
                panic!("boom");
            }
            Ok(vec![])
        })
        .unwrap_err();
    assert_eq!(err.code(), Code::Unknown);
    assert!(err.message().contains("replica 0") && err.message().contains("panicked: boom"), "{err}");

    // A run cannot start another.
    let err = s.run(|_| s.run(|_| Ok(vec![])).map(|_| vec![])).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");

    // The strategy still works.
    let out = s.run(|_| Ok(vec![])).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out[0].is_empty());
}

#[test]
fn split_batch_iterator_and_average_loss() {
    let ctx = split_context(2);
    let s = MirroredStrategy::new(&ctx, &["cpu:1", "cpu:0"]).unwrap();
    let g = Tensor::new(&ctx, &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[5, 2]).unwrap();
    let parts = s.split_batch(&g).unwrap();
    assert_eq!(parts[0].shape(), [3, 2]);
    assert_eq!(parts[1].shape(), [2, 2]);
    assert_eq!(parts[0].device(), "cpu:1");
    assert_eq!(parts[1].to_vec::<f32>().unwrap(), [6.0, 7.0, 8.0, 9.0]);
    let err = s.split_batch(&Tensor::scalar(&ctx, 1.0f32).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    let y = Tensor::new(&ctx, &[0i32, 1, 2, 3, 4], &[5]).unwrap();
    let ds = Dataset::from_tensor_slices(&ctx, &[("x", &g), ("y", &y)]).unwrap().batch(4, false).unwrap();
    let it = ds.iterate().unwrap();
    let first = s.iterator_next(&it).unwrap().unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[1][0].shape(), [2, 2]);
    assert_eq!(first[1][1].to_vec::<i32>().unwrap(), [2, 3]);
    // The last global batch has 1 row for 2 replicas.
    assert_eq!(s.iterator_next(&it).unwrap_err().code(), Code::InvalidArgument);
    assert!(s.iterator_next(&it).unwrap().is_none());

    let loss = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    assert_eq!(compute_average_loss(&ctx, &loss, 8).unwrap().to_vec::<f32>().unwrap(), [1.25]);
    assert_eq!(compute_average_loss(&ctx, &loss, 0).unwrap_err().code(), Code::InvalidArgument);
}

/// 64 samples of 4 features in 3 classes.
fn blobs(ctx: &Context) -> (Tensor, Tensor) {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in 0..64 {
        y.push((i % 3) as i32);
        for f in 0..4 {
            x.push(((i * 7 + f * 13) as f32).sin() * 0.8 + if f == i % 3 { 2.0 } else { 0.0 });
        }
    }
    (Tensor::new(ctx, &x, &[64, 4]).unwrap(), Tensor::new(ctx, &y, &[64]).unwrap())
}

/// Dense(16, relu) -> Dense(3) with SGD, made and compiled in `s`'s scope when given, trained 3
/// epochs of 16-row global batches; its weights, concatenated.
fn train(ctx: &Context, s: Option<&MirroredStrategy>) -> Vec<f32> {
    let build = || -> cairn::Result<Model> {
        let model = Model::new(
            ctx,
            &[
                &Layer::dense(ctx, DenseOptions::new(16).activation(Activation::Relu))?,
                &Layer::dense(ctx, DenseOptions::new(3))?,
            ],
        )?;
        let sgd = Optimizer::new(ctx, OptimizerOptions::sgd().learning_rate(0.1))?;
        model.compile(CompileOptions::new(&sgd, "sparse_categorical_crossentropy"))?;
        Ok(model)
    };
    let model = match s {
        Some(s) => s.scope(build).unwrap(),
        None => build().unwrap(),
    };
    let (x, y) = blobs(ctx);
    model.fit((&x, &y), FitOptions::new().epochs(3).batch_size(16).verbose(Verbose::Silent)).unwrap();
    model.weights().unwrap().iter().flat_map(|w| w.read().unwrap().to_vec::<f32>().unwrap()).collect()
}

#[test]
fn fit_in_scope_matches_one_device() {
    let one = split_context(1);
    let two = split_context(2);
    let s = MirroredStrategy::new(&two, &[]).unwrap();
    let w1 = train(&one, None);
    let w2 = train(&two, Some(&s));
    assert_eq!(w1.len(), 4 * 16 + 16 + 16 * 3 + 3);
    assert_eq!(w2.len(), w1.len());
    let max_w = w1.iter().fold(0.0f32, |m, w| m.max(w.abs()));
    let max_diff = w1.iter().zip(&w2).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
    // The replicas' gradients are summed in another order than one device's: the bound of the
    // float reduction order over 12 SGD steps (as tests/capi/distribute_test.c).
    assert!(max_diff <= 1e-5 * max_w && max_w > 0.1, "max |w2 - w1| = {max_diff}, max |w| = {max_w}");
}

#[test]
fn bad_input_and_scopes() {
    let ctx = split_context(2);
    let err = MirroredStrategy::new(&ctx, &["cpu:0", "cpu:7"]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("cpu:7"), "{err}");
    let err = MirroredStrategy::new(&ctx, &["cpu:1", "cpu:1"]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    let err = MirroredStrategy::with_collective_timeout(&ctx, &[], Duration::ZERO).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("collective_timeout_ms"), "{err}");
    let err = MirroredStrategy::new(&ctx, &["cpu\0"]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    let s = MirroredStrategy::new(&ctx, &[]).unwrap();
    let err = s.scope(|| -> cairn::Result<()> { Err(Error::new(Code::Aborted, "stop")) }).unwrap_err();
    assert_eq!(err.code(), Code::Aborted);
    // A panic leaves the scope too: a later scope opens and closes cleanly.
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        s.scope(|| -> cairn::Result<()> { panic!("in scope") })
    }));
    assert!(panicked.is_err());
    assert_eq!(s.scope(|| Ok(7)).unwrap(), 7);
    // MirroredStrategy is Send + Sync.
    fn send_sync<T: Send + Sync>(_: &T) {}
    send_sync(&s);
}
