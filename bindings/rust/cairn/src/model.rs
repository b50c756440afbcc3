//! Models (tf.keras.Model): compile, fit, evaluate, predict, and the logs and history they return.
//!
//! A [`Model`] is a Sequential that can be compiled and trained: it dereferences to [`Layer`], so
//! everything that takes a layer or an [`Object`] takes a model (call, weights, summary,
//! checkpoints). Callbacks are in [`Callback`] (built in, or written in Rust with
//! [`CallbackHooks`]).
//!
//! ```no_run
//! use cairn::{Activation, CompileOptions, Context, DenseOptions, FitOptions, Layer, Model, Optimizer,
//!             OptimizerOptions, Tensor};
//! # fn main() -> cairn::Result<()> {
//! let ctx = Context::new()?;
//! let model = Model::new(&ctx, &[
//!     &Layer::dense(&ctx, DenseOptions::new(16).activation(Activation::Relu))?,
//!     &Layer::dense(&ctx, DenseOptions::new(1))?,
//! ])?;
//! model.compile(CompileOptions::new(&Optimizer::new(&ctx, OptimizerOptions::adam())?, "mse"))?;
//! let x = Tensor::new(&ctx, &[0.0f32, 1.0, 2.0, 3.0], &[4, 1])?;
//! let y = Tensor::new(&ctx, &[1.0f32, 3.0, 5.0, 7.0], &[4, 1])?;
//! let history = model.fit((&x, &y), FitOptions::new().epochs(10))?;
//! println!("loss {:?}", history.values("loss"));
//! let prediction = model.predict(&x)?;
//! # Ok(())
//! # }
//! ```

use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::checkpoint::c_path;
use crate::error::{c_string, check, Name};
use crate::model_callbacks::Callback;
use crate::options::{init, set_fields, setters};
use crate::{Code, Context, Dataset, Error, Layer, Object, ObjectType, Optimizer, Result, Tensor, Verbose};

/// A model (keras.Sequential with compile and fit): a [`Layer`] (it derefs to one) whose layers
/// are its edges "layer-0", "layer-1", ... Weights, call, summary and checkpoints work as for any
/// layer; compiling sets the optimizer as its edge "optimizer", so a checkpoint of the model alone
/// saves the optimizer too. `Clone` gives a second handle to the same model.
#[derive(Clone)]
pub struct Model(Layer);

/// The data of [`Model::fit`], [`Model::evaluate`] and [`Model::predict`]: a dataset of `(x, y)`
/// elements (more components ignored; predict uses x only), or in-memory tensors batched along the
/// first dimension. Borrowed for the call; made with `From`: `&dataset`, `(&x, &y)` or `&x`
/// (inputs only, for predict).
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    /// A dataset, batched already.
    Dataset(&'a Dataset),
    /// Inputs and (except for predict) targets, batched by the call's batch size.
    Tensors {
        /// The inputs, the first dimension the samples.
        x: &'a Tensor,
        /// The targets; `None` for predict.
        y: Option<&'a Tensor>,
    },
}

impl<'a> From<&'a Dataset> for Data<'a> {
    fn from(ds: &'a Dataset) -> Data<'a> {
        Data::Dataset(ds)
    }
}

impl<'a> From<(&'a Tensor, &'a Tensor)> for Data<'a> {
    fn from((x, y): (&'a Tensor, &'a Tensor)) -> Data<'a> {
        Data::Tensors { x, y: Some(y) }
    }
}

impl<'a> From<&'a Tensor> for Data<'a> {
    fn from(x: &'a Tensor) -> Data<'a> {
        Data::Tensors { x, y: None }
    }
}

impl Data<'_> {
    fn raw(&self) -> Result<sys::cairn_model_data> {
        let mut raw = init(sys::cairn_model_data_init)?;
        match *self {
            Data::Dataset(ds) => raw.dataset = ds.as_raw(),
            Data::Tensors { x, y } => {
                raw.x = x.as_raw();
                raw.y = y.map_or(ptr::null(), |y| y.as_raw());
            }
        }
        Ok(raw)
    }
}

