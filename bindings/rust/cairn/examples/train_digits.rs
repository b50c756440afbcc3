// Cairn's training demo: an MLP (64 -> 64 relu -> 10) learns the UCI 8x8 handwritten digits.
//
// The digits come through an input pipeline (CSV -> map -> shuffle -> batch -> repeat -> prefetch)
// whose iterator is checkpointed with the model, the optimizer and the metrics every 20 steps by a
// checkpoint manager (3 kept). Kill it at any point and run it again: it resumes from the latest
// checkpoint, mid-epoch too, and ends with the same weights, bit for bit, as a run never
// interrupted (the last line is their checksum). --kill-after N simulates the crash after step N.
// The training step is a compiled function ("train_step"), traced once for the full batches and
// once for the smaller last batch, then replayed. With --logdir DIR it writes TensorBoard
// scalars (epoch_loss, epoch_accuracy) per epoch and the graph of train_step's first trace: open
// them with `tensorboard --logdir DIR`.
// It follows examples/TRAINING_DEMO.md, as the C, Go and Java demos do, and prints the same lines.
//
// usage: cargo run --release --example train_digits -- [--data digits.csv] [--dir checkpoint_dir] [--epochs N]
//        [--logdir DIR] [--save-every N] [--kill-after N]

use std::error::Error;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use cairn::data::{Cardinality, CsvOptions, Dataset, MapOptions};
use cairn::{
    losses, ops, Accuracy, Activation, Checkpoint, CheckpointManager, CheckpointManagerOptions, Context,
    ContextOptions, DType, DatasetIterator, DenseOptions, Function, FunctionOptions, GradientTape, Layer, Mean,
    Optimizer, OptimizerOptions, Sequential, SummaryWriter, SummaryWriterOptions, Tensor,
};

const FEATURES: usize = 64;
const CLASSES: i64 = 10;
const HIDDEN: i64 = 64;
const BATCH: i64 = 32;
const LEARNING_RATE: f64 = 0.005;
const SHUFFLE_SEED: i64 = 7;
const CONTEXT_SEED: u64 = 1;

/// A finite dataset's size (the pipeline's sources and shards all know theirs).
fn count(ds: &Dataset) -> Result<i64, String> {
    match ds.cardinality() {
        Cardinality::Finite(n) => Ok(n as i64),
        other => Err(format!("{ds:?}: cardinality {other:?}, expected a count")),
    }
}

/// The input pipeline's products (docs/data.md).
struct Data {
    /// The training pipeline: shuffled, batched, repeated forever, prefetched.
    train: Dataset,
    n_train: i64,
    n_test: i64,
    steps_per_epoch: i64,
    x_test: Tensor,
    y_test: Tensor,
}

/// csv -> map "prepare" -> shard/concatenate -> shuffle -> batch -> repeat -> prefetch. Line i
/// (0-based) is a test sample when i % 5 == 4, a training sample otherwise.
fn build_pipelines(ctx: &Context, path: &str) -> Result<Data, Box<dyn Error>> {
    let mut dtypes = vec![DType::Float32; FEATURES];
    dtypes.push(DType::Int32);
    let csv = Dataset::csv(ctx, &[path], &CsvOptions::new(&dtypes))?;
    // x = the 64 pixels / 16 as a float32[64] vector, and the label. Compiled: traced once,
    // replayed on the pipeline's threads.
    let prepare = |ctx: &Context, columns: &[Tensor]| {
        let pixels: Vec<&Tensor> = columns[..FEATURES].iter().collect();
        let packed = ops::pack(ctx, &pixels, ops::PackAttrs::new().axis(0))?;
        Ok(vec![ops::mul(ctx, &packed, &Tensor::scalar(ctx, 0.0625f32)?)?, columns[FEATURES].clone()])
    };
    let samples = csv.map("prepare", prepare, MapOptions::new().output_names(&["x", "label"]))?;
    let test = samples.shard(5, 4)?;
    let mut train = samples.shard(5, 0)?;
    for k in 1..4 {
        train = train.concatenate(&samples.shard(5, k)?)?;
    }
    let (n_train, n_test) = (count(&train)?, count(&test)?);
    let batches = train.shuffle(n_train, SHUFFLE_SEED, true)?.batch(BATCH, false)?;
    let steps_per_epoch = count(&batches)?;
    let train = batches.repeat(None)?.prefetch(2)?;
    let test_set = test.batch(n_test, false)?.iterate()?.next().ok_or("the test set is empty")??;
    let [x_test, y_test]: [Tensor; 2] = test_set.into_tensors().try_into().map_err(|_| "the test set: 2 components")?;
    Ok(Data { train, n_train, n_test, steps_per_epoch, x_test, y_test })
}

