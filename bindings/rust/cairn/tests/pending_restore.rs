//! Deferred restores outlive the checkpoint and its status, as in TensorFlow's one expression
//! `Checkpoint(model=fresh, optimizer=opt).restore(path).expect_partial()`: in Rust the checkpoint
//! and the status are temporaries dropped at the end of the statement, and the model built and the
//! optimizer's slots created afterwards still get the saved values, bit for bit.

use std::sync::{Arc, Mutex};

use cairn::{
    Activation, Checkpoint, Context, ContextOptions, DenseOptions, Initializer, Layer, Optimizer, OptimizerOptions,
    Sequential, Tensor,
};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A two-layer Sequential, not built yet, and an Adam optimizer.
fn model(ctx: &Context, init: Initializer) -> Result<(Sequential, Optimizer)> {
    let model = Sequential::new(ctx, None)?;
    let hidden = DenseOptions::new(3).activation(Activation::Tanh).kernel_initializer(init).bias_initializer(init);
    model.add(&Layer::dense(ctx, hidden)?)?;
    model.add(&Layer::dense(ctx, DenseOptions::new(2).kernel_initializer(init).bias_initializer(init))?)?;
    let opt = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(0.05))?;
    Ok((model, opt))
}

/// Calls the model on a fixed batch (the first call builds it).
fn call(ctx: &Context, model: &Sequential) -> Result {
    model.call(&Tensor::new(ctx, &[0.5f32, -1.0, 2.0, 0.25, -0.75, 1.5, 0.0, 1.0], &[2, 4])?, false)?;
    Ok(())
}

/// One Adam step with fixed gradients that depend on `step`.
fn step(ctx: &Context, model: &Sequential, opt: &Optimizer, step: usize) -> Result {
    let weights = model.trainable_weights()?;
    let mut grads = Vec::new();
    for (i, w) in weights.iter().enumerate() {
        let shape = w.shape()?;
        let n = shape.iter().product::<i64>() as usize;
        let g: Vec<f32> = (0..n).map(|j| 0.1 * (step + 1) as f32 * ((j % 5) as f32 - 2.0) + 0.01 * i as f32).collect();
        grads.push(Some(Tensor::new(ctx, &g, &shape)?));
    }
    opt.apply_gradients(&grads, &weights)?;
    Ok(())
}

/// Every weight's value, then (with `slots`) Adam's m and v of each.
fn state(model: &Sequential, opt: &Optimizer, slots: bool) -> Result<Vec<Vec<f32>>> {
    let weights = model.trainable_weights()?;
    let mut out = Vec::new();
    for w in &weights {
        out.push(w.read()?.to_vec::<f32>()?);
    }
    for name in ["m", "v"] {
        for w in weights.iter().filter(|_| slots) {
            out.push(opt.slot(w, name)?.read()?.to_vec::<f32>()?);
        }
    }
    Ok(out)
}

#[test]
fn a_restore_written_as_one_expression_reaches_a_model_built_later() -> Result {
    let logs = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&logs);
    let ctx = Context::with_options(
        ContextOptions::new().seed(5).log_callback(move |_, message| sink.lock().unwrap().push(message.to_string())),
    )?;
    let dir = std::env::temp_dir().join(format!("cairn-rust-pending-restore-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("ckpt");

    let (trained, trained_opt) = model(&ctx, Initializer::GlorotUniform)?;
    call(&ctx, &trained)?;
    step(&ctx, &trained, &trained_opt, 0)?;
    step(&ctx, &trained, &trained_opt, 1)?;
    Checkpoint::new(&ctx, &[("model", &trained), ("optimizer", &trained_opt)])?.write(&path)?;
    let saved = state(&trained, &trained_opt, true)?;
    step(&ctx, &trained, &trained_opt, 2)?;
    let next_step = state(&trained, &trained_opt, true)?;

    let (fresh, opt) = model(&ctx, Initializer::Ones)?;
    // The checkpoint and the status are temporaries: both are gone after this statement.
    Checkpoint::new(&ctx, &[("model", &fresh), ("optimizer", &opt)])?.restore(&path)?.expect_partial();
    assert_eq!(opt.iterations()?, 2);

    call(&ctx, &fresh)?; // builds the layers: their weights take the saved values as they appear
    let weights = state(&fresh, &opt, false)?;
    assert_eq!(weights, saved[..weights.len()]);
    step(&ctx, &fresh, &opt, 2)?; // creates the slots: restored on creation, then updated
    assert_eq!(state(&fresh, &opt, true)?, next_step);

    drop((fresh, opt));
    let logs = logs.lock().unwrap();
    assert!(!logs.iter().any(|m| m.contains("never restored")), "{logs:?}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