/// Options of [`Model::compile`]: `CompileOptions::new(&adam, "sparse_categorical_crossentropy")
/// .metrics(&["accuracy"])`. Fields not set keep cairn.h's defaults (`cairn_compile_options_init`).
#[derive(Clone, Debug)]
pub struct CompileOptions<'a> {
    optimizer: &'a Optimizer,
    loss: String,
    from_logits: Option<bool>,
    metrics: Vec<String>,
    run_eagerly: Option<bool>,
}

impl<'a> CompileOptions<'a> {
    /// The optimizer (the model keeps a reference) and the loss: "sparse_categorical_crossentropy",
    /// "binary_crossentropy", "mean_squared_error" ("mse") or "mean_absolute_error" ("mae").
    pub fn new(optimizer: &'a Optimizer, loss: &str) -> Self {
        CompileOptions { optimizer, loss: loss.to_string(), from_logits: None, metrics: Vec::new(), run_eagerly: None }
    }

    setters! {
        /// Whether the crossentropy losses take logits; default true.
        from_logits: bool;
    }

    /// Metrics, in order: "accuracy" (sparse or binary after the loss), "sparse_categorical_accuracy",
    /// "binary_accuracy", "mse", "mae". Default none.
    pub fn metrics(mut self, metrics: &[&str]) -> Self {
        self.metrics = metrics.iter().map(|m| m.to_string()).collect();
        self
    }

    setters! {
        /// Runs the training step eagerly instead of as a compiled function (the same bits); default
        /// false.
        run_eagerly: bool;
    }
}

/// Options of [`Model::fit`]: `FitOptions::new().epochs(10).callbacks(&[&checkpoint])`. Fields not
/// set keep cairn.h's defaults (`cairn_fit_options_init`: 1 epoch, batches of 32, shuffled, ...).
#[derive(Clone, Debug, Default)]
pub struct FitOptions<'a> {
    epochs: Option<i64>,
    batch_size: Option<i64>,
    initial_epoch: Option<i64>,
    steps_per_epoch: Option<i64>,
    shuffle: Option<bool>,
    seed: Option<i64>,
    validation: Option<Data<'a>>,
    validation_batch_size: Option<i64>,
    validation_freq: Option<i64>,
    verbose: Option<Verbose>,
    callbacks: Vec<&'a Callback>,
}

impl<'a> FitOptions<'a> {
    /// Every field as cairn.h documents it.
    pub fn new() -> Self {
        FitOptions::default()
    }

    setters! {
        /// The number of epochs (the last epoch's number + 1); default 1.
        epochs: i64;
        /// Samples per batch (tensors only; a dataset is batched already); default 32.
        batch_size: i64;
        /// The epoch to start at (resuming); default 0.
        initial_epoch: i64;
        /// N batches an epoch from one iterator that runs on across epochs (a repeated dataset);
        /// default 0: an epoch is one pass over the data.
        steps_per_epoch: i64;
        /// Whether tensors are reshuffled each epoch; default true.
        shuffle: bool;
        /// The shuffle's seed; default 0.
        seed: i64;
    }

    /// Validation data (`&dataset` or `(&x, &y)`), evaluated after every `validation_freq`-th
    /// epoch; its values join the logs as "val_loss", "val_...". Default none.
    pub fn validation_data(mut self, data: impl Into<Data<'a>>) -> Self {
        self.validation = Some(data.into());
        self
    }

    setters! {
        /// The validation batch size; default the batch size.
        validation_batch_size: i64;
        /// Validate after every N-th epoch; default 1.
        validation_freq: i64;
        /// How fit reports progress; default [`Verbose::Auto`] (a bar on a terminal, else a line an
        /// epoch).
        verbose: Verbose;
    }

