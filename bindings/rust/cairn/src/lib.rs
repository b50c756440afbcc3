//! Cairn, an embeddable machine-learning runtime: the safe Rust binding of its C API.
//!
//! ```
//! use cairn::{ops, Context, Tensor};
//!
//! # fn main() -> Result<(), cairn::Error> {
//! let ctx = Context::new()?;
//! let x = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
//! let y = Tensor::new(&ctx, &[10.0f32, 20.0], &[2])?;
//! let z = ops::add(&ctx, &x, &y)?; // broadcasts y over the rows of x
//! assert_eq!(z.to_vec::<f32>()?, [11.0, 22.0, 13.0, 24.0]);
//! # Ok(())
//! # }
//! ```
//!
//! - Every fallible call returns [`Result`]; an [`Error`] carries the C API's [`Code`] and message.
//! - [`Context`] and [`Tensor`] free their handles on drop, in any order. Both are `Send + Sync`.
//! - Tracked objects: [`Object`] (any kind) and the typed handles [`Trackable`], [`Module`],
//!   [`Variable`], [`List`] and [`Dict`], which dereference to it. `Send + Sync`.
//! - Checkpoints: [`Checkpoint`], [`RestoreStatus`], [`CheckpointManager`] (`Send`, one thread at a
//!   time) and [`CheckpointReader`].
//! - Weights in other formats ([`WeightsFormat`]): the reader opens TensorFlow checkpoints and
//!   safetensors too, [`Checkpoint::restore`] restores TensorFlow checkpoints,
//!   [`Checkpoint::export`] writes one TensorFlow restores ([`ExportOptions`]), and
//!   [`Object::load_weights`] / [`Object::save_weights`] move one module's weights by name
//!   ([`WeightsOptions`]), like Keras' `load_weights` / `save_weights`.
//! - [`ops`] has one generated function per registered op; [`ops::run`] runs any op by name.
//! - Training: [`GradientTape`] (not `Send`: it records its own thread), [`Optimizer`] with
//!   [`OptimizerOptions`] and [`Schedule`]s, [`Layer`]s and [`Sequential`], [`losses`], and the
//!   metrics [`Mean`] and [`Accuracy`]. Optimizers, layers and metrics are tracked objects.
//! - Models (tf.keras.Model): [`Model`] (a Sequential with [`Model::compile`], [`Model::fit`],
//!   [`Model::evaluate`], [`Model::predict`], train/test on a batch), [`FitOptions`], [`Logs`],
//!   [`History`], and [`Callback`]s: the built-in ones (ModelCheckpoint, TensorBoard,
//!   EarlyStopping, LearningRateScheduler, ReduceLROnPlateau, CSVLogger, BackupAndRestore) and
//!   callbacks written in Rust ([`CallbackHooks`], a trait with default methods).
//! - Compiled functions (tf.function): [`Function`] traces a closure into a graph once per input
//!   signature ([`FunctionOptions`], [`TensorSpec`]) and replays it without entering Rust.
//! - Control flow: [`cond`] and [`while_loop`] over closures, and [`tensor_array`]; inside a
//!   [`Function`] they are traced once and the data picks the branch and the trip count at replay.
//! - Records and TensorBoard: TFRecord files ([`RecordWriter`], [`RecordReader`], an iterator of
//!   records), tf.train.Example ([`Example`], batched parsing with [`parse_examples`]), summaries
//!   ([`summary`], [`SummaryWriter`]) and the [`profiler`].
//! - Input pipelines (tf.data): [`data`] has [`Dataset`] (sources, transformations, Rust
//!   callbacks run on worker threads) and [`DatasetIterator`], an `Iterator` of
//!   `Result<data::Element>` that is a tracked object, so a checkpoint saves its position.
//! - The raw C API is the `cairn-sys` crate, re-exported as [`sys`].
//!
//! Finding the library: cairn-sys does not link libcairn; it loads it when the first constructor
//! runs, from the path its build script found through pkg-config (or `CAIRN_LIB_DIR`), so any
//! executable that depends on this crate runs as it is, however it is started. `CAIRN_LIBRARY_PATH`
//! or [`init_from`] choose another file at run time; with the `load-dynamic` feature no library is
//! needed to build. A missing or wrong library is an `Err` from the first constructor. The
//! cairn-sys documentation explains the choice.

#![deny(missing_docs)]

use std::ffi::CStr;

pub use cairn_sys as sys;

mod callback;
mod checkpoint;
mod context;
mod control_flow;
pub mod data;
pub mod devices;
pub mod distribute;
mod dtype;
mod enums;
mod error;
mod example;
mod function;
mod layers;
mod metrics;
mod model;
mod model_callbacks;
pub mod mpi;
mod object;
mod op;
pub mod ops;
mod optim;
mod options;
mod placement;
pub mod profiler;
mod records;
pub mod summary;
mod tape;
mod tensor;
pub mod vulkan;
mod weights;

