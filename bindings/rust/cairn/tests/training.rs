//! The training section: gradient tape, optimizers and schedules, layers and Sequential, losses,
//! metrics, a small training loop, and checkpoints of optimizers, layers and metrics.

use cairn::{
    losses, ops, Accuracy, Activation, Checkpoint, Code, Context, ContextOptions, Conv2DOptions, DType, DenseOptions,
    GradientOptions, GradientTape, Initializer, Layer, LossKind, Mean, NormOptions, Object, ObjectKind, Optimizer,
    OptimizerKind, OptimizerOptions, Padding, Pool2DOptions, Schedule, Sequential, TapeOptions, Tensor, Unconnected,
    Variable, VariableOptions,
};

fn ctx() -> Context {
    Context::with_options(ContextOptions::new().seed(3)).unwrap()
}

fn f32s(ctx: &Context, values: &[f32], shape: &[i64]) -> Tensor {
    Tensor::new(ctx, values, shape).unwrap()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

fn scalar(t: &Tensor) -> f32 {
    let v = values(t);
    assert_eq!(v.len(), 1, "{t:?}");
    v[0]
}

fn var(ctx: &Context, values: &[f32], shape: &[i64], name: &str) -> Variable {
    Variable::with_options(ctx, &f32s(ctx, values, shape), VariableOptions::new().name(name)).unwrap()
}

fn assert_close(got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{got:?} vs {want:?}");
    }
}

fn sum_all(ctx: &Context, t: &Tensor) -> Tensor {
    ops::sum(ctx, t, Default::default()).unwrap()
}

// ---- Gradient tape ----

/// y = sum(x * x * w): dy/dx = 2 x w; w is not watched, so it is unconnected.
#[test]
fn tape_gradient_of_watched_tensors_and_the_unconnected_choice() {
    let ctx = ctx();
    let x = f32s(&ctx, &[1.0, -2.0], &[2]);
    let w = f32s(&ctx, &[3.0, 0.5], &[2]);
    let tape = GradientTape::with_options(&ctx, TapeOptions::new().persistent(true)).unwrap();
    tape.watch(&x).unwrap();
    let y = sum_all(&ctx, &ops::mul(&ctx, &ops::mul(&ctx, &x, &x).unwrap(), &w).unwrap());
    let g = tape.gradient(&y, &[&x, &w]).unwrap();
    assert_eq!(values(g[0].as_ref().unwrap()), [6.0, -2.0]);
    assert!(g[1].is_none(), "w was never watched");
    // A persistent tape answers again; zeros for the unconnected source on request.
    let g = tape.gradient_with(&y, &[&w], GradientOptions::new().unconnected(Unconnected::Zero)).unwrap();
    assert_eq!(values(g[0].as_ref().unwrap()), [0.0, 0.0]);
}