    /// The callbacks, called in order (added to any given before); borrowed for the call.
    pub fn callbacks(mut self, callbacks: &[&'a Callback]) -> Self {
        self.callbacks.extend_from_slice(callbacks);
        self
    }

    /// Adds one callback.
    pub fn callback(mut self, callback: &'a Callback) -> Self {
        self.callbacks.push(callback);
        self
    }
}

/// Options of [`Model::evaluate_with`]. Fields not set keep cairn.h's defaults
/// (`cairn_evaluate_options_init`).
#[derive(Clone, Debug, Default)]
pub struct EvaluateOptions<'a> {
    batch_size: Option<i64>,
    steps: Option<i64>,
    callbacks: Vec<&'a Callback>,
}

impl<'a> EvaluateOptions<'a> {
    /// Every field as cairn.h documents it.
    pub fn new() -> Self {
        EvaluateOptions::default()
    }

    setters! {
        /// Samples per batch (tensors only); default 32.
        batch_size: i64;
        /// The number of batches; default 0: until the data ends.
        steps: i64;
    }

    /// Callbacks whose test hooks run.
    pub fn callbacks(mut self, callbacks: &[&'a Callback]) -> Self {
        self.callbacks.extend_from_slice(callbacks);
        self
    }
}

/// Options of [`Model::predict_with`]. Fields not set keep cairn.h's defaults
/// (`cairn_predict_options_init`).
#[derive(Clone, Copy, Debug, Default)]
pub struct PredictOptions {
    batch_size: Option<i64>,
    steps: Option<i64>,
}

impl PredictOptions {
    /// Every field as cairn.h documents it.
    pub fn new() -> Self {
        PredictOptions::default()
    }

    setters! {
        /// Samples per batch (tensors only); default 32.
        batch_size: i64;
        /// The number of batches; default 0: until the data ends.
        steps: i64;
    }
}

/// The raw pointers of a callback list, valid while the callbacks are borrowed.
fn raw_callbacks(callbacks: &[&Callback]) -> Vec<*mut sys::cairn_callback> {
    callbacks.iter().map(|c| c.as_raw()).collect()
}

impl Model {
    /// A model of `layers` (each added in order; the model takes its own references), named
    /// "sequential", "sequential_1", ...
    pub fn new(ctx: &Context, layers: &[&Layer]) -> Result<Model> {
        Model::create(ctx, None, layers)
    }

    /// [`Model::new`] with a name.
    pub fn with_name(ctx: &Context, name: &str, layers: &[&Layer]) -> Result<Model> {
        Model::create(ctx, Some(name), layers)
    }

    fn create(ctx: &Context, name: Option<&str>, layers: &[&Layer]) -> Result<Model> {
        let f = "Model::new";
        let name = Name::new(name, f)?;
        let mut raw = init(sys::cairn_model_options_init)?;
        name.set(&mut raw.name);
        let ptrs: Vec<*const sys::cairn_object> = layers.iter().map(|l| l.as_raw() as *const _).collect();
        if !ptrs.is_empty() {
            raw.layers = ptrs.as_ptr();
            raw.n_layers = ptrs.len();
        }
        let mut out = ptr::null_mut();
        // SAFETY: the options, the name and the layer list outlive the call.
        unsafe { check(sys::cairn_model_create(ctx.as_raw(), &raw, &mut out))? };
        Ok(Model(Layer::wrap(Object::from_result(out, "cairn_model_create")?)))
    }

    /// A handle to a model C lends a hook, never dropped.
    ///
    /// # Safety
    /// `raw` is a live model for as long as the result is used.
    pub(crate) unsafe fn lent(raw: NonNull<sys::cairn_object>) -> std::mem::ManuallyDrop<Model> {
        std::mem::ManuallyDrop::new(Model(Layer::wrap(Object::from_raw(raw))))
    }

