// The Rust side of the cross-language function test (tests/xlang/SPEC.md, "Compiled functions"):
//
//     cargo run -q --example xfunction -- export PATH   # trains y = x @ w + b for three SGD steps
//                                                       # through a captured training step, traces
//                                                       # predict on the query, exports it to PATH
//     cargo run -q --example xfunction -- load PATH     # loads a file from any language, calls it
//
// Both print their outputs as the hex of the float32 bits (exact); tests/xlang/functions.sh
// compares them with the C, Go and Java programs.

use std::process::ExitCode;

use cairn::ops::{self, MatMulAttrs};
use cairn::{
    losses, Context, Function, GradientTape, LossKind, Optimizer, OptimizerOptions, Result, Tensor, Variable,
    VariableOptions,
};

const QUERY: [f32; 6] = [1.0, 2.0, 3.0, -1.0, 0.5, 0.25];

/// x @ w + b, reading both variables.
fn affine(ctx: &Context, x: &Tensor, w: &Variable, b: &Variable) -> Result<Tensor> {
    let xw = ops::mat_mul(ctx, x, &w.read()?, MatMulAttrs::default())?;
    ops::add(ctx, &xw, &b.read()?)
}

/// Prints `label` and the float32 bits of f's one output.
fn call_and_print(f: &mut Function<'_>, label: &str, inputs: &[&Tensor]) -> Result<()> {
    let out = f.call(inputs)?;
    let bits: Vec<String> = out[0].to_vec::<f32>()?.iter().map(|v| format!("{:08x}", v.to_bits())).collect();
    println!("{label} {}", bits.join(" "));
    Ok(())
}

fn export(path: &str) -> Result<()> {
    let ctx = Context::new()?;
    let w =
        Variable::with_options(&ctx, &Tensor::new(&ctx, &[0.5f32, -0.25], &[2, 1])?, VariableOptions::new().name("w"))?;
    let b = Variable::with_options(&ctx, &Tensor::new(&ctx, &[0.1f32], &[1])?, VariableOptions::new().name("b"))?;
    let opt = Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(0.1))?;
    let mut step = Function::new(&ctx, "train_step", |ctx, inputs| {
        let tape = GradientTape::new(ctx)?;
        let y = affine(ctx, &inputs[0], &w, &b)?;
        let loss = losses::loss(ctx, LossKind::MeanSquaredError, &inputs[1], &y, false)?;
        let grads = tape.gradient_variables(&loss, &[&w, &b])?;
        opt.apply_gradients(&grads, &[&w, &b])?;
        Ok(vec![loss])
    })?;
    let mut predict = Function::new(&ctx, "predict", |ctx, inputs| Ok(vec![affine(ctx, &inputs[0], &w, &b)?]))?;
    let x = Tensor::new(&ctx, &[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, -1.0], &[4, 2])?;
    let y = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 0.5], &[4, 1])?;
    for _ in 0..3 {
        call_and_print(&mut step, "loss", &[&x, &y])?;
    }
    call_and_print(&mut predict, "predict", &[&Tensor::new(&ctx, &QUERY, &[3, 2])?])?;
    predict.export(path)
}

fn load(path: &str) -> Result<()> {
    let ctx = Context::new()?;
    let mut f = Function::load(&ctx, path, 1)?;
    call_and_print(&mut f, "predict", &[&Tensor::new(&ctx, &QUERY, &[3, 2])?])
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["export", path] => export(path),
        ["load", path] => load(path),
        _ => {
            eprintln!("usage: xfunction export|load PATH");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xfunction: {e}");
            ExitCode::FAILURE
        }
    }
}
