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
//! - [`ops`] has one generated function per registered op; [`ops::run`] runs any op by name.
//! - Training: [`GradientTape`] (not `Send`: it records its own thread), [`Optimizer`] with
//!   [`OptimizerOptions`] and [`Schedule`]s, [`Layer`]s and [`Sequential`], [`losses`], and the
//!   metrics [`Mean`] and [`Accuracy`]. Optimizers, layers and metrics are tracked objects.
//! - Compiled functions (tf.function): [`Function`] traces a closure into a graph once per input
//!   signature ([`FunctionOptions`], [`TensorSpec`]) and replays it without entering Rust.
//! - Control flow: [`cond`] and [`while_loop`] over closures, and [`tensor_array`]; inside a
//!   [`Function`] they are traced once and the data picks the branch and the trip count at replay.
//! - The raw C API is the `cairn-sys` crate, re-exported as [`sys`].
//!
//! Linking: cairn-sys finds libcairn through `CAIRN_LIB_DIR`, a `cairn` pkg-config file, or by
//! building it with Bazel in the source tree. Executables outside this crate need that directory
//! on their loader path (LD_LIBRARY_PATH or an rpath).

use std::ffi::CStr;
use std::sync::OnceLock;

pub use cairn_sys as sys;

mod callback;
mod checkpoint;
mod context;
mod control_flow;
mod dtype;
mod enums;
mod error;
mod function;
mod layers;
mod metrics;
mod object;
mod op;
pub mod ops;
mod optim;
mod tape;
mod tensor;
pub mod vulkan;

pub use checkpoint::{
    Checkpoint, CheckpointEntry, CheckpointManager, CheckpointManagerOptions, CheckpointOptions, CheckpointReader,
    RestoreStatus,
};
pub use context::{Context, ContextOptions, HostAllocator};
pub use control_flow::{cond, tensor_array, while_loop};
pub use dtype::{Complex64, Element, BF16, F16};
pub use enums::*; // Code, DType, LogLevel, AttrKind, ObjectKind: one Rust enum per C enum
pub use error::{Error, Result};
pub use function::{Function, FunctionOptions, TensorSpec};
pub use layers::{
    Activation, Conv2DOptions, DenseOptions, Initializer, Layer, NormOptions, Padding, Pool2DOptions, Sequential,
};
pub use metrics::{losses, Accuracy, Mean};
pub use object::{Dict, List, Module, Object, ObjectType, Trackable, Variable, VariableOptions};
pub use optim::{Optimizer, OptimizerOptions, Schedule};
pub use tape::{GradientOptions, GradientTape, TapeOptions};
pub use tensor::Tensor;
pub use vulkan::{VulkanDevice, VulkanOptions};

/// The README's examples compile (and the first one runs) as doc tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The ABI version this binding was generated for (`CAIRN_ABI_VERSION` in cairn.h).
pub const ABI_VERSION: u32 = sys::CAIRN_ABI_VERSION;

/// The ABI version of the loaded libcairn.
pub fn abi_version() -> u32 {
    // SAFETY: no arguments, no state.
    unsafe { sys::cairn_abi_version() }
}

/// The loaded library's semantic version, e.g. "0.1.0".
pub fn version() -> &'static str {
    // SAFETY: static storage, never freed.
    unsafe { CStr::from_ptr(sys::cairn_version()) }.to_str().unwrap_or("")
}

/// Checks once that the loaded libcairn has the ABI this binding was generated for; every
/// constructor calls it. FAILED_PRECONDITION on a mismatch.
pub fn check_abi() -> Result<()> {
    static LOADED: OnceLock<u32> = OnceLock::new();
    abi_matches(*LOADED.get_or_init(abi_version))
}

fn abi_matches(loaded: u32) -> Result<()> {
    if loaded == ABI_VERSION {
        Ok(())
    } else {
        Err(Error::new(
            Code::FailedPrecondition,
            format!(
                "cairn: the loaded libcairn has ABI version {loaded}, but this binding was generated for ABI \
                 version {ABI_VERSION}; rebuild the binding against the library (or load the matching library)"
            ),
        ))
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abi_mismatch_is_refused_with_a_clear_message() {
        assert!(abi_matches(ABI_VERSION).is_ok());
        let err = abi_matches(ABI_VERSION + 1).unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert!(err.message().contains(&format!("ABI version {}", ABI_VERSION + 1)), "{err}");
        assert!(err.message().contains("generated for ABI version"), "{err}");
    }
}