    /// Appends `layer` (the model takes its own reference).
    pub fn add(&self, layer: &Layer) -> Result<()> {
        unsafe { check(sys::cairn_sequential_add(self.as_raw(), layer.as_raw())) }
    }

    /// The model as a [`Layer`] (also what `Deref` gives).
    pub fn as_layer(&self) -> &Layer {
        &self.0
    }

    /// Configures the model for training; compiling again replaces the configuration.
    /// INVALID_ARGUMENT for an unknown loss or metric, or a metric given twice.
    pub fn compile(&self, options: CompileOptions<'_>) -> Result<()> {
        let f = "Model::compile";
        let loss = c_string(&options.loss, f, "loss")?;
        let metrics = options.metrics.iter().map(|m| c_string(m, f, "metric")).collect::<Result<Vec<CString>>>()?;
        let metric_ptrs: Vec<*const c_char> = metrics.iter().map(|m| m.as_ptr()).collect();
        let mut raw = init(sys::cairn_compile_options_init)?;
        raw.optimizer = options.optimizer.as_raw();
        raw.loss = loss.as_ptr();
        set_fields!(raw, options, { from_logits, run_eagerly });
        if !metric_ptrs.is_empty() {
            raw.metrics = metric_ptrs.as_ptr();
            raw.n_metrics = metric_ptrs.len();
        }
        // SAFETY: the options and their strings outlive the call.
        unsafe { check(sys::cairn_model_compile(self.as_raw(), &raw)) }
    }

    /// Trains the model (keras Model.fit) and returns the history of every log value. Builds the
    /// model on the first batch if needed. A callback's error (or panic) ends fit with that error;
    /// the weights keep the updates of the steps that ran.
    pub fn fit<'a>(&self, data: impl Into<Data<'a>>, options: FitOptions<'a>) -> Result<History> {
        let data = data.into().raw()?;
        let validation = options.validation.as_ref().map(Data::raw).transpose()?;
        let callbacks = raw_callbacks(&options.callbacks);
        let mut raw = init(sys::cairn_fit_options_init)?;
        set_fields!(raw, options, {
            epochs,
            batch_size,
            initial_epoch,
            steps_per_epoch,
            shuffle,
            seed,
            validation_batch_size,
            validation_freq
        });
        if let Some(v) = &validation {
            raw.validation = v;
        }
        if let Some(v) = options.verbose {
            raw.verbose = v.to_raw();
        }
        if !callbacks.is_empty() {
            raw.callbacks = callbacks.as_ptr();
            raw.n_callbacks = callbacks.len();
        }
        let mut out = ptr::null_mut();
        // SAFETY: the data, options and callbacks outlive the call; `out` receives the history.
        unsafe {
            check(sys::cairn_model_fit(self.as_raw(), &data, &raw, &mut out))?;
            History::take(out)
        }
    }