#[test]
fn tape_non_persistent_allows_one_call_and_refuses_integers() {
    let ctx = ctx();
    let x = f32s(&ctx, &[2.0], &[1]);
    let tape = GradientTape::new(&ctx).unwrap();
    tape.watch(&x).unwrap();
    let y = ops::square(&ctx, &x).unwrap();
    assert_eq!(values(tape.gradient(&y, &[&x]).unwrap()[0].as_ref().unwrap()), [4.0]);
    let err = tape.gradient(&y, &[&x]).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");
    assert!(err.message().contains("non-persistent"), "{err}");

    let tape = GradientTape::new(&ctx).unwrap();
    let err = tape.watch(&Tensor::new(&ctx, &[1i32], &[1]).unwrap()).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn tape_output_gradient_weighs_the_target() {
    let ctx = ctx();
    let x = f32s(&ctx, &[1.0, 2.0, 3.0], &[3]);
    let tape = GradientTape::new(&ctx).unwrap();
    tape.watch(&x).unwrap();
    let y = ops::square(&ctx, &x).unwrap();
    let w = f32s(&ctx, &[1.0, 0.0, -1.0], &[3]);
    let g = tape.gradient_with(&y, &[&x], GradientOptions::new().output_gradient(&w)).unwrap();
    assert_eq!(values(g[0].as_ref().unwrap()), [2.0, 0.0, -6.0]);
}

#[test]
fn tape_stop_and_resume_recording() {
    let ctx = ctx();
    let x = f32s(&ctx, &[3.0], &[1]);
    let tape = GradientTape::with_options(&ctx, TapeOptions::new().persistent(true)).unwrap();
    tape.watch(&x).unwrap();
    tape.stop_recording();
    let hidden = ops::square(&ctx, &x).unwrap();
    tape.resume_recording();
    let seen = ops::square(&ctx, &x).unwrap();
    let paused = tape.without_recording(|| ops::mul(&ctx, &x, &x).unwrap());
    let again = ops::mul(&ctx, &x, &x).unwrap(); // recording resumed after the closure
    let g = tape.gradient(&hidden, &[&x]).unwrap();
    assert!(g[0].is_none(), "an op run while stopped is not recorded");
    assert_eq!(values(tape.gradient(&seen, &[&x]).unwrap()[0].as_ref().unwrap()), [6.0]);
    assert!(tape.gradient(&paused, &[&x]).unwrap()[0].is_none());
    assert_eq!(values(tape.gradient(&again, &[&x]).unwrap()[0].as_ref().unwrap()), [6.0]);
}

#[test]
fn tape_gradient_for_variables() {
    let ctx = ctx();
    let v = var(&ctx, &[2.0, 3.0], &[2], "v");
    let frozen =
        Variable::with_options(&ctx, &f32s(&ctx, &[5.0], &[1]), VariableOptions::new().name("frozen").trainable(false))
            .unwrap();
    // Trainable variables read under the tape are watched; a non-trainable one only on request.
    let tape = GradientTape::new(&ctx).unwrap();
    tape.watch_variable(&frozen).unwrap();
    let y = sum_all(&ctx, &ops::mul(&ctx, &v.read().unwrap(), &frozen.read().unwrap()).unwrap());
    let g = tape.gradient_variables(&y, &[&v, &frozen]).unwrap();
    assert_eq!(values(g[0].as_ref().unwrap()), [5.0, 5.0]);
    assert_eq!(values(g[1].as_ref().unwrap()), [5.0]);

    // Without watch_accessed_variables nothing is watched by reading.
    let tape = GradientTape::with_options(&ctx, TapeOptions::new().watch_accessed_variables(false)).unwrap();
    let y = ops::square(&ctx, &v.read().unwrap()).unwrap();
    let g = tape.gradient_variables_with(&y, &[&v], GradientOptions::new().unconnected(Unconnected::Zero)).unwrap();
    assert_eq!(values(g[0].as_ref().unwrap()), [0.0, 0.0]);
}

#[test]
fn nested_tapes_give_second_derivatives() {
    let ctx = ctx();
    let x = f32s(&ctx, &[2.0], &[1]);
    let outer = GradientTape::new(&ctx).unwrap();
    outer.watch(&x).unwrap();
    let inner = GradientTape::new(&ctx).unwrap();
    inner.watch(&x).unwrap();
    let y = ops::mul(&ctx, &ops::square(&ctx, &x).unwrap(), &x).unwrap(); // x^3
    let dy = inner.gradient(&y, &[&x]).unwrap().remove(0).unwrap(); // 3 x^2
    drop(inner);
    let d2y = outer.gradient(&dy, &[&x]).unwrap().remove(0).unwrap(); // 6 x
    assert_eq!(values(&dy), [12.0]);
    assert_eq!(values(&d2y), [12.0]);
}

// ---- Optimizers and schedules ----

/// SGD with momentum on loss v^2 (gradient 10 at v = 5): m = -lr g = -1, v = 4.
#[test]
fn sgd_momentum_step_slots_and_learning_rate() {
    let ctx = ctx();
    let v = var(&ctx, &[5.0], &[], "v");
    let opt = Optimizer::new(&ctx, OptimizerOptions::new(OptimizerKind::Sgd).learning_rate(0.1).momentum(0.9)).unwrap();
    assert_eq!(opt.kind(), ObjectKind::Optimizer);
    let err = opt.slot(&v, "momentum").unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
    assert!(err.message().contains("momentum"), "{err}");
    let grad = f32s(&ctx, &[10.0], &[]);
    opt.apply_gradients(&[Some(&grad)], &[&v]).unwrap();
    assert_close(&values(&v.read().unwrap()), &[4.0], 1e-6);
    assert_eq!(opt.iterations().unwrap(), 1);
    assert!((opt.learning_rate().unwrap() - 0.1).abs() < 1e-7);
    let momentum = opt.slot(&v, "momentum").unwrap();
    assert_close(&values(&momentum.read().unwrap()), &[-1.0], 1e-6);
    // Second step: m = 0.9 * -1 - 0.1 * 10 = -1.9 at lr 0.1; then a new learning rate.
    opt.apply_gradients(&[Some(&grad)], &[&v]).unwrap();
    assert_close(&values(&v.read().unwrap()), &[2.1], 1e-6);
    opt.set_learning_rate(0.5).unwrap();
    assert_eq!(opt.learning_rate().unwrap(), 0.5);
    assert!(format!("{opt:?}").contains("iterations 2"));
}

#[test]
fn optimizer_errors_name_what_was_wrong() {
    let ctx = ctx();
    let err = Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(-1.0)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("learning_rate"), "{err}");
    let err = Optimizer::new(&ctx, OptimizerOptions::adam().beta_1(1.5)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("beta_1"), "{err}");

    let opt = Optimizer::new(&ctx, OptimizerOptions::adam()).unwrap();
    let v = var(&ctx, &[1.0, 2.0], &[2], "v");
    let wrong_shape = f32s(&ctx, &[1.0], &[1]);
    let err = opt.apply_gradients(&[Some(&wrong_shape)], &[&v]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("v:0"), "{err}");
    let err = opt.apply_gradients::<&Tensor, &Variable>(&[None, None], &[&v]).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("2 gradients for 1 variables"), "{err}");
    assert_eq!(opt.iterations().unwrap(), 0, "nothing was applied");
    // A None gradient skips its variable; the others are updated and the step counts.
    let u = var(&ctx, &[0.0], &[1], "u");
    let gu = f32s(&ctx, &[1.0], &[1]);
    opt.apply_gradients(&[None, Some(&gu)], &[&v, &u]).unwrap();
    assert_eq!(values(&v.read().unwrap()), [1.0, 2.0]);
    assert!(values(&u.read().unwrap())[0] < 0.0);
    assert_eq!(opt.iterations().unwrap(), 1);
    // Only None gradients: an error naming the variables.
    let err = opt.apply_gradients::<&Tensor, &Variable>(&[None], &[&v]).unwrap_err();
    assert!(err.message().contains("no gradients"), "{err}");
    // An optimizer handle of the wrong kind.
    let err = Optimizer::try_from(Object::from(v.clone())).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