pub use checkpoint::{
    Checkpoint, CheckpointEntry, CheckpointManager, CheckpointManagerOptions, CheckpointOptions, CheckpointReader,
    ExportOptions, RestoreStatus,
};
pub use context::{Context, ContextOptions, HostAllocator};
pub use control_flow::{cond, tensor_array, while_loop};
pub use data::{Dataset, DatasetIterator};
pub use dtype::{Complex64, Element, BF16, F16};
pub use enums::*; // Code, DType, LogLevel, AttrKind, ObjectKind: one Rust enum per C enum
pub use error::{Error, Result};
pub use example::{parse_examples, parse_sequence_examples, Example, Feature, FeatureSpec, Parsed};
pub use function::{Function, FunctionOptions, TensorSpec};
pub use layers::{
    Activation, Conv2DOptions, DenseOptions, Initializer, Layer, NormOptions, Padding, Pool2DOptions, Sequential,
};
pub use metrics::{losses, Accuracy, Mean};
pub use model::{CompileOptions, Data, EvaluateOptions, FitOptions, History, Logs, Model, PredictOptions};
pub use model_callbacks::{
    BackupOptions, Callback, CallbackHooks, CsvLoggerOptions, EarlyStoppingOptions, ModelCheckpointOptions,
    ReduceLrOptions, TensorBoardOptions,
};
pub use object::{Dict, List, Module, Object, ObjectType, Trackable, Variable, VariableOptions};
pub use optim::{Optimizer, OptimizerOptions, Schedule};
pub use placement::DeviceScope;
pub use records::{
    record_file_count, record_index_build, record_shard_range, RecordReader, RecordReaderOptions, RecordWriter,
    RecordWriterOptions,
};
pub use summary::{SummaryWriter, SummaryWriterOptions};
pub use tape::{GradientOptions, GradientTape, TapeOptions};
pub use tensor::Tensor;
pub use vulkan::{VulkanDevice, VulkanOptions};
pub use weights::WeightsOptions;

/// The README's examples compile (and the first one runs) as doc tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The ABI version this binding was generated for (`CAIRN_ABI_VERSION` in cairn.h).
pub const ABI_VERSION: u32 = sys::CAIRN_ABI_VERSION;

/// The ABI version of the loaded libcairn (loading the default library if none is loaded).
pub fn abi_version() -> Result<u32> {
    check_abi()?;
    // SAFETY: no arguments, no state.
    Ok(unsafe { sys::cairn_abi_version() })
}

/// The loaded library's semantic version, e.g. "1.0.0" (loading the default library if none is
/// loaded).
pub fn version() -> Result<&'static str> {
    check_abi()?;
    // SAFETY: static storage, never freed.
    Ok(unsafe { CStr::from_ptr(sys::cairn_version()) }.to_str().unwrap_or(""))
}

/// Loads libcairn from `path` before anything else uses it (the `load-dynamic` way to choose the
/// library; it works without the feature too). Without a call, the first constructor loads
/// `$CAIRN_LIBRARY_PATH`, else the library the build found, else (with `load-dynamic`)
/// `libcairn.so.1` from the loader's search path; see [`sys::load`].
///
/// FAILED_PRECONDITION when the file cannot be opened, is not a Cairn library, lacks a function or
/// has another ABI version, or when a library is loaded already from another path. A failed call
/// leaves nothing loaded, so another path may be tried.
pub fn init_from(path: impl AsRef<std::path::Path>) -> Result<()> {
    sys::load(path).map_err(|e| Error::new(Code::FailedPrecondition, format!("init_from: {e}")))
}

/// Loads the default library unless one is loaded ([`init_from`] says which), checking that it has
/// the ABI this binding was generated for; every constructor calls it. FAILED_PRECONDITION when no
/// library can be loaded.
pub fn check_abi() -> Result<()> {
    sys::load_default().map_err(|e| {
        let hint = if sys::BUILT_WITH.is_none() && std::env::var_os(sys::LIBRARY_PATH_ENV).is_none() {
            " (with the load-dynamic feature, call cairn::init_from(path) or set CAIRN_LIBRARY_PATH)"
        } else {
            ""
        };
        Error::new(Code::FailedPrecondition, format!("{e}{hint}"))
    })
}

/// The names of every registered op, sorted.
pub fn op_names() -> Result<Vec<&'static str>> {
    check_abi()?;
    // SAFETY: cairn_op_name(i) is a static string for every i < cairn_op_count().
    let n = unsafe { sys::cairn_op_count() };
    Ok((0..n).map(|i| unsafe { CStr::from_ptr(sys::cairn_op_name(i)) }.to_str().unwrap_or("")).collect())
}

/// The whole op registry as JSON (see `cairn_op_registry_json` in cairn.h for the format).
pub fn op_registry_json() -> Result<String> {
    check_abi()?;
    let mut out = std::ptr::null_mut();
    // SAFETY: `out` receives a NUL-terminated string the caller frees with cairn_free.
    unsafe {
        error::check(sys::cairn_op_registry_json(&mut out))?;
        let json = CStr::from_ptr(out).to_string_lossy().into_owned();
        sys::cairn_free(out.cast());
        Ok(json)
    }
}