    /// The loss and metrics over the data (keras Model.evaluate), in inference mode.
    pub fn evaluate<'a>(&self, data: impl Into<Data<'a>>) -> Result<Logs> {
        self.evaluate_with(data, EvaluateOptions::new())
    }

    /// [`Model::evaluate`] with options.
    pub fn evaluate_with<'a>(&self, data: impl Into<Data<'a>>, options: EvaluateOptions<'a>) -> Result<Logs> {
        let data = data.into().raw()?;
        let callbacks = raw_callbacks(&options.callbacks);
        let mut raw = init(sys::cairn_evaluate_options_init)?;
        set_fields!(raw, options, { batch_size, steps });
        if !callbacks.is_empty() {
            raw.callbacks = callbacks.as_ptr();
            raw.n_callbacks = callbacks.len();
        }
        let mut out = ptr::null_mut();
        // SAFETY: as in fit.
        unsafe {
            check(sys::cairn_model_evaluate(self.as_raw(), &data, &raw, &mut out))?;
            Logs::take(out, "cairn_model_evaluate")
        }
    }

    /// The model's outputs for every batch, concatenated along the first dimension (keras
    /// Model.predict). Takes `&x` or a dataset (its first component); needs no compile.
    pub fn predict<'a>(&self, data: impl Into<Data<'a>>) -> Result<Tensor> {
        self.predict_with(data, PredictOptions::new())
    }

    /// [`Model::predict`] with options.
    pub fn predict_with<'a>(&self, data: impl Into<Data<'a>>, options: PredictOptions) -> Result<Tensor> {
        let data = data.into().raw()?;
        let mut raw = init(sys::cairn_predict_options_init)?;
        set_fields!(raw, options, { batch_size, steps });
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_model_predict(self.as_raw(), &data, &raw, &mut out))? };
        Tensor::from_raw_result(out, "cairn_model_predict")
    }

    /// One training step on one batch; the logs are that batch's loss and metrics.
    pub fn train_on_batch(&self, x: &Tensor, y: &Tensor) -> Result<Logs> {
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::cairn_model_train_on_batch(self.as_raw(), x.as_raw(), y.as_raw(), &mut out))?;
            Logs::take(out, "cairn_model_train_on_batch")
        }
    }

    /// The loss and metrics of one batch, without training.
    pub fn test_on_batch(&self, x: &Tensor, y: &Tensor) -> Result<Logs> {
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::cairn_model_test_on_batch(self.as_raw(), x.as_raw(), y.as_raw(), &mut out))?;
            Logs::take(out, "cairn_model_test_on_batch")
        }
    }

    /// Saves the whole model into `dir` (keras `model.save`): model.json (the layers' configs and
    /// the compile configuration), weights.ckpt (a checkpoint of `{"model": model}`: weights,
    /// optimizer, slots) and serving.cairnfn (the forward pass at the built input shape with any
    /// batch size, for [`crate::Function::load`] without the code that built the model). The new
    /// save is swapped in whole, so a failed save leaves an earlier one as it was.
    ///
    /// Errors: FAILED_PRECONDITION for a model never called (its input shape is unknown);
    /// UNIMPLEMENTED for an optimizer with a learning-rate schedule; I/O errors naming the path.
    pub fn save(&self, dir: impl AsRef<Path>) -> Result<()> {
        let dir = c_path(dir.as_ref(), "Model::save", "directory")?;
        // SAFETY: a live model; the path outlives the call.
        unsafe { check(sys::cairn_model_save(self.as_raw(), dir.as_ptr())) }
    }

    /// Loads a model [`Model::save`] wrote (keras `models.load_model`): built, compiled as it was,
    /// with its weights and the optimizer's step and slots, ready to predict or train on.
    ///
    /// Errors: NOT_FOUND for a directory without a saved model; INVALID_ARGUMENT naming the file
    /// and the field of a config it cannot read; the checkpoint's errors for damaged weights.
    pub fn load(ctx: &Context, dir: impl AsRef<Path>) -> Result<Model> {
        let dir = c_path(dir.as_ref(), "Model::load", "directory")?;
        let mut out = ptr::null_mut();
        // SAFETY: a live context; the path outlives the call; `out` receives a model we own.
        unsafe { check(sys::cairn_model_load(ctx.as_raw(), dir.as_ptr(), &mut out))? };
        Ok(Model(Layer::wrap(Object::from_result(out, "cairn_model_load")?)))
    }

    /// Asks a running fit to stop after the current batch (keras `model.stop_training = True`);
    /// for callbacks.
    pub fn stop_training(&self) {
        unsafe { sys::cairn_model_stop_training(self.as_raw()) }
    }
}

impl Deref for Model {
    type Target = Layer;
    fn deref(&self) -> &Layer {
        &self.0
    }
}

impl AsRef<Object> for Model {
    fn as_ref(&self) -> &Object {
        self.0.as_object()
    }
}

impl From<Model> for Layer {
    fn from(model: Model) -> Layer {
        model.0
    }
}