fn build_model(ctx: &Context) -> cairn::Result<Sequential> {
    let model = Sequential::new(ctx, Some("mlp"))?;
    model.add(&Layer::dense(ctx, DenseOptions::new(HIDDEN).activation(Activation::Relu))?)?;
    model.add(&Layer::dense(ctx, DenseOptions::new(CLASSES))?)?;
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

fn test_accuracy(ctx: &Context, model: &Sequential, x: &Tensor, y: &Tensor) -> cairn::Result<f64> {
    let acc = Accuracy::new(ctx, Some("test_accuracy"))?;
    acc.update(y, &model.call(x, false)?)?;
    acc.result()
}

/// FNV-1a 64 over the bytes of the model's trainable weights: equal weights, equal checksum.
fn weights_checksum(model: &Sequential) -> cairn::Result<u64> {
    let mut h: u64 = 0xcbf29ce484222325;
    for w in model.trainable_weights()? {
        for b in w.read()?.to_bytes()? {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    Ok(h)
}

/// --kill-after: exit at once with status 3, as a crash would (nothing is flushed or dropped).
/// The crate's tests include this file and get an error instead, to restart in the same process.
fn crash() -> Result<(), Box<dyn Error>> {
    #[cfg(not(test))]
    std::process::exit(3);
    #[cfg(test)]
    Err("killed".into())
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
    save_every: i64,
    /// Exit with status 3 right after this step (0: never), as a crash would.
    kill_after: i64,
}

impl Args {
    fn new(data: String, dir: PathBuf, epochs: i64) -> Args {
        Args { data, dir, epochs, logdir: None, save_every: 20, kill_after: 0 }
    }
}

fn parse_args() -> Option<Args> {
    let mut args = Args::new("examples/data/digits.csv".into(), default_dir(), 20);
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for pair in argv.chunks(2) {
        match pair {
            [flag, value] if flag == "--data" => args.data = value.clone(),
            [flag, value] if flag == "--dir" => args.dir = PathBuf::from(value),
            [flag, value] if flag == "--epochs" => args.epochs = value.parse().ok().filter(|&e| e >= 1)?,
            [flag, value] if flag == "--logdir" => args.logdir = Some(PathBuf::from(value)),
            [flag, value] if flag == "--save-every" => args.save_every = value.parse().ok().filter(|&n| n >= 1)?,
            [flag, value] if flag == "--kill-after" => args.kill_after = value.parse().ok().filter(|&n| n >= 0)?,
            _ => return None,
        }
    }
    Some(args)
}

/// Runs the demo, writing its report to `out`.
fn run(args: &Args, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let ctx = Context::with_options(ContextOptions::new().seed(CONTEXT_SEED))?;
    let data = build_pipelines(&ctx, &args.data)?;
    writeln!(out, "digits: {} training and {} test samples of 8x8 pixels", data.n_train, data.n_test)?;
    train_and_report(&ctx, args, &data, out)
}

fn train_and_report(ctx: &Context, args: &Args, data: &Data, out: &mut dyn Write) -> Result<(), Box<dyn Error>> {
    let model = build_model(ctx)?;
    let optimizer = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(LEARNING_RATE))?;
    let loss_mean = Mean::new(ctx, Some("loss"))?;
    let accuracy = Accuracy::new(ctx, Some("accuracy"))?;
    let iterator: DatasetIterator = data.train.iterate()?;
    let ckpt = Checkpoint::new(
        ctx,
        &[
            ("accuracy", &accuracy),
            ("data", &iterator),
            ("loss", &loss_mean),
            ("model", &model),
            ("optimizer", &optimizer),
        ],
    )?;
    let manager = CheckpointManager::new(ckpt, &args.dir, CheckpointManagerOptions::new().max_to_keep(3))?;
    if let Some(latest) = manager.latest() {
        // The optimizer's slots are restored when its next step creates them; with nothing left
        // to train they never are, which is expected here.
        manager.checkpoint().restore(&latest)?.expect_partial();
        writeln!(out, "resumed from {} after step {}", latest.display(), iterator.position())?;
    }

    // Build the model on one sample (a restore above is applied as its variables appear).
    model.call(&ops::slice(ctx, &data.x_test, &[0, 0], &[1, FEATURES as i64])?, false)?;
    write!(out, "{}", model.summary()?)?;

    // Traced once per batch shape: full batches and the smaller last batch of an epoch.
    let mut step_fn = train_step(ctx, &model, &optimizer)?;
    let writer = args.logdir.as_ref().map(|dir| SummaryWriter::create(dir, SummaryWriterOptions::new())).transpose()?;
    let spe = data.steps_per_epoch;
    let mut step = iterator.position();
    let mut wrote_graph = false;
    for epoch in step / spe..args.epochs {
        let start = Instant::now();
        let mut trained = 0;
        if step % spe == 0 {
            loss_mean.reset()?;
            accuracy.reset()?;
        }
        while step < (epoch + 1) * spe {
            let batch = (&iterator).next().ok_or("the training pipeline ended")??;
            let outs = step_fn.call(&[&batch["x"], &batch["label"]])?; // loss, logits
            loss_mean.update(&outs[0])?;
            accuracy.update(&batch["label"], &outs[1])?;
            trained += batch["label"].dim(0).unwrap_or(0);
            step += 1;
            if step == (epoch + 1) * spe || step % args.save_every == 0 {
                manager.save_numbered(step as u64)?;
            }
            if step == args.kill_after {
                crash()?;
            }
        }
        let seconds = start.elapsed().as_secs_f64();
        let (loss, acc) = (loss_mean.result()?, accuracy.result()?);
        if let Some(w) = &writer {
            // TensorBoard: the epoch's metrics, and once per run the graph of the traced step.
            w.scalar("epoch_loss", loss, Some(epoch + 1))?;
            w.scalar("epoch_accuracy", acc, Some(epoch + 1))?;
            if !wrote_graph {
                w.graph(&step_fn, 0, Some(0))?;
                wrote_graph = true;
            }
        }
        writeln!(
            out,
            "epoch {:2}/{}  loss {loss:.4}  accuracy {acc:.4}  {:.0} examples/s",
            epoch + 1,
            args.epochs,
            trained as f64 / seconds
        )?;
        out.flush()?; // each epoch's line as it ends
    }
    writeln!(out, "test accuracy: {:.4}", test_accuracy(ctx, &model, &data.x_test, &data.y_test)?)?;
    writeln!(out, "weights: {:016x}", weights_checksum(&model)?)?;
    if let Some(w) = &writer {
        w.close()?;
    }
    iterator.close()?;
    Ok(())
}

fn main() -> ExitCode {
    let Some(args) = parse_args() else {
        let me = std::env::args().next().unwrap_or_else(|| "train_digits".into());
        eprintln!(
            "usage: {me} [--data digits.csv] [--dir checkpoint_dir] [--epochs N>=1] [--logdir DIR] [--save-every N>=1] \
             [--kill-after N]"
        );
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
