// The Rust side of the cross-language checkpoint test (tests/xlang/SPEC.md):
//
//     cargo run -q --example xlang -- save PATH      # builds the state, writes PATH
//     cargo run -q --example xlang -- restore PATH   # builds it with zeros, restores PATH, checks
//
// tests/xlang/run.sh runs it next to the C, Go and Java programs; tests/xlang.rs checks it
// against the C program.

use std::process::ExitCode;

use cairn::{Checkpoint, Context, Dict, List, Module, Result, Tensor, Trackable, Variable, VariableOptions, F16};

/// The checkpoint and its variables in creation order, with their checkpoint paths.
struct State {
    checkpoint: Checkpoint,
    variables: Vec<(&'static str, Variable)>,
}

/// The expected values, in the order of State::variables.
fn values(ctx: &Context) -> Result<Vec<Tensor>> {
    Ok(vec![
        Tensor::new(ctx, &[0.5f32, 1.5, 2.5, 3.5, 4.5, 5.5], &[2, 3])?,
        Tensor::new(ctx, &[-1i64, 0, 9_000_000_000], &[3])?,
        Tensor::new(ctx, &[0.25f64, -0.125], &[2])?,
        Tensor::new(ctx, &[true, false, false, true], &[4])?,
        Tensor::scalar(ctx, F16(0x3C00))?,
    ])
}

/// Zeros of the same dtype and shape.
fn zeros_like(ctx: &Context, t: &Tensor) -> Result<Tensor> {
    Tensor::from_bytes(ctx, t.dtype(), &t.shape(), &vec![0u8; t.nbytes()])
}

fn build(ctx: &Context, zero: bool) -> Result<State> {
    let mut initial = values(ctx)?;
    if zero {
        initial = initial.iter().map(|t| zeros_like(ctx, t)).collect::<Result<_>>()?;
    }
    let [w, b, k, flag, half] = <[Tensor; 5]>::try_from(initial).expect("five values");
    let named = |t: &Tensor, name: &str, scope: Option<&Module>| {
        let options = VariableOptions::new().name(name);
        Variable::with_options(ctx, t, if let Some(m) = scope { options.scope(m) } else { options })
    };

    let m = Module::new(ctx, "net")?;
    let w = named(&w, "w", Some(&m))?;
    m.set("w", &w)?;
    let b = named(&b, "b", Some(&m))?;
    m.set("b", &b)?;
    let layers = List::new(ctx)?;
    let l0 = Trackable::new(ctx)?;
    let k = named(&k, "k", None)?;
    l0.set("k", &k)?;
    layers.append(&l0)?;
    let l1 = Trackable::new(ctx)?;
    let flag = named(&flag, "flag", None)?;
    l1.set("flag", &flag)?;
    layers.append(&l1)?;
    let table = Dict::new(ctx)?;
    let half = named(&half, "half", None)?;
    table.set("half", &half)?;
    table.set("shared", &l0)?;
    let checkpoint = Checkpoint::new(ctx, &[("model", &m), ("layers", &layers), ("table", &table)])?;
    let variables =
        vec![("model/w", w), ("model/b", b), ("layers/0/k", k), ("layers/1/flag", flag), ("table/half", half)];
    Ok(State { checkpoint, variables })
}

fn run(action: &str, path: &str) -> Result<bool> {
    let ctx = Context::new()?;
    match action {
        "save" => {
            build(&ctx, false)?.checkpoint.write(path)?;
            Ok(true)
        }
        _ => {
            let state = build(&ctx, true)?;
            state.checkpoint.restore(path)?.assert_consumed()?;
            let mut ok = true;
            for ((name, var), want) in state.variables.iter().zip(values(&ctx)?) {
                let got = var.read()?;
                if got.dtype() != want.dtype() || got.shape() != want.shape() || got.to_bytes()? != want.to_bytes()? {
                    eprintln!(
                        "xlang_rust: {name} is {got:?} {:?}, want {want:?} {:?}",
                        got.to_bytes()?,
                        want.to_bytes()?
                    );
                    ok = false;
                }
            }
            if ok {
                println!("xlang restore ok");
            }
            Ok(ok)
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [action, path] = args.as_slice() else {
        eprintln!("usage: xlang save|restore PATH");
        return ExitCode::from(2);
    };
    if action != "save" && action != "restore" {
        eprintln!("usage: xlang save|restore PATH");
        return ExitCode::from(2);
    }
    match run(action, path) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("xlang_rust: {e}");
            ExitCode::FAILURE
        }
    }
}