#[test]
fn every_optimizer_kind_steps_against_the_gradient_and_keeps_its_slots() {
    let ctx = ctx();
    let cases: [(OptimizerOptions<'_>, &[&str]); 4] = [
        (OptimizerOptions::sgd().momentum(0.5).nesterov(true), &["momentum"]),
        (OptimizerOptions::adam().beta_1(0.8).beta_2(0.99).epsilon(1e-6), &["m", "v"]),
        (OptimizerOptions::adamw().weight_decay(0.01), &["m", "v"]),
        (OptimizerOptions::rmsprop().rho(0.8).momentum(0.1).centered(true), &["rms", "momentum", "mg"]),
    ];
    for (options, slots) in cases {
        let opt = Optimizer::new(&ctx, options.learning_rate(0.01)).unwrap();
        let v = var(&ctx, &[1.0, -1.0], &[2], "w");
        let g = f32s(&ctx, &[1.0, -1.0], &[2]);
        opt.apply_gradients(&[Some(g)], std::slice::from_ref(&v)).unwrap(); // owned handles work too
        let now = values(&v.read().unwrap());
        assert!(now[0] < 1.0 && now[1] > -1.0, "{options:?}: {now:?}");
        for slot in slots {
            assert_eq!(opt.slot(&v, slot).unwrap().shape().unwrap(), [2], "{options:?} slot {slot}");
        }
    }
}

/// One SGD step on `v` (gradient 0: only the step counter and the schedule move).
fn step(opt: &Optimizer, v: &Variable, ctx: &Context) {
    opt.apply_gradients(&[Some(f32s(ctx, &[0.0], &[1]))], &[v]).unwrap();
}

#[test]
fn schedules_drive_the_learning_rate() {
    let ctx = ctx();
    let v = var(&ctx, &[1.0], &[1], "v");
    let smooth = Schedule::exponential_decay(&ctx, 0.1, 2, 0.5, false).unwrap();
    let stairs = Schedule::exponential_decay(&ctx, 0.1, 2, 0.5, true).unwrap();
    let (a, b) = (
        Optimizer::new(&ctx, OptimizerOptions::sgd().schedule(&smooth)).unwrap(),
        Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(7.0).schedule(&stairs)).unwrap(),
    );
    assert!((a.learning_rate().unwrap() - 0.1).abs() < 1e-7);
    step(&a, &v, &ctx);
    step(&b, &v, &ctx);
    assert!((a.learning_rate().unwrap() - 0.1 * 0.5f64.sqrt()).abs() < 1e-7);
    assert!((b.learning_rate().unwrap() - 0.1).abs() < 1e-7, "staircase: floor(1 / 2) = 0");
    step(&b, &v, &ctx);
    assert!((b.learning_rate().unwrap() - 0.05).abs() < 1e-7);
    let err = a.set_learning_rate(0.3).unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err}");

    let cosine = Schedule::cosine_decay(&ctx, 1.0, 4, 0.1).unwrap();
    let c = Optimizer::new(&ctx, OptimizerOptions::sgd().schedule(&cosine)).unwrap();
    let mut seen = vec![];
    for _ in 0..6 {
        seen.push(c.learning_rate().unwrap() as f32);
        step(&c, &v, &ctx);
    }
    let half = 0.9 * 0.5 * (1.0 + (std::f32::consts::PI / 4.0).cos()) + 0.1;
    let quarter = 0.9 * 0.5 * (1.0 + (3.0 * std::f32::consts::PI / 4.0).cos()) + 0.1;
    assert_close(&seen, &[1.0, half, 0.55, quarter, 0.1, 0.1], 1e-6);

    let err = Schedule::exponential_decay(&ctx, 0.1, 0, 0.5, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("decay_steps"), "{err}");
    let err = Schedule::cosine_decay(&ctx, 0.1, 10, 2.0).unwrap_err();
    assert!(err.message().contains("alpha"), "{err}");
}

