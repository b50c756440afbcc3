// The digits MLP trained on several processes under mpirun with a multi-worker strategy and
// Model::fit, then saved as a sharded checkpoint: the Rust version of
// tests/mpi/multi_worker_digits.c (the same data pipeline, model and global batch of 32). Each rank
// starts from its own random init (seed 1 + rank): the broadcast from rank 0 before the first step
// makes the weights equal. Only rank 0 prints progress. Every rank prints
// "rank R of N: accuracy A weights C"; rank 0 then prints "weights identical on N ranks" when the
// all-gathered checksums agree (else the program fails), and "saved PATH" for the checkpoint. With
// --restore, one process without MPI restores the newest checkpoint of DIR into a fresh model and
// prints "restored: accuracy A". tests/mpi/run.sh runs it.
//
// usage: mpirun -np 2 multi_worker --data digits.csv --epochs N --dir DIR
//        multi_worker --data digits.csv --restore DIR

use std::time::Duration;

use cairn::data::{Cardinality, CsvOptions, Dataset, MapOptions};
use cairn::distribute::MirroredStrategy;
use cairn::mpi::{Mpi, MultiWorkerOptions};
use cairn::{
    ops, Activation, Checkpoint, CheckpointManager, CompileOptions, Context, ContextOptions, DType, DenseOptions,
    FitOptions, Layer, Model, Optimizer, OptimizerOptions, Tensor, Verbose,
};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const BATCH: i64 = 32;
const SHUFFLE_SEED: i64 = 7;
const LEARNING_RATE: f64 = 0.003; // as examples/c/fit_digits.c

struct Args {
    data: String,
    epochs: i64,
    dir: Option<String>,
    restore: Option<String>,
}

fn main() -> Result<()> {
    let args = parse_args()?;
    match (&args.restore, &args.dir) {
        (Some(dir), _) => restore_one(&args.data, dir),
        (None, Some(dir)) => train(&args.data, args.epochs, dir),
        (None, None) => Err("usage: multi_worker --data digits.csv --epochs N (--dir DIR | --restore DIR)".into()),
    }
}

fn parse_args() -> Result<Args> {
    let mut args = Args { data: "examples/data/digits.csv".into(), epochs: 5, dir: None, restore: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("multi_worker: {flag} needs a value"))?;
        match flag.as_str() {
            "--data" => args.data = value,
            "--epochs" => args.epochs = value.parse()?,
            "--dir" => args.dir = Some(value),
            "--restore" => args.restore = Some(value),
            _ => return Err(format!("multi_worker: unknown flag {flag}").into()),
        }
    }
    Ok(args)
}

/// Runs on every rank: fit with the multi-worker strategy, the weights compared across the ranks,
/// and a sharded save.
fn train(csv: &str, epochs: i64, dir: &str) -> Result<()> {
    // The rank from mpirun's environment, before MPI starts: each rank's own seed.
    let rank: u64 = std::env::var("OMPI_COMM_WORLD_RANK").ok().and_then(|r| r.parse().ok()).unwrap_or(0);
    let ctx = Context::with_options(ContextOptions::new().seed(1 + rank))?;
    let mpi = Mpi::init(&ctx, Duration::from_secs(60))?;
    let strategy = MirroredStrategy::multi_worker(&ctx, &mpi, &MultiWorkerOptions::new().check_replicas(true))?;
    let (train_data, test_data) = load_digits(&ctx, csv)?;
    let model = strategy.scope(|| new_model(&ctx))?;
    model.fit(&train_data, FitOptions::new().epochs(epochs).verbose(Verbose::EpochLines))?;
    let accuracy = model.evaluate(&test_data)?.value("accuracy")?;

    let mine = weights_checksum(&model)?;
    let all = mpi.all_gather(&Tensor::scalar(&ctx, mine as i64)?)?.to_vec::<i64>()?;
    println!("rank {} of {}: accuracy {accuracy:.4} weights {mine:016x}", mpi.rank(), mpi.size());
    if let Some(r) = all.iter().position(|&sum| sum as u64 != mine) {
        return Err(format!(
            "rank {}: weights differ: rank {r} has {:016x}, this rank {mine:016x}",
            mpi.rank(),
            all[r]
        )
        .into());
    }
    let manager = CheckpointManager::new(Checkpoint::new(&ctx, &[("model", &model)])?, dir, Default::default())?;
    manager.shard(Some(&mpi))?;
    let path = manager.save()?;
    if mpi.rank() == 0 {
        println!("weights identical on {} ranks: {mine:016x}", mpi.size());
        println!("saved {}", path.display());
    }
    // Dropped in reverse order: the manager and the model (which keeps the strategy) release the
    // communicator before `mpi`, the last user of Cairn's MPI_Init, finalizes MPI.
    Ok(())
}

