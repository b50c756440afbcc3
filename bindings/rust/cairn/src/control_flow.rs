//! Control flow (tf.cond, tf.while_loop) over Rust closures, and the TensorArray helpers.
//! Experimental, as their C functions (`CAIRN_EXPERIMENTAL` in cairn.h): they may change in any
//! release.
//!
//! Eagerly the closures run as plain Rust control flow would: `cond` reads the predicate and calls
//! one branch, `while_loop` calls the condition and the body until the condition is false. Inside a
//! [`Function`](crate::Function)'s closure they are captured instead: each closure is traced once
//! into a subgraph (both branches of a cond, the condition and the body of a loop), and a replay
//! evaluates the predicate on the device, so the number of iterations may depend on the data.

use std::ffi::c_void;
use std::ptr;

use cairn_sys as sys;

use crate::callback::{error_status, run_closure, Arity, HostFn};
use crate::error::check;
use crate::{Context, Result, Tensor};

/// The two closures of one C call behind its single `user_data`: C calls [`first_trampoline`]
/// for the first (the then branch, the loop condition) and [`second_trampoline`] for the second.
/// They live on the stack of `cond` / `while_loop`, which outlives the C call, and C calls them
/// one at a time on this thread.
struct Pair<'r, 'c> {
    first: &'r mut HostFn<'c>,
    first_arity: Arity,
    second: &'r mut HostFn<'c>,
    second_arity: Arity,
}

impl Pair<'_, '_> {
    fn user_data(&mut self) -> *mut c_void {
        (self as *mut Self).cast()
    }
}

/// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
///
/// tf.cond: `then_branch(operands)` when the bool scalar `pred` is true, else
/// `else_branch(operands)`. Both branches receive the operands and return `n_outputs` tensors;
/// inside a [`Function`](crate::Function) both are traced (so both run once, at trace time), and
/// their results must agree in dtype and shape. Branches may also use other tensors and variables
/// of the enclosing code (captured).
///
/// Errors: INVALID_ARGUMENT for a predicate that is not a bool of one element, or branches whose
/// results differ; a branch's own error (or panic, as UNKNOWN) with its code, the message
/// prefixed `function 'cond's then branch': ` (or `else`).
///
/// ```
/// use cairn::{cond, ops, Context, Tensor};
/// # fn main() -> cairn::Result<()> {
/// let ctx = Context::new()?;
/// let x = Tensor::scalar(&ctx, -3.0f32)?;
/// let positive = ops::greater(&ctx, &x, &Tensor::scalar(&ctx, 0.0f32)?)?;
/// let y = cond(&ctx, &positive, &[&x],
///              |ctx, v| Ok(vec![ops::add(ctx, &v[0], &v[0])?]), // 2x
///              |ctx, v| Ok(vec![ops::neg(ctx, &v[0])?]),        // -x
///              1)?;
/// assert_eq!(y[0].to_vec::<f32>()?, [3.0]);
/// # Ok(())
/// # }
/// ```
pub fn cond<T, E>(
    ctx: &Context,
    pred: &Tensor,
    operands: &[&Tensor],
    mut then_branch: T,
    mut else_branch: E,
    n_outputs: usize,
) -> Result<Vec<Tensor>>
where
    T: FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>>,
    E: FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>>,
{
    let raw_operands: Vec<*mut sys::cairn_tensor> = operands.iter().map(|t| t.as_raw()).collect();
    let mut pair = Pair {
        first: &mut then_branch,
        first_arity: Arity { owner: "cond's then branch", source: "cond's n_outputs" },
        second: &mut else_branch,
        second_arity: Arity { owner: "cond's else branch", source: "cond's n_outputs" },
    };
    let mut outputs = vec![ptr::null_mut(); n_outputs];
    // SAFETY: live handles borrowed for the call; `pair` outlives it; `outputs` has n_outputs slots.
    unsafe {
        check(sys::cairn_cond(
            ctx.as_raw(),
            pred.as_raw(),
            raw_operands.as_ptr(),
            raw_operands.len(),
            Some(first_trampoline),
            Some(second_trampoline),
            pair.user_data(),
            outputs.as_mut_ptr(),
            n_outputs,
        ))?
    };
    outputs.into_iter().map(|t| Tensor::from_raw_result(t, "cairn_cond")).collect()
}

/// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
///
/// tf.while_loop: while `cond(vars)` is true, `vars = body(vars)`; returns the final vars.
/// `cond` returns a bool scalar; `body` returns one tensor per loop variable, of the same dtype
/// and shape (return `vars[i].clone()` for a variable the body does not change). Inside a
/// [`Function`](crate::Function) each closure is traced once and the replay runs as many
/// iterations as the data asks for. `max_iterations`: stop after that many (TensorFlow's
/// `maximum_iterations`); `None` for no limit.
///
/// Errors: INVALID_ARGUMENT for no loop variables, a body result whose dtype or shape differs from
/// its loop variable, or a condition that is not a bool of one element; a closure's own error (or
/// panic, as UNKNOWN) with its code, the message prefixed `function 'while_loop's body': ` (or
/// `cond`).
///
/// ```
/// use cairn::{ops, while_loop, Context, Tensor};
/// # fn main() -> cairn::Result<()> {
/// let ctx = Context::new()?;
/// let (i, total, n) = (Tensor::scalar(&ctx, 0i32)?, Tensor::scalar(&ctx, 0i32)?, Tensor::scalar(&ctx, 5i32)?);
/// let one = Tensor::scalar(&ctx, 1i32)?;
/// let out = while_loop(&ctx,
///     |ctx, v| ops::less(ctx, &v[0], &v[2]), // i < n
///     |ctx, v| Ok(vec![ops::add(ctx, &v[0], &one)?, ops::add(ctx, &v[1], &v[0])?, v[2].clone()]),
///     &[&i, &total, &n], None)?;
/// assert_eq!(out[1].to_vec::<i32>()?, [10]); // 0 + 1 + 2 + 3 + 4
/// # Ok(())
/// # }
/// ```
pub fn while_loop<C, B>(
    ctx: &Context,
    mut cond: C,
    mut body: B,
    loop_vars: &[&Tensor],
    max_iterations: Option<u64>,
) -> Result<Vec<Tensor>>
where
    C: FnMut(&Context, &[Tensor]) -> Result<Tensor>,
    B: FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>>,
{
    let mut cond_as_list = |ctx: &Context, vars: &[Tensor]| cond(ctx, vars).map(|pred| vec![pred]);
    let raw_vars: Vec<*mut sys::cairn_tensor> = loop_vars.iter().map(|t| t.as_raw()).collect();
    let mut pair = Pair {
        first: &mut cond_as_list,
        first_arity: Arity { owner: "while_loop's cond", source: "one bool" },
        second: &mut body,
        second_arity: Arity { owner: "while_loop's body", source: "one per loop variable" },
    };
    // Past i64::MAX iterations is no limit in practice.
    let max = max_iterations.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
    let mut outputs = vec![ptr::null_mut(); raw_vars.len()];
    // SAFETY: live handles borrowed for the call; `pair` outlives it; `outputs` has one slot per
    // loop variable.
    unsafe {
        check(sys::cairn_while_loop(
            ctx.as_raw(),
            Some(first_trampoline),
            Some(second_trampoline),
            pair.user_data(),
            raw_vars.as_ptr(),
            raw_vars.len(),
            max,
            outputs.as_mut_ptr(),
        ))?
    };
    outputs.into_iter().map(|t| Tensor::from_raw_result(t, "cairn_while_loop")).collect()
}

unsafe extern "C" fn first_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> *mut sys::cairn_status {
    // SAFETY: user_data is the Pair of the cond / while_loop call running on this thread; only
    // its first closure is borrowed here (the lifetimes are erased; the Pair's stack frame is live).
    let pair = user_data as *mut Pair<'static, 'static>;
    let result = run_closure(&mut *(*pair).first, &(*pair).first_arity, ctx, inputs, n_inputs, outputs, n_outputs);
    result.err().map_or(ptr::null_mut(), |e| error_status(&e))
}

