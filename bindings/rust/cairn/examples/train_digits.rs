// Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
//
// Each epoch shuffles the training set (a permutation drawn from the epoch number, so the data
// order is part of the checkpointed state), trains with Adam on mini-batches under a gradient
// tape, and saves model, optimizer and epoch with a checkpoint manager (3 kept). Run it again and
// it resumes from the latest checkpoint. It ends with the accuracy on the held-out test split.
// The training step is a compiled function ("train_step"), traced once for the full batches and
// once for the smaller last batch, then replayed. With --logdir DIR it writes TensorBoard
// scalars (epoch_loss, epoch_accuracy) per epoch and the graph of train_step's first trace: open
// them with `tensorboard --logdir DIR`.
// It follows examples/TRAINING_DEMO.md, as the C, Go and Java demos do, and prints the same lines.
//
// usage: cargo run --release --example train_digits -- [--data digits.csv] [--dir checkpoint_dir] [--epochs N]
//        [--logdir DIR]

use std::error::Error;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use cairn::{
    losses, ops, Accuracy, Activation, Checkpoint, CheckpointManager, CheckpointManagerOptions, Context,
    ContextOptions, DType, DenseOptions, Function, FunctionOptions, GradientTape, Layer, Mean, Optimizer,
    OptimizerOptions, Sequential, SummaryWriter, SummaryWriterOptions, Tensor, Variable, VariableOptions,
};

const FEATURES: usize = 64;
const CLASSES: i32 = 10;
const HIDDEN: i64 = 64;
const BATCH: i64 = 32;
const LEARNING_RATE: f64 = 0.005;
const SHUFFLE_SEED: i64 = 7;
const CONTEXT_SEED: u64 = 1;

/// One split of the data: n samples of 64 pixels (divided by 16) and their labels.
#[derive(Default)]
struct Split {
    x: Vec<f32>,
    y: Vec<i32>,
}

impl Split {
    fn len(&self) -> i64 {
        self.y.len() as i64
    }

    fn tensors(&self, ctx: &Context) -> cairn::Result<(Tensor, Tensor)> {
        Ok((Tensor::new(ctx, &self.x, &[self.len(), FEATURES as i64])?, Tensor::new(ctx, &self.y, &[self.len()])?))
    }
}

/// Line i (0-based) is a test sample when i % 5 == 4, a training sample otherwise.
fn load_digits(path: &str) -> Result<(Split, Split), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot open {path}: {e}"))?;
    let (mut train, mut test) = (Split::default(), Split::default());
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let bad = || format!("{path}: line {} is not 64 pixels and a label", i + 1);
        let values: Vec<i32> =
            line.split(',').map(|v| v.trim().parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
        let (pixels, label) = match values.split_last() {
            Some((&label, pixels)) if pixels.len() == FEATURES && (0..CLASSES).contains(&label) => (pixels, label),
            _ => return Err(bad()),
        };
        let split = if i % 5 == 4 { &mut test } else { &mut train };
        split.x.extend(pixels.iter().map(|&p| p as f32 / 16.0));
        split.y.push(label);
    }
    Ok((train, test))
}

/// The epoch's order of the training samples: the indices that sort uniform draws (seeded by the
/// epoch) in descending order.
fn epoch_permutation(ctx: &Context, n: i64, epoch: i64) -> cairn::Result<Tensor> {
    let attrs = ops::RandomUniformAttrs::new().dtype(DType::Float32).seed(SHUFFLE_SEED).seed2(epoch + 1);
    let draws = ops::random_uniform(ctx, &[n], attrs)?;
    let (_, indices) = ops::top_kv2(ctx, &draws, n, Default::default())?;
    Ok(indices)
}

/// Rows `begin .. begin+size` of `perm` gathered from `data`.
fn batch_of(ctx: &Context, data: &Tensor, perm: &Tensor, begin: i64, size: i64) -> cairn::Result<Tensor> {
    let idx = ops::slice(ctx, perm, &[begin], &[size])?;
    ops::gather_v2(ctx, data, &idx, Default::default())
}

fn build_model(ctx: &Context) -> cairn::Result<Sequential> {
    let model = Sequential::new(ctx, Some("mlp"))?;
    model.add(&Layer::dense(ctx, DenseOptions::new(HIDDEN).activation(Activation::Relu))?)?;
    model.add(&Layer::dense(ctx, DenseOptions::new(CLASSES as i64))?)?;
    Ok(model)
}

/// The training step as a compiled function (tf.function): traced once per batch shape, then
/// replayed for every batch. Inputs: x [batch, 64] float32, labels [batch] int32; outputs: the
/// loss and the logits.
fn train_step<'a>(ctx: &Context, model: &'a Sequential, optimizer: &'a Optimizer) -> cairn::Result<Function<'a>> {
    Function::with_options(ctx, "train_step", FunctionOptions::new().outputs(2), move |ctx, inputs| {
        let tape = GradientTape::new(ctx)?;
        let logits = model.call(&inputs[0], true)?;
        let loss = losses::sparse_categorical_crossentropy(ctx, &inputs[1], &logits, true)?;
        let weights = model.trainable_weights()?;
        let grads = tape.gradient_variables(&loss, &weights)?;
        optimizer.apply_gradients(&grads, &weights)?;
        Ok(vec![loss, logits])
    })
}