/// Restores the newest checkpoint of `dir` into a fresh model in this one process (no MPI) and
/// evaluates it.
fn restore_one(csv: &str, dir: &str) -> Result<()> {
    let ctx = Context::with_options(ContextOptions::new().seed(1))?;
    let (_, test_data) = load_digits(&ctx, csv)?;
    let model = new_model(&ctx)?; // restored before it is built: the values wait on it
    let latest = CheckpointManager::latest_in(&ctx, dir)?.ok_or("no checkpoint")?;
    Checkpoint::new(&ctx, &[("model", &model)])?.restore(latest)?.expect_partial();
    println!("restored: accuracy {:.4}", model.evaluate(&test_data)?.value("accuracy")?);
    Ok(())
}

/// examples/c/digits_data.c's pipelines: line i of the CSV is a test sample when i % 5 == 4; the
/// training part shuffled each pass and batched (global batches), the test part one batch.
fn load_digits(ctx: &Context, csv: &str) -> Result<(Dataset, Dataset)> {
    let dtypes: Vec<DType> = (0..65).map(|i| if i < 64 { DType::Float32 } else { DType::Int32 }).collect();
    let prepare = |ctx: &Context, c: &[Tensor]| -> cairn::Result<Vec<Tensor>> {
        let x = ops::pack(ctx, &c[..64].iter().collect::<Vec<_>>(), ops::PackAttrs::new())?;
        Ok(vec![ops::mul(ctx, &x, &Tensor::scalar(ctx, 1.0f32 / 16.0)?)?, c[64].clone()])
    };
    let samples =
        Dataset::csv(ctx, &[csv], &CsvOptions::new(&dtypes))?.map("prepare", prepare, MapOptions::new().outputs(2))?;
    let mut train = samples.shard(5, 0)?;
    for k in 1..4 {
        train = train.concatenate(&samples.shard(5, k)?)?;
    }
    let test = samples.shard(5, 4)?;
    let (n_train, n_test) = (count(&train)?, count(&test)?);
    Ok((train.shuffle(n_train, SHUFFLE_SEED, true)?.batch(BATCH, false)?, test.batch(n_test, false)?))
}

fn count(d: &Dataset) -> Result<i64> {
    match d.cardinality() {
        Cardinality::Finite(n) => Ok(n as i64),
        other => Err(format!("the digits dataset has no count: {other:?}").into()),
    }
}

/// Dense(64, relu) -> Dense(10) logits, compiled with Adam and sparse crossentropy.
fn new_model(ctx: &Context) -> cairn::Result<Model> {
    let dense = |units, act| Layer::dense(ctx, DenseOptions::new(units).activation(act));
    let layers = [&dense(64, Activation::Relu)?, &dense(10, Activation::Linear)?];
    let model = Model::new(ctx, &layers)?;
    let adam = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(LEARNING_RATE))?;
    model.compile(CompileOptions::new(&adam, "sparse_categorical_crossentropy").metrics(&["accuracy"]))?;
    Ok(model)
}

/// FNV-1a 64 over the bytes of the model's trainable weights (as digits_weights_checksum in
/// examples/c/digits_data.c): equal weights, equal checksum.
fn weights_checksum(model: &Model) -> cairn::Result<u64> {
    let mut h = 0xcbf29ce484222325u64;
    for v in model.trainable_weights()? {
        for b in v.read()?.to_bytes()? {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
    }
    Ok(h)
}
