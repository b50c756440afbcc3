// The digits MLP (64 -> 64 relu -> 10) with Model::fit, as examples/c/fit_digits.c: the UCI 8x8
// digits come from the CSV through a dataset; fit keeps 3 checkpoints and writes TensorBoard logs;
// then it evaluates on the held-out samples, restores the last checkpoint into a fresh model in one
// expression (the checkpoint and its status dropped before the model is built) and predicts.
//
// usage: cargo run --release --example fit_digits -- [digits.csv] [output directory]

use cairn::data::{CsvOptions, Dataset, MapOptions};
use cairn::{
    ops, Activation, Callback, Checkpoint, CheckpointManager, CompileOptions, Context, ContextOptions, DType,
    DenseOptions, FitOptions, Layer, Model, ModelCheckpointOptions, Optimizer, OptimizerOptions, Tensor,
    TensorBoardOptions,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let csv = std::env::args().nth(1).unwrap_or("examples/data/digits.csv".into());
    let dir = std::env::args().nth(2).map_or(std::env::temp_dir().join("cairn-fit-digits"), Into::into);
    let ctx = Context::with_options(ContextOptions::new().seed(1))?;
    let dtypes: Vec<DType> = (0..65).map(|i| if i < 64 { DType::Float32 } else { DType::Int32 }).collect();
    let pixels = |ctx: &Context, c: &[Tensor]| -> cairn::Result<Vec<Tensor>> {
        let x = ops::pack(ctx, &c[..64].iter().collect::<Vec<_>>(), ops::PackAttrs::new())?;
        Ok(vec![ops::mul(ctx, &x, &Tensor::scalar(ctx, 1.0f32 / 16.0)?)?, c[64].clone()])
    };
    let samples =
        Dataset::csv(&ctx, &[csv], &CsvOptions::new(&dtypes))?.map("x", pixels, MapOptions::new().outputs(2))?;
    let (train, test) =
        (samples.skip(360)?.shuffle(1437, 7, true)?.batch(32, false)?, samples.take(360)?.batch(360, false)?);
    let build = || -> cairn::Result<Model> {
        let dense = |units, act| Layer::dense(&ctx, DenseOptions::new(units).activation(act));
        let model = Model::new(&ctx, &[&dense(64, Activation::Relu)?, &dense(10, Activation::Linear)?])?;
        let adam = Optimizer::new(&ctx, OptimizerOptions::adam().learning_rate(0.003))?;
        model.compile(CompileOptions::new(&adam, "sparse_categorical_crossentropy").metrics(&["accuracy"]))?;
        Ok(model)
    };
    let model = build()?;
    let checkpoints = Callback::model_checkpoint(&ctx, ModelCheckpointOptions::new(dir.join("ckpt")).max_to_keep(3))?;
    let tensorboard = Callback::tensorboard(TensorBoardOptions::new(dir.join("logs")))?;
    model.fit(&train, FitOptions::new().epochs(30).callbacks(&[&checkpoints, &tensorboard]))?;
    println!("test accuracy: {:.4}", model.evaluate(&test)?.value("accuracy")?);
    let fresh = build()?;
    let latest = CheckpointManager::latest_in(&ctx, dir.join("ckpt"))?.ok_or("no checkpoint")?;
    Checkpoint::new(&ctx, &[("model", &fresh)])?.restore(latest)?.expect_partial();
    let same = fresh.predict(&test)?.to_vec::<f32>()? == model.predict(&test)?.to_vec::<f32>()?;
    println!("restored model predicts the same: {same}");
    Ok(())
}
