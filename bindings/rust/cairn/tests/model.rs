//! Models: compile, fit, evaluate, predict, train/test on a batch, the built-in callbacks, callbacks
//! written in Rust (order, stop_training, errors, panics), BackupAndRestore's exact resume, bad
//! input, the one-expression restore into a fresh model, and saving and loading a whole model. Small
//! problems: each test runs in well under a second on 2 cores.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use cairn::data::Dataset;
use cairn::{
    Activation, BackupOptions, Callback, CallbackHooks, Checkpoint, CheckpointManager, Code, CompileOptions, Context,
    ContextOptions, CsvLoggerOptions, DenseOptions, EarlyStoppingOptions, FitOptions, Layer, Logs, Model,
    ModelCheckpointOptions, Optimizer, OptimizerOptions, PredictOptions, ReduceLrOptions, Tensor, TensorBoardOptions,
    Verbose,
};

/// A fresh, empty directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("cairn-rust-model-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl std::ops::Deref for TempDir {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn seeded() -> Context {
    Context::with_options(ContextOptions::new().seed(1)).unwrap()
}

/// 64 samples of 2 features; class 1 when x0 + x1 > 1 (a separable problem).
fn toy_data(ctx: &Context) -> (Tensor, Tensor) {
    let mut x = Vec::new();
    let mut y = Vec::new();
    for i in 0..64 {
        let (a, b) = ((i % 8) as f32 / 7.0, (i / 8) as f32 / 7.0);
        x.extend([a, b]);
        y.push(i32::from(a + b > 1.0));
    }
    (Tensor::new(ctx, &x, &[64, 2]).unwrap(), Tensor::new(ctx, &y, &[64]).unwrap())
}

/// Dense(16, relu) -> Dense(2) logits, Adam, sparse crossentropy and accuracy.
fn classifier(ctx: &Context, lr: f64) -> Model {
    let model = Model::with_name(
        ctx,
        "toy",
        &[
            &Layer::dense(ctx, DenseOptions::new(16).activation(Activation::Relu)).unwrap(),
            &Layer::dense(ctx, DenseOptions::new(2)).unwrap(),
        ],
    )
    .unwrap();
    let adam = Optimizer::new(ctx, OptimizerOptions::adam().learning_rate(lr)).unwrap();
    model.compile(CompileOptions::new(&adam, "sparse_categorical_crossentropy").metrics(&["accuracy"])).unwrap();
    model
}

fn quiet<'a>() -> FitOptions<'a> {
    FitOptions::new().verbose(Verbose::Silent)
}

fn weights_bytes(model: &Model) -> Vec<Vec<u8>> {
    model.weights().unwrap().iter().map(|w| w.read().unwrap().to_bytes().unwrap()).collect()
}

#[test]
fn fit_evaluate_predict_on_tensors() {
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let model = classifier(&ctx, 0.05);
    let history = model.fit((&x, &y), quiet().epochs(15).batch_size(16).validation_data((&x, &y))).unwrap();
    assert_eq!(history.epochs(), (0..15).collect::<Vec<i64>>());
    assert_eq!(history.names().collect::<Vec<_>>(), ["loss", "accuracy", "val_loss", "val_accuracy"]);
    let loss = history.values("loss").unwrap();
    assert_eq!(loss.len(), 15);
    assert!(loss[14] < loss[0] * 0.7, "the loss did not fall: {loss:?}");
    assert!(history.values("nope").is_none());

    let logs = model.evaluate(&x).err().map(|e| e.code());
    assert!(logs.is_some(), "evaluate without targets must fail");
    let logs = model.evaluate((&x, &y)).unwrap();
    assert_eq!(logs.names().collect::<Vec<_>>(), ["loss", "accuracy"]);
    assert!(logs.value("accuracy").unwrap() > 0.8, "{logs}");
    assert_eq!(logs.value("nope").unwrap_err().code(), Code::NotFound);
    assert!(logs.to_string().starts_with("loss: "));

    let p = model.predict(&x).unwrap();
    assert_eq!(p.shape(), [64, 2]);
    let p8 = model.predict_with(&x, PredictOptions::new().batch_size(8)).unwrap();
    assert_eq!(p.to_vec::<f32>().unwrap(), p8.to_vec::<f32>().unwrap());

    let before = model.test_on_batch(&x, &y).unwrap().value("loss").unwrap();
    let step = model.train_on_batch(&x, &y).unwrap();
    assert!(step.get("loss").is_some() && step.get("accuracy").is_some());
    assert!((before - step.value("loss").unwrap()).abs() < 1e-4);
    // The model is a layer: call, summary, weights.
    assert_eq!(model.call(&x, false).unwrap().shape(), [64, 2]);
    assert!(model.summary().unwrap().contains("toy"));
    assert_eq!(model.count_params().unwrap(), 2 * 16 + 16 + 16 * 2 + 2);
}

