//! The host callbacks of datasets: map, filter, generator and interleave closures behind C
//! function pointers. Each closure is boxed in an `Arc<Hook>`; the C API holds one reference from
//! creation on (its `user_data`) and drops it through `release` when the last dataset using it
//! is freed. Closures run on Cairn's worker threads, several at once, hence `Send + Sync`; their
//! errors and panics become error statuses (nothing unwinds into C).

use std::ffi::c_void;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::Arc;

use cairn_sys as sys;

use crate::callback::{error_status, give_outputs, guard, lend, run_closure, Arity};
use crate::context::discard_panic;
use crate::{Code, Context, Error, Result, Tensor};

use super::Dataset;

pub(crate) type MapFn = dyn Fn(&Context, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;
pub(crate) type GeneratorFn = dyn Fn(&Context, i64) -> Result<Option<Vec<Tensor>>> + Send + Sync;
pub(crate) type InterleaveFn = dyn Fn(&Context, &[Tensor]) -> Result<Dataset> + Send + Sync;

/// What a callback's `user_data` points to (through `Arc::into_raw`).
pub(crate) struct Hook<T: ?Sized>(Box<T>);

pub(crate) type Release = Option<unsafe extern "C" fn(*mut c_void)>;

/// Hands `f` to a C constructor: `create(user_data, release)`. The C API owns a reference from
/// then on. A failed constructor does not call `release` (cairn.h), so the reference is taken
/// back here; the count check keeps the closure dropped exactly once even if one did.
pub(crate) fn hand_over<T: ?Sized>(
    f: Box<T>,
    create: impl FnOnce(*mut c_void, Release) -> Result<Dataset>,
) -> Result<Dataset> {
    let ours = Arc::new(Hook(f));
    let user_data = Arc::into_raw(Arc::clone(&ours)) as *mut c_void;
    let result = create(user_data, Some(release::<T>));
    if result.is_err() && Arc::strong_count(&ours) == 2 {
        // SAFETY: the reference given to C above, which C has not released (no dataset holds it).
        drop(unsafe { Arc::from_raw(user_data as *const Hook<T>) });
    }
    result
}

/// Drops the C API's reference to a hook, on whichever thread frees the last dataset.
unsafe extern "C" fn release<T: ?Sized>(user_data: *mut c_void) {
    // SAFETY: called once, with the reference hand_over gave.
    let hook = Arc::from_raw(user_data as *const Hook<T>);
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(hook))) {
        discard_panic(payload);
    }
}

/// The hook behind `user_data`, borrowed for one call.
///
/// # Safety
/// `user_data` is a reference given by [`hand_over`] for a `Hook<T>`, not yet released.
unsafe fn hook<'a, T: ?Sized>(user_data: *mut c_void) -> &'a T {
    &(*(user_data as *const Hook<T>)).0
}

fn status(result: Result<()>) -> *mut sys::cairn_status {
    match result {
        Ok(()) => ptr::null_mut(),
        Err(error) => error_status(&error),
    }
}

/// The trampoline of map and filter functions (a filter's closure is wrapped into a map's).
pub(crate) unsafe extern "C" fn function_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> *mut sys::cairn_status {
    const ARITY: Arity = Arity { owner: "the map", source: "MapOptions::outputs, output_names or output_specs" };
    let f = hook::<MapFn>(user_data);
    let mut call = |ctx: &Context, x: &[Tensor]| f(ctx, x);
    status(run_closure(&mut call, &ARITY, ctx, inputs, n_inputs, outputs, n_outputs))
}

pub(crate) unsafe extern "C" fn generator_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    index: i64,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
    got: *mut i32,
) -> *mut sys::cairn_status {
    const ARITY: Arity = Arity { owner: "the generator", source: "its element spec" };
    let f = hook::<GeneratorFn>(user_data);
    status(guard(|| {
        let (ctx, _) = lend(ctx, ptr::null(), 0)?;
        match f(&ctx, index)? {
            None => *got = 0,
            Some(element) => {
                give_outputs(element, &ARITY, outputs, n_outputs)?;
                *got = 1;
            }
        }
        Ok(())
    }))
}

pub(crate) unsafe extern "C" fn interleave_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    element: *const *mut sys::cairn_tensor,
    n: usize,
    out: *mut *mut sys::cairn_dataset,
) -> *mut sys::cairn_status {
    let f = hook::<InterleaveFn>(user_data);
    status(guard(|| {
        if out.is_null() {
            return Err(Error::new(Code::Internal, "the interleave callback got no output slot"));
        }
        let (ctx, inputs) = lend(ctx, element, n)?;
        *out = f(&ctx, inputs)?.into_raw();
        Ok(())
    }))
}