impl From<Model> for Object {
    fn from(model: Model) -> Object {
        model.0.into()
    }
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Model({} layers, {} params)", self.child_count(), self.count_params().unwrap_or(0))
    }
}

/// Logs: the named values of a batch, an epoch or an evaluation, in order ("loss", the metrics in
/// compile order, then "val_loss", "val_..."). A copy: it outlives the call that made it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Logs {
    entries: Vec<(String, f64)>,
}

impl Logs {
    /// Copies logs the C API lends.
    ///
    /// # Safety
    /// `raw` is NULL or live logs.
    pub(crate) unsafe fn copy(raw: *const sys::cairn_logs) -> Logs {
        let n = sys::cairn_logs_size(raw);
        let entries = (0..n)
            .map(|i| {
                let name = sys::cairn_logs_name(raw, i);
                let name =
                    if name.is_null() { String::new() } else { CStr::from_ptr(name).to_string_lossy().into_owned() };
                (name, sys::cairn_logs_value(raw, i))
            })
            .collect();
        Logs { entries }
    }

    /// Copies and frees logs a function handed over.
    unsafe fn take(raw: *mut sys::cairn_logs, function: &str) -> Result<Logs> {
        if raw.is_null() {
            return Err(Error::new(Code::Internal, format!("{function}: returned success but no logs")));
        }
        let logs = Logs::copy(raw);
        sys::cairn_logs_free(raw);
        Ok(logs)
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value named `name`, if present.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// The value named `name`; NOT_FOUND naming it and listing those present (as
    /// `cairn_logs_get`).
    pub fn value(&self, name: &str) -> Result<f64> {
        self.get(name).ok_or_else(|| {
            Error::new(
                Code::NotFound,
                format!("Logs::value: no value {name:?}; the logs have {:?}", self.names().collect::<Vec<_>>()),
            )
        })
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// The (name, value) pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.entries.iter().map(|(n, v)| (n.as_str(), *v))
    }
}

impl fmt::Display for Logs {
    /// "loss: 0.1234 - accuracy: 0.9500"
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (n, v)) in self.entries.iter().enumerate() {
            write!(f, "{}{n}: {v:.4}", if i == 0 { "" } else { " - " })?;
        }
        Ok(())
    }
}

/// What fit returns (keras History): the epochs run and, per log name, one value per epoch that
/// had it (validation values only for validated epochs). A copy.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    epochs: Vec<i64>,
    values: Vec<(String, Vec<f64>)>,
}

impl History {
    /// Copies and frees a history.
    unsafe fn take(raw: *mut sys::cairn_history) -> Result<History> {
        if raw.is_null() {
            return Err(Error::new(Code::Internal, "cairn_model_fit: returned success but no history"));
        }
        let epochs = (0..sys::cairn_history_num_epochs(raw)).map(|i| sys::cairn_history_epoch(raw, i)).collect();
        let mut values = Vec::new();
        for i in 0..sys::cairn_history_num_names(raw) {
            let name = sys::cairn_history_name(raw, i);
            if name.is_null() {
                continue;
            }
            let mut n = 0;
            let p = sys::cairn_history_values(raw, name, &mut n);
            let v = if p.is_null() || n == 0 { Vec::new() } else { std::slice::from_raw_parts(p, n).to_vec() };
            values.push((CStr::from_ptr(name).to_string_lossy().into_owned(), v));
        }
        sys::cairn_history_free(raw);
        Ok(History { epochs, values })
    }

    /// The numbers of the epochs run, in order (from 0; initial_epoch + i unless a backup resumed).
    pub fn epochs(&self) -> &[i64] {
        &self.epochs
    }

    /// The log names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|(n, _)| n.as_str())
    }

    /// The values of `name`, one per epoch that had it; `None` for a name it does not have.
    pub fn values(&self, name: &str) -> Option<&[f64]> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_slice())
    }
}
