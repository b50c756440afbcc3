//! The gradient tape (tf.GradientTape): records the ops its thread runs on watched tensors and on
//! trainable variables, then computes gradients by running each recorded op's gradient.

use std::borrow::Borrow;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::check;
use crate::options::{init, set_fields};
use crate::{Code, Context, Error, Result, Tensor, Unconnected, Variable};

/// A gradient tape. It records only the ops of the thread that created it, so it is neither
/// `Send` nor `Sync`: the compiler keeps it on that thread (the C API would answer
/// FAILED_PRECONDITION). It borrows its context, which must outlive it. Dropping it stops
/// recording and frees it.
///
/// ```
/// use cairn::{ops, Context, GradientTape, Tensor};
/// # fn main() -> cairn::Result<()> {
/// let ctx = Context::new()?;
/// let x = Tensor::new(&ctx, &[3.0f32], &[1])?;
/// let tape = GradientTape::new(&ctx)?;
/// tape.watch(&x)?;
/// let y = ops::mul(&ctx, &x, &x)?;
/// let dx = tape.gradient(&y, &[&x])?;
/// assert_eq!(dx[0].as_ref().unwrap().to_vec::<f32>()?, [6.0]);
/// # Ok(())
/// # }
/// ```
///
/// A tape cannot move to another thread:
///
/// ```compile_fail
/// let ctx = cairn::Context::new().unwrap();
/// let tape = cairn::GradientTape::new(&ctx).unwrap();
/// std::thread::scope(|s| { s.spawn(move || drop(tape)); });
/// ```
pub struct GradientTape<'ctx> {
    raw: NonNull<sys::cairn_tape>,
    // The C tape refers to the context without holding it; the borrow makes it outlive the tape.
    // The raw pointer marker makes the tape !Send and !Sync.
    _ctx: PhantomData<(&'ctx Context, *const ())>,
}

/// Options of [`GradientTape::with_options`]: `TapeOptions::new().persistent(true)`. Options not
/// set keep cairn.h's defaults (`cairn_tape_options_init`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TapeOptions {
    persistent: Option<bool>,
    watch_accessed_variables: Option<bool>,
}

impl TapeOptions {
    /// cairn.h's defaults: not persistent, watching trainable variables as they are read.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether several gradient calls are allowed; default false (one call).
    pub fn persistent(mut self, on: bool) -> Self {
        self.persistent = Some(on);
        self
    }

    /// Whether trainable variables read while the tape records are watched; default true.
    pub fn watch_accessed_variables(mut self, on: bool) -> Self {
        self.watch_accessed_variables = Some(on);
        self
    }
}

/// How a gradient call weighs its target and answers for unconnected sources:
/// `GradientOptions::new().output_gradient(&w).unconnected(Unconnected::Zero)`.
#[derive(Clone, Copy, Debug)]
pub struct GradientOptions<'a> {
    output_gradient: Option<&'a Tensor>,
    unconnected: Unconnected,
}

impl Default for GradientOptions<'_> {
    fn default() -> Self {
        GradientOptions { output_gradient: None, unconnected: Unconnected::None }
    }
}

impl<'a> GradientOptions<'a> {
    /// The defaults: the target's gradient is ones (a non-scalar target is summed), and a source
    /// the target does not depend on gets `None`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The gradient flowing into the target (its shape): d(sum(target * w))/d(source).
    pub fn output_gradient(mut self, w: &'a Tensor) -> Self {
        self.output_gradient = Some(w);
        self
    }

    /// What a source the target does not depend on gets: [`Unconnected::None`] (the default)
    /// gives `None`, as TensorFlow's None; [`Unconnected::Zero`] gives zeros of its shape.
    pub fn unconnected(mut self, unconnected: Unconnected) -> Self {
        self.unconnected = unconnected;
        self
    }
}