// ---- Layers ----

#[test]
fn dense_builds_on_first_call_and_sequential_collects_weights() {
    let ctx = ctx();
    let dense = Layer::dense(
        &ctx,
        DenseOptions::new(3)
            .activation(Activation::Relu)
            .kernel_initializer(Initializer::Ones)
            .bias_initializer(Initializer::Zeros)
            .name("hidden"),
    )
    .unwrap();
    assert_eq!(dense.kind(), ObjectKind::Layer);
    let model = Sequential::new(&ctx, Some("model")).unwrap();
    model.add(&dense).unwrap();
    model.add(&Layer::dense(&ctx, DenseOptions::new(2).use_bias(false)).unwrap()).unwrap();
    assert_eq!(model.count_params().unwrap(), 0);
    assert!(model.weights().unwrap().is_empty());
    let x = f32s(&ctx, &[1.0, 2.0, 3.0, -4.0, -5.0, -6.0], &[2, 3]);
    // kernel of ones, zero bias, relu: rows sum to 6 and -15 -> [6, 6, 6] and [0, 0, 0].
    assert_eq!(values(&dense.call(&x, false).unwrap()), [6.0, 6.0, 6.0, 0.0, 0.0, 0.0]);
    assert_eq!(model.call(&x, false).unwrap().shape(), [2, 2]);
    assert_eq!(model.count_params().unwrap(), 12 + 6);
    let names: Vec<String> = model.trainable_weights().unwrap().iter().map(|v| v.name().to_string()).collect();
    assert_eq!(names.len(), 3);
    assert!(names[0].contains("hidden") && names[0].contains("kernel"), "{names:?}");
    assert!(names[1].contains("hidden") && names[1].contains("bias"), "{names:?}");
    let summary = model.summary().unwrap();
    assert!(summary.contains("Model: \"model\"") && summary.contains("Dense") && summary.contains("18"), "{summary}");
    // The layers are the model's tracked edges.
    assert!(model.get("layer-0").unwrap().is_same(&dense));
    assert!(Layer::try_from(model.get("layer-1").unwrap()).is_ok());
    assert_eq!(format!("{model:?}"), "Sequential(2 layers, 18 params)");

    let err = Layer::dense(&ctx, DenseOptions::new(0)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("units"), "{err}");
    let err = dense.call(&f32s(&ctx, &[1.0, 2.0], &[1, 2]), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(err.message().contains("hidden"), "the error names the layer: {err}");
    let err = Layer::dense(&ctx, DenseOptions::new(1).name("a\0b")).unwrap_err();
    assert!(err.message().contains("NUL"), "{err}");
}

#[test]
fn conv_pool_flatten_shapes() {
    let ctx = ctx();
    let x = f32s(&ctx, &(0..2 * 6 * 6).map(|i| i as f32).collect::<Vec<_>>(), &[2, 6, 6, 1]);
    let conv = Layer::conv2d(
        &ctx,
        Conv2DOptions::new(4)
            .kernel_size(3, 3)
            .strides(1, 1)
            .padding(Padding::Same)
            .activation(Activation::Tanh)
            .use_bias(true)
            .kernel_initializer(Initializer::HeNormal)
            .bias_initializer(Initializer::Ones)
            .name("conv"),
    )
    .unwrap();
    let y = conv.call(&x, false).unwrap();
    assert_eq!(y.shape(), [2, 6, 6, 4]);
    assert_eq!(conv.weights().unwrap()[0].shape().unwrap(), [3, 3, 1, 4]);
    let valid = Layer::conv2d(&ctx, Conv2DOptions::new(2).kernel_size(3, 2).strides(2, 1)).unwrap();
    assert_eq!(valid.call(&x, false).unwrap().shape(), [2, 2, 5, 2]);
    let max = Layer::max_pool2d(&ctx, Pool2DOptions::new()).unwrap();
    let pooled = max.call(&x, false).unwrap();
    assert_eq!(pooled.shape(), [2, 3, 3, 1]);
    assert_eq!(values(&pooled)[0], 7.0, "max of 0, 1, 6, 7");
    let avg =
        Layer::avg_pool2d(&ctx, Pool2DOptions::new().pool_size(3, 3).strides(1, 1).padding(Padding::Valid)).unwrap();
    let averaged = avg.call(&x, false).unwrap();
    assert_eq!(averaged.shape(), [2, 4, 4, 1]);
    assert_eq!(values(&averaged)[0], 7.0, "mean of the 3x3 window at the corner");
    let flat = Layer::flatten(&ctx, Some("flat")).unwrap().call(&y, false).unwrap();
    assert_eq!(flat.shape(), [2, 144]);
    let err = conv.call(&f32s(&ctx, &[1.0; 6], &[6]), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    let err = Layer::conv2d(&ctx, Conv2DOptions::new(0)).unwrap_err();
    assert!(err.message().contains("filters"), "{err}");
    let err = Layer::max_pool2d(&ctx, Pool2DOptions::new().pool_size(0, 2)).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
}

#[test]
fn embedding_norms_dropout_and_activation() {
    let ctx = ctx();
    let emb = Layer::embedding(&ctx, 5, 3, Some("emb")).unwrap();
    let ids = Tensor::new(&ctx, &[0i32, 4, 4], &[3]).unwrap();
    let e = values(&emb.call(&ids, false).unwrap());
    assert_eq!(e.len(), 9);
    assert_eq!(e[3..6], e[6..9], "the same id gives the same vector");
    let err = emb.call(&Tensor::new(&ctx, &[5i32], &[1]).unwrap(), false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");
    assert!(Layer::embedding(&ctx, 0, 3, None).is_err());

    let x = f32s(&ctx, &[1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0], &[2, 4]);
    let ln = Layer::layer_norm(&ctx, NormOptions::new().axis(-1).epsilon(1e-6).center(true).scale(true)).unwrap();
    let y = values(&ln.call(&x, false).unwrap());
    assert_close(&y[..4], &y[4..], 1e-4); // scale-invariant per row
    assert!(y[..4].iter().sum::<f32>().abs() < 1e-4);

    let bn = Layer::batch_norm(&ctx, NormOptions::new().momentum(0.5).name("bn")).unwrap();
    bn.call(&x, true).unwrap();
    assert_eq!(bn.weights().unwrap().len(), 4, "gamma, beta, moving_mean, moving_variance");
    assert_eq!(bn.trainable_weights().unwrap().len(), 2);
    let moving_mean = bn.weights().unwrap().into_iter().find(|v| v.name().contains("moving_mean")).unwrap();
    // momentum 0.5: 0.5 * 0 + 0.5 * batch mean.
    assert_close(&values(&moving_mean.read().unwrap()), &[2.75, 5.5, 8.25, 11.0], 1e-4);
    let err = Layer::batch_norm(&ctx, NormOptions::new().axis(5)).unwrap().call(&x, false).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    let ones = f32s(&ctx, &[1.0; 1000], &[1000]);
    let drop = Layer::dropout(&ctx, 0.5, Some(11), None).unwrap();
    assert_eq!(values(&drop.call(&ones, false).unwrap()), vec![1.0; 1000], "identity at inference");
    let kept = values(&drop.call(&ones, true).unwrap());
    assert!(kept.iter().all(|&v| v == 0.0 || v == 2.0));
    let zeros = kept.iter().filter(|&&v| v == 0.0).count();
    assert!((350..650).contains(&zeros), "{zeros} of 1000 dropped at rate 0.5");
    let err = Layer::dropout(&ctx, 0.5, Some(-3), None).unwrap_err();
    assert!(err.message().contains("seed -3"), "{err}");
    let err = Layer::dropout(&ctx, 1.0, None, None).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err}");

    let act = Layer::activation(&ctx, Activation::Sigmoid, Some("sig")).unwrap();
    assert_close(&values(&act.call(&f32s(&ctx, &[0.0], &[1]), false).unwrap()), &[0.5], 1e-7);
    for (a, x, want) in [
        (Activation::Linear, -2.0, -2.0),
        (Activation::Relu, -2.0, 0.0),
        (Activation::Relu6, 9.0, 6.0),
        (Activation::Tanh, 0.0, 0.0),
        (Activation::Softmax, 3.0, 1.0),
        (Activation::Softplus, 0.0, std::f32::consts::LN_2),
        (Activation::Elu, 0.0, 0.0),
        (Activation::Selu, 0.0, 0.0),
        (Activation::Gelu, 0.0, 0.0),
    ] {
        let layer = Layer::activation(&ctx, a, None).unwrap();
        assert_close(&values(&layer.call(&f32s(&ctx, &[x], &[1, 1]), false).unwrap()), &[want], 1e-6);
    }
}

#[test]
fn layer_and_optimizer_handles_are_typed_objects() {
    let ctx = ctx();
    let layer: Object = Layer::flatten(&ctx, None).unwrap().into();
    assert!(layer.downcast_ref::<Layer>().is_some());
    assert!(layer.downcast_ref::<Optimizer>().is_none());
    let err = Optimizer::try_from(layer.clone()).unwrap_err();
    assert!(err.message().contains("Layer") && err.message().contains("Optimizer"), "{err}");
    let opt: Object = Optimizer::new(&ctx, OptimizerOptions::default()).unwrap().into();
    assert_eq!(opt.kind(), ObjectKind::Optimizer);
    let err = Layer::try_from(opt).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
}

// ---- Losses and metrics ----

#[test]
fn the_four_losses() {
    let ctx = ctx();
    let t = f32s(&ctx, &[1.0, 0.0, 1.0, 0.0], &[4]);
    let p = f32s(&ctx, &[0.5, 0.5, 2.0, -1.0], &[4]);
    assert_close(
        &[scalar(&losses::mean_squared_error(&ctx, &t, &p).unwrap())],
        &[(0.25 + 0.25 + 1.0 + 1.0) / 4.0],
        1e-6,
    );
    assert_close(
        &[scalar(&losses::mean_absolute_error(&ctx, &t, &p).unwrap())],
        &[(0.5 + 0.5 + 1.0 + 1.0) / 4.0],
        1e-6,
    );
    // Binary cross-entropy of logits: softplus(z) - t z, averaged.
    let softplus = |z: f32| (1.0 + z.exp()).ln();
    let want = (softplus(0.5) - 0.5 + softplus(0.5) + softplus(2.0) - 2.0 + softplus(-1.0)) / 4.0;
    assert_close(&[scalar(&losses::binary_crossentropy(&ctx, &t, &p, true).unwrap())], &[want], 1e-5);
    let probs = f32s(&ctx, &[0.9, 0.2, 0.6, 0.4], &[4]);
    let want = -((0.9f32).ln() + (0.8f32).ln() + (0.6f32).ln() + (0.6f32).ln()) / 4.0;
    assert_close(&[scalar(&losses::binary_crossentropy(&ctx, &t, &probs, false).unwrap())], &[want], 1e-5);
    // Sparse categorical cross-entropy: -log softmax(logits)[label].
    let labels = Tensor::new(&ctx, &[0i32, 2], &[2]).unwrap();
    let logits = f32s(&ctx, &[0.0, 0.0, 0.0, 1.0, 2.0, 3.0], &[2, 3]);
    let lse = (1.0f32.exp() + 2.0f32.exp() + 3.0f32.exp()).ln();
    let want = (3.0f32.ln() + (lse - 3.0)) / 2.0;
    let sce = losses::sparse_categorical_crossentropy(&ctx, &labels, &logits, true).unwrap();
    assert_close(&[scalar(&sce)], &[want], 1e-5);
    assert_eq!(sce.dtype(), DType::Float32);
    let generic = losses::loss(&ctx, LossKind::SparseCategoricalCrossentropy, &labels, &logits, true).unwrap();
    assert_eq!(values(&generic), values(&sce));

    let err = losses::mean_squared_error(&ctx, &t, &f32s(&ctx, &[1.0, 2.0], &[2])).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("shape"), "{err}");
    let bad_label = Tensor::new(&ctx, &[0i32, 3], &[2]).unwrap();
    let err = losses::sparse_categorical_crossentropy(&ctx, &bad_label, &logits, true).unwrap_err();
    assert!(err.message().contains("out of range"), "{err}");
}

#[test]
fn a_loss_is_differentiable_under_a_tape() {
    let ctx = ctx();
    let p = f32s(&ctx, &[1.0, 3.0], &[2]);
    let t = f32s(&ctx, &[0.0, 0.0], &[2]);
    let tape = GradientTape::new(&ctx).unwrap();
    tape.watch(&p).unwrap();
    let loss = losses::mean_squared_error(&ctx, &t, &p).unwrap();
    // d/dp mean((t - p)^2) = 2 (p - t) / n.
    assert_close(&values(tape.gradient(&loss, &[&p]).unwrap()[0].as_ref().unwrap()), &[1.0, 3.0], 1e-6);
}

#[test]
fn mean_and_accuracy_metrics() {
    let ctx = ctx();
    let mean = Mean::new(&ctx, None).unwrap();
    assert_eq!(mean.result().unwrap(), 0.0);
    mean.update(&f32s(&ctx, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])).unwrap();
    assert!((mean.result().unwrap() - 3.5).abs() < 1e-12);
    mean.update(&f32s(&ctx, &[10.5], &[])).unwrap();
    assert!((mean.result().unwrap() - 4.5).abs() < 1e-12);
    mean.reset().unwrap();
    assert_eq!(mean.result().unwrap(), 0.0);
    let err = mean.update(&Tensor::new(&ctx, &[true], &[1]).unwrap()).unwrap_err();
    assert!(err.message().contains("numeric"), "{err}");

    let acc = Accuracy::new(&ctx, Some("acc")).unwrap();
    let labels = Tensor::new(&ctx, &[0i32, 2], &[2]).unwrap();
    let scores = f32s(&ctx, &[0.9, 0.1, 0.0, 0.2, 0.7, 0.1], &[2, 3]);
    acc.update(&labels, &scores).unwrap();
    assert!((acc.result().unwrap() - 0.5).abs() < 1e-12);
    acc.update(&labels, &f32s(&ctx, &[1.0, 0.0, 0.0, 0.0, 0.0, 1.0], &[2, 3])).unwrap();
    assert!((acc.result().unwrap() - 0.75).abs() < 1e-12);
    assert_eq!(format!("{acc:?}"), "Accuracy(0.75)");
    acc.reset().unwrap();
    assert_eq!(acc.result().unwrap(), 0.0);
    let err = acc.update(&Tensor::new(&ctx, &[0i32, 1, 2], &[3]).unwrap(), &scores).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("do not fit"), "{err}");
    // Both are tracked objects with float64 total and count.
    let total = Variable::try_from(acc.get("total").unwrap()).unwrap();
    assert_eq!(total.dtype(), DType::Float64);
}