#[test]
fn fit_on_a_dataset_and_run_eagerly_gives_the_same_bits() {
    let run = |eager: bool| {
        let ctx = seeded();
        let (x, y) = toy_data(&ctx);
        let ds = Dataset::from_tensor_slices(&ctx, &[("x", &x), ("y", &y)]).unwrap().batch(16, false).unwrap();
        let model = Model::new(&ctx, &[&Layer::dense(&ctx, DenseOptions::new(2)).unwrap()]).unwrap();
        model.add(&Layer::activation(&ctx, Activation::Linear, None).unwrap()).unwrap();
        let sgd = Optimizer::new(&ctx, OptimizerOptions::sgd().learning_rate(0.1)).unwrap();
        model.compile(CompileOptions::new(&sgd, "sparse_categorical_crossentropy").run_eagerly(eager)).unwrap();
        let h = model.fit(&ds, quiet().epochs(3)).unwrap();
        assert_eq!(h.values("loss").unwrap().len(), 3);
        assert_eq!(model.predict(&ds).unwrap().shape(), [64, 2]);
        weights_bytes(&model)
    };
    assert_eq!(run(false), run(true));
}

#[test]
fn every_builtin_callback_is_made_and_bad_options_are_errors() {
    let ctx = seeded();
    let dir = TempDir::new("builtins");
    let made = [
        Callback::model_checkpoint(&ctx, ModelCheckpointOptions::new(dir.join("ck")).max_to_keep(2)).unwrap(),
        Callback::tensorboard(TensorBoardOptions::new(dir.join("tb")).update_freq(2).histogram_freq(1)).unwrap(),
        Callback::early_stopping(EarlyStoppingOptions::new().patience(2).baseline(1.0)).unwrap(),
        Callback::learning_rate_scheduler(|_, lr| lr).unwrap(),
        Callback::reduce_lr_on_plateau(ReduceLrOptions::new().factor(0.5)).unwrap(),
        Callback::csv_logger(CsvLoggerOptions::new(dir.join("log.csv")).separator(b';')).unwrap(),
        Callback::backup_and_restore(&ctx, BackupOptions::new(dir.join("backup")).save_freq(3)).unwrap(),
        Callback::new(Nothing).unwrap(),
    ];
    assert_eq!(format!("{:?}", made[0]), "Callback(model_checkpoint)");
    assert_eq!(format!("{:?}", made[7]), "Callback(Rust hooks)");

    let e = Callback::model_checkpoint(&ctx, ModelCheckpointOptions::new(&dir).max_to_keep(0)).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("cairn_callback_model_checkpoint"), "{e}");
    let e = Callback::reduce_lr_on_plateau(ReduceLrOptions::new().factor(1.5)).unwrap_err();
    assert!(e.message().contains("cairn_callback_reduce_lr_on_plateau"), "{e}");
    let e = Callback::early_stopping(EarlyStoppingOptions::new().patience(-1)).unwrap_err();
    assert!(e.message().contains("cairn_callback_early_stopping"), "{e}");
    let e = Callback::tensorboard(TensorBoardOptions::new("")).unwrap_err();
    assert!(e.message().contains("cairn_callback_tensorboard"), "{e}");
    let e = Callback::csv_logger(CsvLoggerOptions::new("x.csv").separator(b'\n')).unwrap_err();
    assert!(e.message().contains("cairn_callback_csv_logger"), "{e}");
    let e = Callback::backup_and_restore(&ctx, BackupOptions::new(&dir).save_freq(-1)).unwrap_err();
    assert!(e.message().contains("cairn_callback_backup_and_restore"), "{e}");
}

