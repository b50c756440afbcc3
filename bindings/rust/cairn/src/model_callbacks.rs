//! Callbacks of [`Model::fit`] and [`Model::evaluate_with`]: the built-in ones (ModelCheckpoint,
//! TensorBoard, EarlyStopping, LearningRateScheduler, ReduceLROnPlateau, CSVLogger,
//! BackupAndRestore) and callbacks written in Rust ([`CallbackHooks`], a trait with default
//! methods).
//!
//! A hook's `Err` ends fit with that error; a panic in a hook is caught (nothing unwinds into C)
//! and ends fit with an UNKNOWN error carrying the panic's message. The Rust object lives in the
//! [`Callback`] until C releases it: when the handle is dropped, or when a running fit that uses it
//! ends, whichever is later.

use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Mutex;

use cairn_sys as sys;

use crate::callback::{error_status, guard};
use crate::checkpoint::c_path;
use crate::error::{c_string, check};
use crate::model::{Logs, Model};
use crate::options::{init, set_fields, setters};
use crate::{Code, Context, Error, MonitorMode, Result};

/// A callback for [`Model::fit`]: built in ([`Callback::model_checkpoint`], ...) or written in
/// Rust ([`Callback::new`]). Passed to fit by reference ([`crate::FitOptions::callbacks`]); it may
/// be passed to several calls, one at a time. Dropping it frees it (a running fit keeps it alive
/// until it ends). `Send`: a Rust callback's hooks must be `Send` too.
pub struct Callback {
    raw: NonNull<sys::cairn_callback>,
    what: &'static str,
}

// SAFETY: cairn.h lets a callback be used by one call at a time from any thread; the Rust hooks
// it may hold are Send and guarded by a mutex.
unsafe impl Send for Callback {}

/// A callback written in Rust: implement the hooks you need; the others do nothing. Each gets the
/// model (lent for the call; `model.stop_training()` asks fit to stop after the current batch)
/// and, where Keras gives them, the logs. Epochs and batches count from 0.
///
/// ```
/// use cairn::{CallbackHooks, Logs, Model};
///
/// /// Stops training once the loss is below a bound.
/// struct StopBelow(f64);
///
/// impl CallbackHooks for StopBelow {
///     fn on_epoch_end(&mut self, model: &Model, _epoch: i64, logs: &Logs) -> cairn::Result<()> {
///         if logs.get("loss").is_some_and(|l| l < self.0) {
///             model.stop_training();
///         }
///         Ok(())
///     }
/// }
/// ```
#[allow(unused_variables)]
pub trait CallbackHooks: Send {
    /// When fit starts.
    fn on_train_begin(&mut self, model: &Model) -> Result<()> {
        Ok(())
    }
    /// When fit ends normally, with the last epoch's logs.
    fn on_train_end(&mut self, model: &Model, logs: &Logs) -> Result<()> {
        Ok(())
    }
    /// At an epoch's start.
    fn on_epoch_begin(&mut self, model: &Model, epoch: i64) -> Result<()> {
        Ok(())
    }
    /// At an epoch's end, with its logs (validation values included).
    fn on_epoch_end(&mut self, model: &Model, epoch: i64, logs: &Logs) -> Result<()> {
        Ok(())
    }
    /// Before a training batch.
    fn on_train_batch_begin(&mut self, model: &Model, batch: i64) -> Result<()> {
        Ok(())
    }
    /// After a training batch, with the epoch's means so far.
    fn on_train_batch_end(&mut self, model: &Model, batch: i64, logs: &Logs) -> Result<()> {
        Ok(())
    }
    /// After an evaluation (validation in fit, or evaluate), with its logs.
    fn on_test_end(&mut self, model: &Model, logs: &Logs) -> Result<()> {
        Ok(())
    }
}

/// What C's user_data points to for a Rust callback.
type Hooks = Mutex<Box<dyn CallbackHooks>>;