unsafe extern "C" fn second_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> *mut sys::cairn_status {
    // SAFETY: as in first_trampoline, for the second closure.
    let pair = user_data as *mut Pair<'static, 'static>;
    let result = run_closure(&mut *(*pair).second, &(*pair).second_arity, ctx, inputs, n_inputs, outputs, n_outputs);
    result.err().map_or(ptr::null_mut(), |e| error_status(&e))
}

/// tf.TensorArray with a fixed size: `size` elements of one dtype and shape, held as one tensor of
/// shape `[size, element...]`, so it can be a [`while_loop`] variable and stacking it is the
/// tensor itself. Writes return a new array (the old one is unchanged); elements never written
/// read as zeros. Eagerly an index outside `[0, size)` is OUT_OF_RANGE; inside a compiled function
/// the index has no value yet, and an out-of-range write leaves the array unchanged.
///
/// ```
/// use cairn::{tensor_array, Context, DType, Tensor};
/// # fn main() -> cairn::Result<()> {
/// let ctx = Context::new()?;
/// let empty = tensor_array::create(&ctx, DType::Float32, 3, &[2])?; // shape [3, 2], zeros
/// let one = Tensor::scalar(&ctx, 1i32)?;
/// let array = tensor_array::write(&ctx, &empty, &one, &Tensor::new(&ctx, &[5.0f32, 6.0], &[2])?)?;
/// assert_eq!(array.to_vec::<f32>()?, [0.0, 0.0, 5.0, 6.0, 0.0, 0.0]);
/// assert_eq!(tensor_array::read(&ctx, &array, &one)?.to_vec::<f32>()?, [5.0, 6.0]);
/// # Ok(())
/// # }
/// ```
pub mod tensor_array {
    use std::ptr;

    use cairn_sys as sys;

    use crate::error::check;
    use crate::{Code, Context, DType, Error, Result, Tensor};

    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// A new array of `size` zero elements of `dtype` and `element_shape`. INVALID_ARGUMENT for
    /// a string dtype or a bad shape.
    pub fn create(ctx: &Context, dtype: DType, size: usize, element_shape: &[i64]) -> Result<Tensor> {
        let size = i64::try_from(size).map_err(|_| {
            Error::new(Code::InvalidArgument, format!("tensor_array::create: size {size} is too large"))
        })?;
        let mut out = ptr::null_mut();
        // SAFETY: a live context and a shape borrowed for the call; `out` receives a new handle.
        unsafe {
            check(sys::cairn_tensor_array_create(
                ctx.as_raw(),
                dtype.to_raw(),
                size,
                element_shape.as_ptr(),
                element_shape.len(),
                &mut out,
            ))?
        };
        Tensor::from_raw_result(out, "cairn_tensor_array_create")
    }

    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// `array` with element `index` (an int32 or int64 scalar tensor) set to `value`, as a new
    /// array. INVALID_ARGUMENT for a value of another dtype or shape than the elements.
    pub fn write(ctx: &Context, array: &Tensor, index: &Tensor, value: &Tensor) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: live handles borrowed for the call; `out` receives a new handle.
        unsafe {
            check(sys::cairn_tensor_array_write(
                ctx.as_raw(),
                array.as_raw(),
                index.as_raw(),
                value.as_raw(),
                &mut out,
            ))?
        };
        Tensor::from_raw_result(out, "cairn_tensor_array_write")
    }

    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// Element `index` (an int32 or int64 scalar tensor) of `array`.
    pub fn read(ctx: &Context, array: &Tensor, index: &Tensor) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: live handles borrowed for the call; `out` receives a new handle.
        unsafe { check(sys::cairn_tensor_array_read(ctx.as_raw(), array.as_raw(), index.as_raw(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_tensor_array_read")
    }
}