struct Nothing;
impl CallbackHooks for Nothing {}

#[test]
fn checkpoint_csv_tensorboard_files_and_one_expression_restore() {
    let ctx = seeded();
    let dir = TempDir::new("files");
    let (x, y) = toy_data(&ctx);
    let model = classifier(&ctx, 0.05);
    let ck = Callback::model_checkpoint(&ctx, ModelCheckpointOptions::new(dir.join("ck")).max_to_keep(2)).unwrap();
    let csv = Callback::csv_logger(CsvLoggerOptions::new(dir.join("log.csv"))).unwrap();
    let tb = Callback::tensorboard(TensorBoardOptions::new(dir.join("tb"))).unwrap();
    model.fit((&x, &y), quiet().epochs(4).batch_size(16).callbacks(&[&ck, &csv, &tb])).unwrap();

    let mut files: Vec<String> = std::fs::read_dir(dir.join("ck"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ckpt-"))
        .collect();
    files.sort();
    assert_eq!(files, ["ckpt-3", "ckpt-4"], "max_to_keep 2 of 4 epochs");
    let rows = std::fs::read_to_string(dir.join("log.csv")).unwrap();
    let rows: Vec<&str> = rows.lines().collect();
    assert_eq!(rows[0], "epoch,loss,accuracy");
    assert_eq!(rows.len(), 5);
    assert!(rows[4].starts_with("3,"));
    assert!(dir.join("tb").join("train").is_dir());

    // A fresh model restored in TensorFlow's one-expression form: the checkpoint and the status
    // are dropped before predict builds the fresh model; the values wait on the model.
    let latest = CheckpointManager::latest_in(&ctx, dir.join("ck")).unwrap().unwrap();
    assert_eq!(latest, dir.join("ck").join("ckpt-4"));
    assert_eq!(CheckpointManager::latest_in(&ctx, dir.join("none")).unwrap(), None);
    assert!(!dir.join("none").exists());
    let fresh = classifier(&ctx, 0.05);
    Checkpoint::new(&ctx, &[("model", &fresh)]).unwrap().restore(latest).unwrap().expect_partial();
    assert!(fresh.weights().unwrap().is_empty(), "not built yet");
    assert_eq!(
        fresh.predict(&x).unwrap().to_vec::<f32>().unwrap(),
        model.predict(&x).unwrap().to_vec::<f32>().unwrap()
    );
    assert_eq!(weights_bytes(&fresh), weights_bytes(&model));
}

#[test]
fn early_stopping_stops_and_schedulers_set_the_rate() {
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let model = classifier(&ctx, 0.05);
    // No change counts as an improvement: stops after the second epoch.
    let stop = Callback::early_stopping(EarlyStoppingOptions::new().monitor("loss").min_delta(1e9)).unwrap();
    let h = model.fit((&x, &y), quiet().epochs(10).callback(&stop)).unwrap();
    assert_eq!(h.epochs(), [0, 1]);

    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&calls);
    let schedule = Callback::learning_rate_scheduler(move |epoch, lr| {
        seen.lock().unwrap().push((epoch, lr));
        0.01 / (epoch + 1) as f64
    })
    .unwrap();
    model.fit((&x, &y), quiet().epochs(3).callback(&schedule)).unwrap();
    let calls = calls.lock().unwrap().clone();
    assert_eq!(calls.iter().map(|c| c.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert!((calls[0].1 - 0.05).abs() < 1e-9 && (calls[2].1 - 0.005).abs() < 1e-9, "{calls:?}");
    let adam = Optimizer::try_from(model.get("optimizer").unwrap()).unwrap();
    assert!((adam.learning_rate().unwrap() - 0.01 / 3.0).abs() < 1e-9);

    let plateau =
        Callback::reduce_lr_on_plateau(ReduceLrOptions::new().monitor("loss").patience(0).min_delta(1e9).factor(0.5))
            .unwrap();
    model.fit((&x, &y), quiet().epochs(3).callback(&plateau)).unwrap();
    assert!(adam.learning_rate().unwrap() < 0.01 / 3.0 * 0.3, "{}", adam.learning_rate().unwrap());

    // A panicking schedule is an error, not an unwind into C.
    let bad = Callback::learning_rate_scheduler(|_, _| panic!("no rate today")).unwrap();
    let e = model.fit((&x, &y), quiet().callback(&bad)).unwrap_err();
    assert!(e.message().contains("no rate today"), "{e}");
    let negative = Callback::learning_rate_scheduler(|_, _| -1.0).unwrap();
    assert_eq!(model.fit((&x, &y), quiet().callback(&negative)).unwrap_err().code(), Code::InvalidArgument);
}

/// Records every hook; stops, fails or panics at a chosen point.
#[derive(Default)]
struct Recorder {
    events: Arc<Mutex<Vec<String>>>,
    stop_at_batch: Option<i64>,
    fail_at_epoch_end: Option<i64>,
    panic_at_begin: bool,
    #[allow(dead_code)] // read by its Drop
    dropped: DropFlag,
}

/// Set when the recorder holding it is dropped.
#[derive(Default)]
struct DropFlag(Option<Arc<Mutex<bool>>>);

impl Recorder {
    fn log(&self, s: String) {
        self.events.lock().unwrap().push(s);
    }
}

impl CallbackHooks for Recorder {
    fn on_train_begin(&mut self, model: &Model) -> cairn::Result<()> {
        if self.panic_at_begin {
            panic!("boom in on_train_begin");
        }
        self.log(format!("train_begin {}", model.child_count() > 0));
        Ok(())
    }
    fn on_train_end(&mut self, _: &Model, logs: &Logs) -> cairn::Result<()> {
        self.log(format!("train_end {}", logs.get("loss").is_some()));
        Ok(())
    }
    fn on_epoch_begin(&mut self, _: &Model, epoch: i64) -> cairn::Result<()> {
        self.log(format!("epoch_begin {epoch}"));
        Ok(())
    }
    fn on_epoch_end(&mut self, _: &Model, epoch: i64, logs: &Logs) -> cairn::Result<()> {
        self.log(format!("epoch_end {epoch} {}", logs.names().collect::<Vec<_>>().join(",")));
        if self.fail_at_epoch_end == Some(epoch) {
            return Err(cairn::Error::new(Code::Aborted, format!("recorder gave up at epoch {epoch}")));
        }
        Ok(())
    }
    fn on_train_batch_begin(&mut self, _: &Model, batch: i64) -> cairn::Result<()> {
        self.log(format!("batch_begin {batch}"));
        Ok(())
    }
    fn on_train_batch_end(&mut self, model: &Model, batch: i64, _: &Logs) -> cairn::Result<()> {
        self.log(format!("batch_end {batch}"));
        if self.stop_at_batch == Some(batch) {
            model.stop_training();
        }
        Ok(())
    }
    fn on_test_end(&mut self, _: &Model, logs: &Logs) -> cairn::Result<()> {
        self.log(format!("test_end {}", logs.names().collect::<Vec<_>>().join(",")));
        Ok(())
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        if let Some(d) = &self.0 {
            *d.lock().unwrap() = true;
        }
    }
}

#[test]
fn rust_callbacks_in_order_stop_errors_and_panics() {
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let model = classifier(&ctx, 0.05);
    let events = Arc::new(Mutex::new(Vec::new()));
    let dropped = Arc::new(Mutex::new(false));
    let cb = Callback::new(Recorder {
        events: Arc::clone(&events),
        dropped: DropFlag(Some(Arc::clone(&dropped))),
        ..Default::default()
    })
    .unwrap();
    model.fit((&x, &y), quiet().epochs(2).batch_size(32).validation_data((&x, &y)).callback(&cb)).unwrap();
    let expected = [
        "train_begin true",
        "epoch_begin 0",
        "batch_begin 0",
        "batch_end 0",
        "batch_begin 1",
        "batch_end 1",
        "test_end loss,accuracy",
        "epoch_end 0 loss,accuracy,val_loss,val_accuracy",
        "epoch_begin 1",
        "batch_begin 0",
        "batch_end 0",
        "batch_begin 1",
        "batch_end 1",
        "test_end loss,accuracy",
        "epoch_end 1 loss,accuracy,val_loss,val_accuracy",
        "train_end true",
    ];
    assert_eq!(*events.lock().unwrap(), expected);
    // The Rust object lives while C holds it and is dropped (release) with the handle.
    assert!(!*dropped.lock().unwrap());
    drop(cb);
    assert!(*dropped.lock().unwrap());

    // stop_training from a hook: fit ends after that batch.
    let stop = Callback::new(Recorder { stop_at_batch: Some(0), ..Default::default() }).unwrap();
    let h = model.fit((&x, &y), quiet().epochs(5).batch_size(16).callback(&stop)).unwrap();
    assert_eq!(h.epochs(), [0]);

    // An Err ends fit with that error, code and message.
    let fail = Callback::new(Recorder { fail_at_epoch_end: Some(1), ..Default::default() }).unwrap();
    let e = model.fit((&x, &y), quiet().epochs(5).callback(&fail)).unwrap_err();
    assert_eq!(e.code(), Code::Aborted, "{e}");
    assert!(e.message().contains("recorder gave up at epoch 1"), "{e}");

    // A panic becomes an error naming the hook and the panic's message.
    let panics = Callback::new(Recorder { panic_at_begin: true, ..Default::default() }).unwrap();
    let e = model.fit((&x, &y), quiet().callback(&panics)).unwrap_err();
    assert!(e.message().contains("on_train_begin") && e.message().contains("boom in on_train_begin"), "{e}");
    // The model is usable afterwards.
    model.fit((&x, &y), quiet()).unwrap();
}

/// Fails on the n-th training batch of the whole fit (a crash stand-in).
struct FailAfter(i64);
impl CallbackHooks for FailAfter {
    fn on_train_batch_end(&mut self, _: &Model, _: i64, _: &Logs) -> cairn::Result<()> {
        self.0 -= 1;
        if self.0 == 0 {
            return Err(cairn::Error::new(Code::Cancelled, "simulated crash"));
        }
        Ok(())
    }
}

#[test]
fn backup_and_restore_resumes_to_the_same_weights() {
    let dir = TempDir::new("backup");
    let fit = |model: &Model, x: &Tensor, y: &Tensor, cbs: &[&Callback]| {
        model.fit((x, y), quiet().epochs(3).batch_size(8).seed(5).callbacks(cbs))
    };
    // Uninterrupted, in its own seeded context.
    let expected = {
        let ctx = seeded();
        let (x, y) = toy_data(&ctx);
        let model = classifier(&ctx, 0.02);
        fit(&model, &x, &y, &[]).unwrap();
        weights_bytes(&model)
    };
    // Interrupted mid-epoch (the 13th of 24 batches; backups every 5), then a fresh context and
    // model resume from the backup.
    {
        let ctx = seeded();
        let (x, y) = toy_data(&ctx);
        let model = classifier(&ctx, 0.02);
        let backup = Callback::backup_and_restore(&ctx, BackupOptions::new(&dir).save_freq(5)).unwrap();
        let crash = Callback::new(FailAfter(13)).unwrap();
        let e = fit(&model, &x, &y, &[&backup, &crash]).unwrap_err();
        assert!(e.message().contains("simulated crash"), "{e}");
        assert_ne!(weights_bytes(&model), expected);
    }
    assert!(std::fs::read_dir(&dir).unwrap().count() > 0, "the backup is kept after an error");
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let model = classifier(&ctx, 0.02);
    let backup = Callback::backup_and_restore(&ctx, BackupOptions::new(&dir).save_freq(5)).unwrap();
    fit(&model, &x, &y, &[&backup]).unwrap();
    assert_eq!(weights_bytes(&model), expected);
}

#[test]
fn bad_input_names_the_c_function() {
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let model = Model::new(&ctx, &[&Layer::dense(&ctx, DenseOptions::new(2)).unwrap()]).unwrap();
    let e = model.fit((&x, &y), quiet()).unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("compile"), "{e}");

    let adam = Optimizer::new(&ctx, OptimizerOptions::adam()).unwrap();
    let e = model.compile(CompileOptions::new(&adam, "hinge")).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("cairn_model_compile") && e.message().contains("hinge"), "{e}");
    let e = model.compile(CompileOptions::new(&adam, "mse").metrics(&["mse", "mse"])).unwrap_err();
    assert!(e.message().contains("cairn_model_compile"), "{e}");

    model.compile(CompileOptions::new(&adam, "sparse_categorical_crossentropy")).unwrap();
    let e = model.fit((&x, &y), quiet().epochs(0)).unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("cairn_model_fit"), "{e}");
    let short = Tensor::new(&ctx, &[0i32; 10], &[10]).unwrap();
    let e = model.fit((&x, &short), quiet()).unwrap_err();
    assert!(e.message().contains("cairn_model_fit"), "{e}");
    let e = model.evaluate((&x, &short)).unwrap_err();
    assert!(e.message().contains("cairn_model_evaluate"), "{e}");
    let e = model.predict_with(&x, PredictOptions::new().batch_size(0)).unwrap_err();
    assert!(e.message().contains("cairn_model_predict"), "{e}");
}