/// Runs one hook: lends the model and the logs, locks the hooks, catches panics, and turns an
/// error into the status C wants.
///
/// # Safety
/// `user_data` is the `Hooks` of a live callback; `model` NULL or a live model.
unsafe fn run_hook(
    user_data: *mut std::ffi::c_void,
    model: *mut sys::cairn_object,
    hook: &str,
    f: impl FnOnce(&mut dyn CallbackHooks, &Model) -> Result<()>,
) -> *mut sys::cairn_status {
    let hooks = &*(user_data as *const Hooks);
    let result = guard(|| {
        let model = NonNull::new(model).ok_or_else(|| Error::new(Code::Internal, format!("{hook}: no model")))?;
        let model = Model::lent(model);
        let mut hooks = match hooks.try_lock() {
            Ok(h) => h,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(Error::new(
                    Code::FailedPrecondition,
                    format!("{hook}: the callback is running already (one fit at a time per callback)"),
                ))
            }
        };
        f(hooks.as_mut(), &model)
    })
    .map_err(|e| {
        if e.code() == Code::Unknown && e.message().starts_with("the closure panicked") {
            Error::new(Code::Unknown, e.message().replacen("the closure", &format!("the Rust hook {hook}"), 1))
        } else {
            e
        }
    });
    match result {
        Ok(()) => ptr::null_mut(),
        Err(e) => error_status(&e),
    }
}

unsafe extern "C" fn on_train_begin(u: *mut std::ffi::c_void, m: *mut sys::cairn_object) -> *mut sys::cairn_status {
    run_hook(u, m, "on_train_begin", |h, m| h.on_train_begin(m))
}

unsafe extern "C" fn on_train_end(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    logs: *const sys::cairn_logs,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_train_end", |h, m| h.on_train_end(m, &Logs::copy(logs)))
}

unsafe extern "C" fn on_epoch_begin(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    epoch: i64,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_epoch_begin", |h, m| h.on_epoch_begin(m, epoch))
}

unsafe extern "C" fn on_epoch_end(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    epoch: i64,
    logs: *const sys::cairn_logs,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_epoch_end", |h, m| h.on_epoch_end(m, epoch, &Logs::copy(logs)))
}

unsafe extern "C" fn on_train_batch_begin(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    batch: i64,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_train_batch_begin", |h, m| h.on_train_batch_begin(m, batch))
}

unsafe extern "C" fn on_train_batch_end(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    batch: i64,
    logs: *const sys::cairn_logs,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_train_batch_end", |h, m| h.on_train_batch_end(m, batch, &Logs::copy(logs)))
}

unsafe extern "C" fn on_test_end(
    u: *mut std::ffi::c_void,
    m: *mut sys::cairn_object,
    logs: *const sys::cairn_logs,
) -> *mut sys::cairn_status {
    run_hook(u, m, "on_test_end", |h, m| h.on_test_end(m, &Logs::copy(logs)))
}

/// Drops the Rust object of a callback C frees (a panic in its Drop is caught: nothing unwinds
/// into C).
unsafe extern "C" fn release_hooks(u: *mut std::ffi::c_void) {
    let hooks = Box::from_raw(u as *mut Hooks);
    let _ = guard(move || {
        drop(hooks);
        Ok(())
    });
}

/// A learning-rate schedule's user_data.
type ScheduleFn = Mutex<Box<dyn FnMut(i64, f64) -> f64 + Send>>;

unsafe extern "C" fn run_schedule(
    u: *mut std::ffi::c_void,
    epoch: i64,
    lr: f64,
    out: *mut f64,
) -> *mut sys::cairn_status {
    let schedule = &*(u as *const ScheduleFn);
    let result = guard(|| {
        let mut f = schedule.lock().unwrap_or_else(|p| p.into_inner());
        Ok(f(epoch, lr))
    });
    match result {
        Ok(rate) => {
            *out = rate;
            ptr::null_mut()
        }
        Err(e) => {
            error_status(&Error::new(e.code(), e.message().replacen("the closure", "the learning-rate schedule", 1)))
        }
    }
}

unsafe extern "C" fn release_schedule(u: *mut std::ffi::c_void) {
    let schedule = Box::from_raw(u as *mut ScheduleFn);
    let _ = guard(move || {
        drop(schedule);
        Ok(())
    });
}

/// Options of [`Callback::model_checkpoint`]: `ModelCheckpointOptions::new(dir).max_to_keep(3)`.
/// Fields not set keep cairn.h's defaults (`cairn_model_checkpoint_options_init`).
#[derive(Clone, Debug)]
pub struct ModelCheckpointOptions {
    directory: std::path::PathBuf,
    max_to_keep: Option<i64>,
    monitor: Option<String>,
    mode: Option<MonitorMode>,
    save_best_only: Option<bool>,
    save_freq: Option<i64>,
}

impl ModelCheckpointOptions {
    /// Saves into `directory` (the checkpoint manager's).
    pub fn new(directory: impl AsRef<Path>) -> Self {
        ModelCheckpointOptions {
            directory: directory.as_ref().to_path_buf(),
            max_to_keep: None,
            monitor: None,
            mode: None,
            save_best_only: None,
            save_freq: None,
        }
    }