impl<'ctx> GradientTape<'ctx> {
    /// A tape with the default options, recording on the calling thread.
    pub fn new(ctx: &'ctx Context) -> Result<GradientTape<'ctx>> {
        GradientTape::with_options(ctx, TapeOptions::new())
    }

    /// A tape with `options` (persistent, watch_accessed_variables).
    pub fn with_options(ctx: &'ctx Context, options: TapeOptions) -> Result<GradientTape<'ctx>> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: the options outlive the call; `out` receives a tape we own.
        let mut raw = init(sys::cairn_tape_options_init)?;
        set_fields!(raw, options, { persistent, watch_accessed_variables });
        unsafe { check(sys::cairn_tape_create(ctx.as_raw(), &raw, &mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_tape_create: returned success but no tape"))?;
        Ok(GradientTape { raw, _ctx: PhantomData })
    }

    /// Watches a tensor (a floating dtype; INVALID_ARGUMENT otherwise): ops on it are recorded.
    pub fn watch(&self, t: &Tensor) -> Result<()> {
        // SAFETY: live handles, borrowed for the call.
        unsafe { check(sys::cairn_tape_watch(self.raw.as_ptr(), t.as_raw())) }
    }

    /// Watches a variable, also a non-trainable one: its reads are recorded.
    pub fn watch_variable(&self, v: &Variable) -> Result<()> {
        unsafe { check(sys::cairn_tape_watch_variable(self.raw.as_ptr(), v.as_raw())) }
    }

    /// Pauses recording (tf.GradientTape.stop_recording) until [`GradientTape::resume_recording`].
    pub fn stop_recording(&self) {
        unsafe { sys::cairn_tape_stop_recording(self.raw.as_ptr()) }
    }

    /// Resumes recording after [`GradientTape::stop_recording`].
    pub fn resume_recording(&self) {
        unsafe { sys::cairn_tape_resume_recording(self.raw.as_ptr()) }
    }

    /// Runs `f` with recording paused, and resumes recording afterwards (also if `f` panics).
    pub fn without_recording<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Resume<'t, 'c>(&'t GradientTape<'c>);
        impl Drop for Resume<'_, '_> {
            fn drop(&mut self) {
                self.0.resume_recording();
            }
        }
        self.stop_recording();
        let _resume = Resume(self);
        f()
    }

    /// d(target)/d(source) for each source; `None` for a source the target does not depend on.
    /// A non-persistent tape allows one gradient call (FAILED_PRECONDITION after that).
    pub fn gradient(&self, target: &Tensor, sources: &[&Tensor]) -> Result<Vec<Option<Tensor>>> {
        self.gradient_with(target, sources, GradientOptions::new())
    }

    /// [`GradientTape::gradient`] with an output gradient and the unconnected choice.
    pub fn gradient_with(
        &self,
        target: &Tensor,
        sources: &[&Tensor],
        options: GradientOptions<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let raw: Vec<*const sys::cairn_tensor> = sources.iter().map(|s| s.as_raw().cast_const()).collect();
        self.collect(sources.len(), |grads| unsafe {
            sys::cairn_tape_gradient(
                self.raw.as_ptr(),
                target.as_raw(),
                raw.as_ptr(),
                raw.len(),
                output_gradient(&options),
                options.unconnected.to_raw(),
                grads,
            )
        })
    }

    /// The gradient for each variable: the sum over every recorded read of it. `vars` holds
    /// `Variable`s or `&Variable`s (e.g. a layer's `weights`).
    pub fn gradient_variables<V: Borrow<Variable>>(&self, target: &Tensor, vars: &[V]) -> Result<Vec<Option<Tensor>>> {
        self.gradient_variables_with(target, vars, GradientOptions::new())
    }

    /// [`GradientTape::gradient_variables`] with an output gradient and the unconnected choice.
    pub fn gradient_variables_with<V: Borrow<Variable>>(
        &self,
        target: &Tensor,
        vars: &[V],
        options: GradientOptions<'_>,
    ) -> Result<Vec<Option<Tensor>>> {
        let raw: Vec<*mut sys::cairn_object> = vars.iter().map(|v| v.borrow().as_raw()).collect();
        self.collect(vars.len(), |grads| unsafe {
            sys::cairn_tape_gradient_variables(
                self.raw.as_ptr(),
                target.as_raw(),
                raw.as_ptr(),
                raw.len(),
                output_gradient(&options),
                options.unconnected.to_raw(),
                grads,
            )
        })
    }

    /// Runs a gradient call filling `n` slots and takes ownership of every non-NULL one.
    fn collect(
        &self,
        n: usize,
        run: impl FnOnce(*mut *mut sys::cairn_tensor) -> *mut sys::cairn_status,
    ) -> Result<Vec<Option<Tensor>>> {
        let mut grads: Vec<*mut sys::cairn_tensor> = vec![ptr::null_mut(); n];
        // SAFETY: `grads` has the n slots the call fills (untouched on error).
        unsafe { check(run(grads.as_mut_ptr()))? };
        // SAFETY: each non-NULL slot is a new tensor handed to us.
        Ok(grads.into_iter().map(|g| NonNull::new(g).map(|g| unsafe { Tensor::from_raw(g) })).collect())
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_tape {
        self.raw.as_ptr()
    }
}

fn output_gradient(options: &GradientOptions<'_>) -> *const sys::cairn_tensor {
    options.output_gradient.map_or(ptr::null(), |w| w.as_raw().cast_const())
}

impl Drop for GradientTape<'_> {
    fn drop(&mut self) {
        // SAFETY: self owns the tape, and this is the only place it is freed.
        unsafe { sys::cairn_tape_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for GradientTape<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GradientTape({:p})", self.raw.as_ptr())
    }
}