#[test]
fn save_and_load_give_back_the_model_and_its_optimizer() {
    let ctx = seeded();
    let (x, y) = toy_data(&ctx);
    let dir = TempDir::new("saved");
    let saved = dir.join("model");
    let never_called = classifier(&ctx, 0.05);
    let e = never_called.save(&saved).unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition, "{e}");
    assert!(e.message().contains("cairn_model_save"), "{e}");

    let model = classifier(&ctx, 0.05);
    model.fit((&x, &y), quiet().epochs(2).batch_size(16)).unwrap();
    model.save(&saved).unwrap();
    let loaded = Model::load(&ctx, &saved).unwrap();
    assert_eq!(
        loaded.predict(&x).unwrap().to_bytes().unwrap(),
        model.predict(&x).unwrap().to_bytes().unwrap(),
        "the loaded model predicts differently"
    );
    // One more epoch each: equal weights only if the optimizer's step and slots came back.
    model.fit((&x, &y), quiet().epochs(1).batch_size(16).shuffle(false)).unwrap();
    loaded.fit((&x, &y), quiet().epochs(1).batch_size(16).shuffle(false)).unwrap();
    assert_eq!(weights_bytes(&loaded), weights_bytes(&model));

    let e = Model::load(&ctx, dir.join("none")).unwrap_err();
    assert_eq!(e.code(), Code::NotFound, "{e}");
    assert!(e.message().contains("cairn_model_load"), "{e}");
}