    setters! {
        /// Default 5; below 0 keeps all.
        max_to_keep: i64;
        /// The value save_best_only watches; default "val_loss".
        monitor: &str;
        /// Which way the monitored value improves; default [`MonitorMode::Auto`].
        mode: MonitorMode;
        /// Save only when the monitored value improves; default false.
        save_best_only: bool;
        /// Save every N batches (files numbered by the global step) instead of at each epoch's end.
        save_freq: i64;
    }
}

/// Options of [`Callback::tensorboard`]. Fields not set keep cairn.h's defaults
/// (`cairn_tensorboard_options_init`).
#[derive(Clone, Debug)]
pub struct TensorBoardOptions {
    logdir: std::path::PathBuf,
    update_freq: Option<i64>,
    histogram_freq: Option<i64>,
    write_graph: Option<bool>,
    profile_batches: Option<(i64, i64)>,
}

impl TensorBoardOptions {
    /// Event files go to `logdir/train` and `logdir/validation`.
    pub fn new(logdir: impl AsRef<Path>) -> Self {
        TensorBoardOptions {
            logdir: logdir.as_ref().to_path_buf(),
            update_freq: None,
            histogram_freq: None,
            write_graph: None,
            profile_batches: None,
        }
    }

    setters! {
        /// Also "batch_..." scalars every N batches; default 0: per epoch only.
        update_freq: i64;
        /// A histogram of every weight every N epochs; default 0: none.
        histogram_freq: i64;
        /// The graph of the compiled training step; default true.
        write_graph: bool;
    }

    /// Profiles batches `begin..=end` of the first epoch; default none.
    pub fn profile_batches(mut self, begin: i64, end: i64) -> Self {
        self.profile_batches = Some((begin, end));
        self
    }
}

/// Options of [`Callback::early_stopping`]. Fields not set keep cairn.h's defaults
/// (`cairn_early_stopping_options_init`).
#[derive(Clone, Debug, Default)]
pub struct EarlyStoppingOptions {
    monitor: Option<String>,
    min_delta: Option<f64>,
    patience: Option<i64>,
    mode: Option<MonitorMode>,
    baseline: Option<f64>,
    restore_best_weights: Option<bool>,
    start_from_epoch: Option<i64>,
}

impl EarlyStoppingOptions {
    /// Every field as cairn.h documents it (monitor "val_loss", patience 0).
    pub fn new() -> Self {
        Self::default()
    }

    setters! {
        /// The value watched; default "val_loss".
        monitor: &str;
        /// A smaller change is no improvement; default 0.
        min_delta: f64;
        /// Epochs without improvement before stopping; default 0.
        patience: i64;
        /// Default [`MonitorMode::Auto`].
        mode: MonitorMode;
        /// Waiting restarts only past this value; default none.
        baseline: f64;
        /// On stopping, the best epoch's weights come back; default false.
        restore_best_weights: bool;
        /// Epochs before it are not monitored; default 0.
        start_from_epoch: i64;
    }
}

/// Options of [`Callback::reduce_lr_on_plateau`]. Fields not set keep cairn.h's defaults
/// (`cairn_reduce_lr_options_init`).
#[derive(Clone, Debug, Default)]
pub struct ReduceLrOptions {
    monitor: Option<String>,
    factor: Option<f64>,
    patience: Option<i64>,
    mode: Option<MonitorMode>,
    min_delta: Option<f64>,
    cooldown: Option<i64>,
    min_lr: Option<f64>,
}

impl ReduceLrOptions {
    /// Every field as cairn.h documents it (monitor "val_loss", factor 0.1, patience 10).
    pub fn new() -> Self {
        Self::default()
    }

    setters! {
        /// The value watched; default "val_loss".
        monitor: &str;
        /// The rate is multiplied by it; in [0, 1), default 0.1.
        factor: f64;
        /// Epochs without improvement before reducing; default 10.
        patience: i64;
        /// Default [`MonitorMode::Auto`].
        mode: MonitorMode;
        /// Default 0.0001.
        min_delta: f64;
        /// Epochs to wait after a reduction; default 0.
        cooldown: i64;
        /// The floor; default 0.
        min_lr: f64;
    }
}

/// Options of [`Callback::csv_logger`]. Fields not set keep cairn.h's defaults
/// (`cairn_csv_logger_options_init`).
#[derive(Clone, Debug)]
pub struct CsvLoggerOptions {
    path: std::path::PathBuf,
    separator: Option<u8>,
    append: Option<bool>,
}