// ---- Training ----

/// Dense(1) and SGD fit y = 2x + 1.
#[test]
fn fit_a_line_with_dense_and_sgd() {
    let ctx = ctx();
    let xs: Vec<f32> = (0..16).map(|i| i as f32 / 8.0 - 1.0).collect();
    let ys: Vec<f32> = xs.iter().map(|x| 2.0 * x + 1.0).collect();
    let (x, y) = (f32s(&ctx, &xs, &[16, 1]), f32s(&ctx, &ys, &[16, 1]));
    let layer = Layer::dense(&ctx, DenseOptions::new(1)).unwrap();
    let opt = Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(0.2)).unwrap();
    let mut history = vec![];
    for _ in 0..200 {
        let tape = GradientTape::new(&ctx).unwrap();
        let loss = losses::mean_squared_error(&ctx, &y, &layer.call(&x, true).unwrap()).unwrap();
        let weights = layer.trainable_weights().unwrap();
        let grads = tape.gradient_variables(&loss, &weights).unwrap();
        opt.apply_gradients(&grads, &weights).unwrap();
        history.push(scalar(&loss));
    }
    assert!(history[199] < history[0] / 1000.0, "{} -> {}", history[0], history[199]);
    assert!(history.windows(2).filter(|w| w[1] > w[0]).count() < 5, "loss goes down: {history:?}");
    let w = layer.trainable_weights().unwrap();
    assert_close(&values(&w[0].read().unwrap()), &[2.0], 1e-2);
    assert_close(&values(&w[1].read().unwrap()), &[1.0], 1e-2);
    assert_eq!(opt.iterations().unwrap(), 200);
}