/// One pass over the training set; the metrics receive the mean loss and the accuracy.
fn train_epoch(
    ctx: &Context,
    step: &mut Function<'_>,
    (x, y): (&Tensor, &Tensor),
    epoch: i64,
    (loss_mean, accuracy): (&Mean, &Accuracy),
) -> cairn::Result<()> {
    let n = y.num_elements() as i64;
    let perm = epoch_permutation(ctx, n, epoch)?;
    for begin in (0..n).step_by(BATCH as usize) {
        let size = BATCH.min(n - begin);
        let (xb, yb) = (batch_of(ctx, x, &perm, begin, size)?, batch_of(ctx, y, &perm, begin, size)?);
        let outs = step.call(&[&xb, &yb])?; // loss, logits
        loss_mean.update(&outs[0])?;
        accuracy.update(&yb, &outs[1])?;
    }
    Ok(())
}

fn test_accuracy(ctx: &Context, model: &Sequential, x: &Tensor, y: &Tensor) -> cairn::Result<f64> {
    let acc = Accuracy::new(ctx, Some("test_accuracy"))?;
    acc.update(y, &model.call(x, false)?)?;
    acc.result()
}

fn default_dir() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME").filter(|c| !c.is_empty()).map(PathBuf::from);
    let cache = cache
        .unwrap_or_else(|| std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from).join(".cache"));
    cache.join("cairn").join("digits-rust")
}

struct Args {
    data: String,
    dir: PathBuf,
    epochs: i64,
    /// TensorBoard output (none by default).
    logdir: Option<PathBuf>,
}

fn parse_args() -> Option<Args> {
    let mut args = Args { data: "examples/data/digits.csv".into(), dir: default_dir(), epochs: 20, logdir: None };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for pair in argv.chunks(2) {
        match pair {
            [flag, value] if flag == "--data" => args.data = value.clone(),
            [flag, value] if flag == "--dir" => args.dir = PathBuf::from(value),
            [flag, value] if flag == "--epochs" => args.epochs = value.parse().ok().filter(|&e| e >= 1)?,
            [flag, value] if flag == "--logdir" => args.logdir = Some(PathBuf::from(value)),
            _ => return None,
        }
    }
    Some(args)
}

/// Runs the demo, writing its report to `out`.
fn run(args: &Args, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let (train, test) = load_digits(&args.data)?;
    let ctx = Context::with_options(ContextOptions::new().seed(CONTEXT_SEED))?;
    train_and_report(&ctx, args, &train, &test, out)
}

fn train_and_report(
    ctx: &Context,
    args: &Args,
    train: &Split,
    test: &Split,
    out: &mut dyn Write,
) -> Result<(), Box<dyn Error>> {
    let (x_train, y_train) = train.tensors(ctx)?;
    let (x_test, y_test) = test.tensors(ctx)?;
    writeln!(out, "digits: {} training and {} test samples of 8x8 pixels", train.len(), test.len())?;

    let model = build_model(ctx)?;
    let optimizer = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(LEARNING_RATE))?;
    let epoch_var = Variable::with_options(
        ctx,
        &Tensor::scalar(ctx, 0i64)?,
        VariableOptions::new().name("epoch").trainable(false),
    )?;
    let ckpt = Checkpoint::new(ctx, &[("epoch", &epoch_var), ("model", &model), ("optimizer", &optimizer)])?;
    let manager = CheckpointManager::new(ckpt, &args.dir, CheckpointManagerOptions::new().max_to_keep(3))?;

    let mut epoch = 0i64;
    if let Some(latest) = manager.latest() {
        // The optimizer's slots are restored when its next step creates them; with no epoch left
        // to train they never are, which is expected here.
        manager.checkpoint().restore(&latest)?.expect_partial();
        epoch = epoch_var.read()?.to_vec::<i64>()?[0];
        writeln!(out, "resumed from {} after epoch {epoch}", latest.display())?;
    }

    // Build the model on one sample (a restore above is applied as its variables appear).
    model.call(&ops::slice(ctx, &x_test, &[0, 0], &[1, FEATURES as i64])?, false)?;
    write!(out, "{}", model.summary()?)?;

    // Traced once per batch shape: full batches and the smaller last batch of an epoch.
    let mut step = train_step(ctx, &model, &optimizer)?;
    let loss_mean = Mean::new(ctx, Some("loss"))?;
    let accuracy = Accuracy::new(ctx, Some("accuracy"))?;
    let writer = args.logdir.as_ref().map(|dir| SummaryWriter::create(dir, SummaryWriterOptions::new())).transpose()?;
    for e in epoch..args.epochs {
        let start = Instant::now();
        loss_mean.reset()?;
        accuracy.reset()?;
        train_epoch(ctx, &mut step, (&x_train, &y_train), e, (&loss_mean, &accuracy))?;
        let seconds = start.elapsed().as_secs_f64();
        let (loss, acc) = (loss_mean.result()?, accuracy.result()?);
        epoch_var.assign(&Tensor::scalar(ctx, e + 1)?)?;
        manager.save_numbered((e + 1) as u64)?;
        if let Some(w) = &writer {
            w.scalar("epoch_loss", loss, Some(e + 1))?;
            w.scalar("epoch_accuracy", acc, Some(e + 1))?;
            if e == epoch {
                w.graph(&step, 0, Some(0))?; // the first trace: full batches
            }
        }
        writeln!(
            out,
            "epoch {:2}/{}  loss {loss:.4}  accuracy {acc:.4}  {:.0} examples/s",
            e + 1,
            args.epochs,
            train.len() as f64 / seconds
        )?;
        out.flush()?; // each epoch's line as it ends
    }
    writeln!(out, "test accuracy: {:.4}", test_accuracy(ctx, &model, &x_test, &y_test)?)?;
    if let Some(w) = &writer {
        w.close()?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let Some(args) = parse_args() else {
        let me = std::env::args().next().unwrap_or_else(|| "train_digits".into());
        eprintln!("usage: {me} [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR]");
        return ExitCode::from(2);
    };
    match run(&args, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("train_digits: {e}");
            ExitCode::FAILURE
        }
    }
}