impl CsvLoggerOptions {
    /// Writes to `path`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        CsvLoggerOptions { path: path.as_ref().to_path_buf(), separator: None, append: None }
    }

    setters! {
        /// Default b','.
        separator: u8;
        /// Append rows (a header only to an empty file) instead of a new file; default false.
        append: bool;
    }
}

/// Options of [`Callback::backup_and_restore`]. Fields not set keep cairn.h's defaults
/// (`cairn_backup_options_init`).
#[derive(Clone, Debug)]
pub struct BackupOptions {
    directory: std::path::PathBuf,
    save_freq: Option<i64>,
    delete_checkpoint: Option<bool>,
}

impl BackupOptions {
    /// Backs up into `directory`.
    pub fn new(directory: impl AsRef<Path>) -> Self {
        BackupOptions { directory: directory.as_ref().to_path_buf(), save_freq: None, delete_checkpoint: None }
    }

    setters! {
        /// Back up every N batches instead of at each epoch's end.
        save_freq: i64;
        /// Remove the backup when fit ends normally; default true.
        delete_checkpoint: bool;
    }
}

/// An optional string option as a C string.
fn opt_c(s: &Option<String>, function: &str, what: &str) -> Result<Option<std::ffi::CString>> {
    s.as_deref().map(|s| c_string(s, function, what)).transpose()
}