/// Trains a model with Adam for `steps` steps on a fixed batch.
fn train(ctx: &Context, model: &Sequential, opt: &Optimizer, steps: usize) {
    let x = f32s(ctx, &[0.5, -1.0, 2.0, 0.0, 1.5, -0.5], &[3, 2]);
    let y = Tensor::new(ctx, &[0i32, 1, 2], &[3]).unwrap();
    for _ in 0..steps {
        let tape = GradientTape::new(ctx).unwrap();
        let logits = model.call(&x, true).unwrap();
        let loss = losses::sparse_categorical_crossentropy(ctx, &y, &logits, true).unwrap();
        let weights = model.trainable_weights().unwrap();
        opt.apply_gradients(&tape.gradient_variables(&loss, &weights).unwrap(), &weights).unwrap();
    }
}

fn model_and_optimizer(ctx: &Context) -> (Sequential, Optimizer, Mean) {
    let model = Sequential::new(ctx, Some("net")).unwrap();
    model.add(&Layer::dense(ctx, DenseOptions::new(4).activation(Activation::Tanh)).unwrap()).unwrap();
    model.add(&Layer::dense(ctx, DenseOptions::new(3)).unwrap()).unwrap();
    let opt = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(0.05)).unwrap();
    (model, opt, Mean::new(ctx, Some("seen")).unwrap())
}

