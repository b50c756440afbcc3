//! The bridge from a C callback (`cairn_function_fn`) to a Rust closure, shared by compiled
//! functions and control flow: it lends the closure the context and inputs, hands its outputs to
//! C, and turns its errors and panics into a status (nothing unwinds into C).

use std::any::Any;
use std::mem::ManuallyDrop;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;

use cairn_sys as sys;

use crate::context::discard_panic;
use crate::{Code, Context, Error, Result, Tensor};

/// A closure C calls back: the context to run ops with and the inputs; returns the outputs.
pub(crate) type HostFn<'a> = dyn FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>> + 'a;

/// Who fixed the number of outputs a closure must return, for the error when it returns another
/// count: "the closure returned 2 tensor(s), but {owner} has 1 output(s) ({source})".
pub(crate) struct Arity {
    pub owner: &'static str,
    pub source: &'static str,
}

/// Runs `closure` for a C callback, catching its panics. On `Ok` every output slot holds a new
/// handle that C owns.
///
/// # Safety
/// The pointers are a `cairn_function_fn`'s arguments, valid for the call: `ctx` a live context,
/// `inputs` `n_inputs` live tensors, `outputs` `n_outputs` writable slots.
pub(crate) unsafe fn run_closure(
    closure: &mut HostFn<'_>,
    arity: &Arity,
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> Result<()> {
    guard(|| {
        let (ctx, inputs) = lend(ctx, inputs, n_inputs)?;
        give_outputs(closure(&ctx, inputs)?, arity, outputs, n_outputs)
    })
}

/// Runs `f`, turning a panic into an UNKNOWN error ("the closure panicked: ..").
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(panic_error(payload)),
    }
}

/// The context and input tensors a C callback was given, lent to a closure (never dropped).
///
/// # Safety
/// `ctx` is NULL or a live context and `inputs` holds `n_inputs` tensors, valid for `'a`.
pub(crate) unsafe fn lend<'a>(
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
) -> Result<(ManuallyDrop<Context>, &'a [Tensor])> {
    let ctx = NonNull::new(ctx).ok_or_else(|| Error::new(Code::Internal, "the C callback got no context"))?;
    let ctx = Context::lent(ctx);
    if n_inputs == 0 {
        return Ok((ctx, &[]));
    }
    let raw = std::slice::from_raw_parts(inputs, n_inputs);
    if raw.iter().any(|t| t.is_null()) {
        return Err(Error::new(Code::Internal, "the C callback got a NULL input"));
    }
    // SAFETY: Tensor is a repr(transparent) NonNull<cairn_tensor>, and every pointer is
    // non-NULL; the handles are borrowed (the slice never drops them).
    Ok((ctx, std::slice::from_raw_parts(inputs.cast::<Tensor>(), n_inputs)))
}

/// Hands a closure's results to C's `n_outputs` slots (each takes a new handle), or the error
/// naming `arity` when their count differs.
///
/// # Safety
/// `outputs` has `n_outputs` writable slots.
pub(crate) unsafe fn give_outputs(
    results: Vec<Tensor>,
    arity: &Arity,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> Result<()> {
    if results.len() != n_outputs {
        return Err(Error::new(
            Code::InvalidArgument,
            format!(
                "the closure returned {} tensor(s), but {} has {} output(s) ({})",
                results.len(),
                arity.owner,
                n_outputs,
                arity.source
            ),
        ));
    }
    for (i, t) in results.into_iter().enumerate() {
        // SAFETY: C gave n_outputs slots and takes each new handle.
        *outputs.add(i) = t.into_raw();
    }
    Ok(())
}

/// The error a panic in a closure becomes. The panic hook has already reported it.
fn panic_error(payload: Box<dyn Any + Send>) -> Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_string());
    discard_panic(payload);
    Error::new(Code::Unknown, format!("the closure panicked: {what}"))
}

/// The status a failed closure hands C: its code and message, so that the C API (and callers of
/// the raw layer) see the real failure.
pub(crate) fn error_status(error: &Error) -> *mut sys::cairn_status {
    // An Err must fail the call even if it carries the OK code.
    let code = if error.code() == Code::Ok { Code::Unknown } else { error.code() };
    let message = std::ffi::CString::new(error.message().replace('\0', " ")).unwrap_or_default();
    // SAFETY: a NUL-terminated message, copied by the C API; a non-OK code gives a non-NULL status.
    unsafe { sys::cairn_status_create(code.to_raw(), message.as_ptr()) }
}