impl Callback {
    fn make(
        function: &'static str,
        create: impl FnOnce(*mut *mut sys::cairn_callback) -> *mut sys::cairn_status,
    ) -> Result<Callback> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        unsafe { check(create(&mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but no callback")))?;
        Ok(Callback { raw, what: function })
    }

    /// A callback written in Rust (`cairn_callback_create`): `hooks` moves into it and is dropped
    /// when C releases the callback.
    pub fn new(hooks: impl CallbackHooks + 'static) -> Result<Callback> {
        let mut raw = init(sys::cairn_callback_hooks_init)?;
        let user_data: *mut Hooks = Box::into_raw(Box::new(Mutex::new(Box::new(hooks) as Box<dyn CallbackHooks>)));
        raw.user_data = user_data.cast();
        raw.on_train_begin = Some(on_train_begin);
        raw.on_train_end = Some(on_train_end);
        raw.on_epoch_begin = Some(on_epoch_begin);
        raw.on_epoch_end = Some(on_epoch_end);
        raw.on_train_batch_begin = Some(on_train_batch_begin);
        raw.on_train_batch_end = Some(on_train_batch_end);
        raw.on_test_end = Some(on_test_end);
        raw.release = Some(release_hooks);
        let made = Callback::make("cairn_callback_create", |out| unsafe { sys::cairn_callback_create(&raw, out) });
        match made {
            Ok(mut c) => {
                c.what = "Rust hooks";
                Ok(c)
            }
            Err(e) => {
                // Creation failed: the caller keeps user_data.
                unsafe { release_hooks(user_data.cast()) };
                Err(e)
            }
        }
    }

    /// ModelCheckpoint: saves `{"model": model}` (with its optimizer) through a checkpoint
    /// manager, files "ckpt-N" with N the epoch number from 1 (or the global step with
    /// save_freq). Restore into a fresh model with a checkpoint of `[("model", &fresh)]`.
    pub fn model_checkpoint(ctx: &Context, options: ModelCheckpointOptions) -> Result<Callback> {
        let f = "cairn_callback_model_checkpoint";
        let dir = c_path(&options.directory, f, "directory")?;
        let monitor = opt_c(&options.monitor, f, "monitor")?;
        let mut raw = init(sys::cairn_model_checkpoint_options_init)?;
        raw.directory = dir.as_ptr();
        if let Some(m) = &monitor {
            raw.monitor = m.as_ptr();
        }
        if let Some(m) = options.mode {
            raw.mode = m.to_raw();
        }
        set_fields!(raw, options, { max_to_keep, save_best_only, save_freq });
        Callback::make(f, |out| unsafe { sys::cairn_callback_model_checkpoint(ctx.as_raw(), &raw, out) })
    }

    /// TensorBoard: "epoch_loss", "epoch_accuracy", ... per epoch under `logdir/train` and
    /// `logdir/validation`, the learning rate, the training step's graph, and optionally batch
    /// scalars, weight histograms and a profile.
    pub fn tensorboard(options: TensorBoardOptions) -> Result<Callback> {
        let f = "cairn_callback_tensorboard";
        let logdir = c_path(&options.logdir, f, "logdir")?;
        let mut raw = init(sys::cairn_tensorboard_options_init)?;
        raw.logdir = logdir.as_ptr();
        set_fields!(raw, options, { update_freq, histogram_freq, write_graph });
        if let Some((b, e)) = options.profile_batches {
            (raw.profile_batch_begin, raw.profile_batch_end) = (b, e);
        }
        Callback::make(f, |out| unsafe { sys::cairn_callback_tensorboard(&raw, out) })
    }

    /// EarlyStopping (Keras 3's rules).
    pub fn early_stopping(options: EarlyStoppingOptions) -> Result<Callback> {
        let f = "cairn_callback_early_stopping";
        let monitor = opt_c(&options.monitor, f, "monitor")?;
        let mut raw = init(sys::cairn_early_stopping_options_init)?;
        if let Some(m) = &monitor {
            raw.monitor = m.as_ptr();
        }
        if let Some(m) = options.mode {
            raw.mode = m.to_raw();
        }
        if let Some(b) = options.baseline {
            raw.has_baseline = 1;
            raw.baseline = b;
        }
        set_fields!(raw, options, { min_delta, patience, restore_best_weights, start_from_epoch });
        Callback::make(f, |out| unsafe { sys::cairn_callback_early_stopping(&raw, out) })
    }

    /// LearningRateScheduler: at each epoch's start sets the optimizer's learning rate to
    /// `schedule(epoch, current rate)`. A panic in the schedule ends fit with an error; a negative
    /// or non-finite rate is INVALID_ARGUMENT from fit.
    pub fn learning_rate_scheduler(schedule: impl FnMut(i64, f64) -> f64 + Send + 'static) -> Result<Callback> {
        crate::check_abi()?;
        let user_data: *mut ScheduleFn = Box::into_raw(Box::new(Mutex::new(Box::new(schedule))));
        let made = Callback::make("cairn_callback_learning_rate_scheduler", |out| unsafe {
            sys::cairn_callback_learning_rate_scheduler(
                Some(run_schedule),
                user_data.cast(),
                Some(release_schedule),
                out,
            )
        });
        if made.is_err() {
            unsafe { release_schedule(user_data.cast()) };
        }
        made
    }

    /// ReduceLROnPlateau (Keras' rules).
    pub fn reduce_lr_on_plateau(options: ReduceLrOptions) -> Result<Callback> {
        let f = "cairn_callback_reduce_lr_on_plateau";
        let monitor = opt_c(&options.monitor, f, "monitor")?;
        let mut raw = init(sys::cairn_reduce_lr_options_init)?;
        if let Some(m) = &monitor {
            raw.monitor = m.as_ptr();
        }
        if let Some(m) = options.mode {
            raw.mode = m.to_raw();
        }
        set_fields!(raw, options, { factor, patience, min_delta, cooldown, min_lr });
        Callback::make(f, |out| unsafe { sys::cairn_callback_reduce_lr_on_plateau(&raw, out) })
    }

    /// CSVLogger: a header "epoch,loss,..." and one row per epoch.
    pub fn csv_logger(options: CsvLoggerOptions) -> Result<Callback> {
        let f = "cairn_callback_csv_logger";
        let path = c_path(&options.path, f, "path")?;
        let mut raw = init(sys::cairn_csv_logger_options_init)?;
        raw.path = path.as_ptr();
        if let Some(s) = options.separator {
            raw.separator = s as std::ffi::c_char;
        }
        set_fields!(raw, options, { append });
        Callback::make(f, |out| unsafe { sys::cairn_callback_csv_logger(&raw, out) })
    }

    /// BackupAndRestore: fault-tolerant training. Backs up the model, the optimizer and fit's
    /// position; a fit that finds a backup (the process died) continues from the batch after it
    /// and ends with the weights of an uninterrupted run, bit for bit.
    pub fn backup_and_restore(ctx: &Context, options: BackupOptions) -> Result<Callback> {
        let f = "cairn_callback_backup_and_restore";
        let dir = c_path(&options.directory, f, "directory")?;
        let mut raw = init(sys::cairn_backup_options_init)?;
        raw.directory = dir.as_ptr();
        set_fields!(raw, options, { save_freq, delete_checkpoint });
        Callback::make(f, |out| unsafe { sys::cairn_callback_backup_and_restore(ctx.as_raw(), &raw, out) })
    }

    /// The C handle, borrowed.
    pub fn as_raw(&self) -> *mut sys::cairn_callback {
        self.raw.as_ptr()
    }
}

impl Drop for Callback {
    fn drop(&mut self) {
        // SAFETY: we own the handle; a running fit keeps its own reference.
        unsafe { sys::cairn_callback_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.what.strip_prefix("cairn_callback_").unwrap_or(self.what);
        write!(f, "Callback({what})")
    }
}