fn weight_values(model: &Sequential) -> Vec<Vec<f32>> {
    model.weights().unwrap().iter().map(|v| values(&v.read().unwrap())).collect()
}

/// An optimizer, a model and a metric saved as checkpoint children and restored into fresh ones
/// (before the model is built): iterations, weights and metric come back; the Adam slots are
/// restored when the next step creates them, so one more step on both sides agrees exactly.
#[test]
fn checkpoint_round_trip_with_an_optimizer() {
    let dir = std::env::temp_dir().join(format!("cairn-rust-training-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ctx = ctx();
    let (model, opt, seen) = model_and_optimizer(&ctx);
    train(&ctx, &model, &opt, 5);
    seen.update(&f32s(&ctx, &[2.0, 4.0], &[2])).unwrap();
    let ckpt = Checkpoint::new(&ctx, &[("model", &model), ("optimizer", &opt), ("seen", &seen)]).unwrap();
    let path = ckpt.save(dir.join("ckpt")).unwrap();
    let first_var = model.trainable_weights().unwrap().remove(0);
    let m_before = values(&opt.slot(&first_var, "m").unwrap().read().unwrap());
    let keys: Vec<String> =
        cairn::CheckpointReader::open(&path).unwrap().entries().into_iter().map(|e| e.key).collect();
    assert!(
        keys.iter().any(|k| k.contains(".OPTIMIZER_SLOT") && k.ends_with("/m/.ATTRIBUTES/VARIABLE_VALUE")),
        "{keys:?}"
    );

    let ctx2 = Context::with_options(ContextOptions::new().seed(99)).unwrap();
    let (model2, opt2, seen2) = model_and_optimizer(&ctx2);
    let ckpt2 = Checkpoint::new(&ctx2, &[("model", &model2), ("optimizer", &opt2), ("seen", &seen2)]).unwrap();
    let status = ckpt2.restore(&path).unwrap();
    assert_eq!(opt2.iterations().unwrap(), 5);
    assert_eq!(seen2.result().unwrap(), 3.0);
    model2.call(&f32s(&ctx2, &[0.0, 0.0], &[1, 2]), false).unwrap(); // builds: weights restored
    assert_eq!(weight_values(&model2), weight_values(&model));
    let first_var2 = model2.trainable_weights().unwrap().remove(0);
    assert_eq!(opt2.slot(&first_var2, "m").unwrap_err().code(), Code::NotFound, "slots wait for the next step");
    train(&ctx, &model, &opt, 1);
    train(&ctx2, &model2, &opt2, 1);
    assert_eq!(values(&opt2.slot(&first_var2, "m").unwrap().read().unwrap()).len(), m_before.len());
    assert_eq!(weight_values(&model2), weight_values(&model), "the restored slots drove the same step");
    assert_eq!(opt2.iterations().unwrap(), 6);
    status.assert_consumed().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Optimizers, layers, models, metrics and schedules are objects: usable from any thread (a
/// tape is not, which the compile_fail doc test of `GradientTape` shows).
#[test]
fn training_objects_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Optimizer>();
    send_sync::<Layer>();
    send_sync::<Sequential>();
    send_sync::<Mean>();
    send_sync::<Accuracy>();
    send_sync::<Schedule>();
    let ctx = ctx();
    let layer = Layer::dense(&ctx, DenseOptions::new(2)).unwrap();
    let x = f32s(&ctx, &[1.0, 2.0], &[1, 2]);
    let here = values(&layer.call(&x, false).unwrap());
    let there = std::thread::scope(|s| s.spawn(|| values(&layer.call(&x, false).unwrap())).join().unwrap());
    assert_eq!(here, there);
}
