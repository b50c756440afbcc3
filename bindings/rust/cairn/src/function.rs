//! Compiled functions (tf.function): a Rust closure traced into a graph once per input signature,
//! then replayed without entering Rust.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::callback::{error_status, run_closure, Arity};
use crate::checkpoint::c_path;
use crate::context::discard_panic;
use crate::error::{c_string, check, take_string};
use crate::options::init;
use crate::{Code, Context, DType, Error, Result, Tensor};

/// The traced body: the context to run ops with and the symbolic inputs; returns the outputs.
type Body<'f> = dyn FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>> + Send + 'f;

/// What the C function's `user_data` points to. The C API owns it from creation on and drops it
/// through `release` when the function is freed.
struct State<'f> {
    body: Box<Body<'f>>,
    /// The body's own error (or panic) from the last trace. The trampoline hands C a status with
    /// its code and message to stop the trace and keeps the error here; [`Function::call`]
    /// returns this one (with its prefix) instead of C's.
    error: Option<Error>,
}

/// A compiled function (tf.function) over a Rust closure.
///
/// The first call with a new input signature (each input's dtype and shape) runs the closure on
/// symbolic tensors: the ops it runs through the ordinary API (`ops::*`, variable reads and
/// assigns, layers, the tape, optimizers) are recorded into a graph instead of executed. Later
/// calls with that signature replay the graph and never call the closure. So:
/// - Rust side effects in the closure (printing, counting) happen only while tracing.
/// - Variables are captured by reference: a replay reads and writes their live values. Eager
///   tensors the closure uses are captured by value at trace time.
/// - Symbolic tensors have no value: `to_vec` fails on them inside the closure.
///
/// The output count is fixed per function: [`FunctionOptions::outputs`], default 1. The closure
/// must return exactly that many tensors (an op result, an input's `clone()`, or an eager tensor,
/// which becomes a constant). An `Err` from the closure, or a panic in it (caught: it never
/// unwinds into C; it comes back as UNKNOWN) is returned by [`Function::call`], and nothing is cached.
///
/// The closure may borrow what it uses (`'f`); the C API drops it, through its `release` hook,
/// when the function is dropped. `Send` (the closure must be), not `Sync`: `call` takes `&mut`.
///
/// ```
/// use cairn::{ops, Context, Function, Tensor};
/// # fn main() -> cairn::Result<()> {
/// let ctx = Context::new()?;
/// let mut square = Function::new(&ctx, "square", |ctx, x| Ok(vec![ops::mul(ctx, &x[0], &x[0])?]))?;
/// let y = square.call(&[&Tensor::new(&ctx, &[3.0f32], &[1])?])?; // traced
/// let z = square.call(&[&Tensor::new(&ctx, &[4.0f32], &[1])?])?; // replayed
/// assert_eq!((y[0].to_vec::<f32>()?, z[0].to_vec::<f32>()?), (vec![9.0], vec![16.0]));
/// assert_eq!(square.num_traces(), 1);
/// # Ok(())
/// # }
/// ```
pub struct Function<'f> {
    raw: NonNull<sys::cairn_function>,
    /// Owned by the C function (released with it); only read here between calls. None for a
    /// loaded function, which has no closure.
    state: Option<NonNull<State<'f>>>,
    name: String,
    outputs: usize,
    // The closure may borrow for 'f; the raw pointers would otherwise make the type !Send.
    _body: PhantomData<Box<Body<'f>>>,
}

// SAFETY: the closure is Send; the C function is used by one thread at a time (`call` takes
// `&mut self`, and `Function` is not Sync).
unsafe impl Send for Function<'_> {}

/// One input of an input signature: a dtype and dims, where -1 means any size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// The input's dtype.
    pub dtype: DType,
    /// The input's dims; -1 matches any size.
    pub shape: Vec<i64>,
}

impl TensorSpec {
    /// `TensorSpec::new(DType::Float32, &[-1, 784])`: float32 batches of any size.
    pub fn new(dtype: DType, shape: &[i64]) -> TensorSpec {
        TensorSpec { dtype, shape: shape.to_vec() }
    }
}

/// Options of [`Function::with_options`]:
/// `FunctionOptions::new().input_signature(&[spec]).retrace_warning(3).outputs(2)`.
#[derive(Clone, Debug)]
pub struct FunctionOptions {
    input_signature: Option<Vec<TensorSpec>>,
    retrace_warning: Option<i32>,
    outputs: usize,
    static_inputs: Vec<i64>,
}

impl Default for FunctionOptions {
    fn default() -> Self {
        FunctionOptions { input_signature: None, retrace_warning: None, outputs: 1, static_inputs: Vec::new() }
    }
}

impl FunctionOptions {
    /// One output, and cairn.h's defaults (`cairn_function_options_init`) for the rest: no input
    /// signature (every call's own shapes are the key), a retrace warning at 5 traces.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fixes the inputs' dtypes and shapes; a -1 dim matches any size, so one trace serves them
    /// all. A call whose inputs do not match fails with INVALID_ARGUMENT.
    pub fn input_signature(mut self, specs: &[TensorSpec]) -> Self {
        self.input_signature = Some(specs.to_vec());
        self
    }

    /// Logs a warning (through the context's log callback) when the traces reach `n`; 0 turns it
    /// off. Values above `i32::MAX` are clamped to it.
    pub fn retrace_warning(mut self, n: u32) -> Self {
        self.retrace_warning = Some(i32::try_from(n).unwrap_or(i32::MAX));
        self
    }

    /// Static inputs (tf.function's rule for Python scalars): these inputs' values, not only
    /// their dtypes and shapes, key the trace cache. The closure gets them with values it may
    /// read (a loop count, a flag) and the trace bakes them in; a new value retraces. Each is a
    /// numeric or bool tensor of at most 1024 elements. Such functions cannot be exported yet.
    pub fn static_inputs(mut self, indexes: &[usize]) -> Self {
        self.static_inputs = indexes.iter().map(|&i| i64::try_from(i).unwrap_or(i64::MAX)).collect();
        self
    }

    /// How many tensors the closure returns and [`Function::call`] gives back; default 1.
    pub fn outputs(mut self, n: usize) -> Self {
        self.outputs = n;
        self
    }
}

/// C tensor specs for `specs`; each borrows its spec's shape.
pub(crate) fn raw_specs<'a>(specs: impl Iterator<Item = &'a TensorSpec>) -> Result<Vec<sys::cairn_tensor_spec>> {
    specs
        .map(|s| {
            let mut spec = init(sys::cairn_tensor_spec_init)?;
            (spec.dtype, spec.shape, spec.rank) = (s.dtype.to_raw(), s.shape.as_ptr(), s.shape.len());
            Ok(spec)
        })
        .collect()
}

impl<'f> Function<'f> {
    /// A function named `name` (in errors, dumps and the retrace warning) over `body`, with the
    /// default options (one output).
    pub fn new<F>(ctx: &Context, name: &str, body: F) -> Result<Function<'f>>
    where
        F: FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>> + Send + 'f,
    {
        Function::with_options(ctx, name, FunctionOptions::new(), body)
    }

    /// A function with `options`. INVALID_ARGUMENT for an empty name or a bad input signature
    /// (a dim below -1, a rank above 8); the closure is dropped then.
    pub fn with_options<F>(ctx: &Context, name: &str, options: FunctionOptions, body: F) -> Result<Function<'f>>
    where
        F: FnMut(&Context, &[Tensor]) -> Result<Vec<Tensor>> + Send + 'f,
    {
        let c_name = c_string(name, "Function::new", "name")?;
        let specs = options.input_signature.as_ref().map(|sig| raw_specs(sig.iter())).transpose()?;
        let mut raw_opts = init(sys::cairn_function_options_init)?;
        if let Some(specs) = &specs {
            raw_opts.input_signature = specs.as_ptr(); // non-NULL even when empty: zero inputs
            raw_opts.n_input_signature = specs.len();
        }
        if let Some(n) = options.retrace_warning {
            raw_opts.retrace_warning = n;
        }
        if !options.static_inputs.is_empty() {
            raw_opts.static_inputs = options.static_inputs.as_ptr();
            raw_opts.n_static_inputs = options.static_inputs.len();
        }
        raw_opts.release = Some(release_trampoline);

        let state = Box::into_raw(Box::new(State { body: Box::new(body) as Box<Body<'f>>, error: None }));
        let mut out = ptr::null_mut();
        // SAFETY: the name, options and specs (with their shapes) outlive the call; `state` is a
        // live State that the C function owns from here on when creation succeeds.
        let status = unsafe {
            sys::cairn_function_create(
                ctx.as_raw(),
                c_name.as_ptr(),
                Some(trace_trampoline),
                state.cast(),
                &raw_opts,
                &mut out,
            )
        };
        let created = NonNull::new(out);
        if !status.is_null() || created.is_none() {
            // cairn.h: on error `release` is not called, so the closure is still ours to drop.
            // SAFETY: `state` came from Box::into_raw above and nothing else has freed it.
            drop(unsafe { Box::from_raw(state) });
            unsafe { check(status)? };
            return Err(Error::new(Code::Internal, "cairn_function_create: returned success but no function"));
        }
        Ok(Function {
            raw: created.unwrap_or_else(|| unreachable!()),
            // SAFETY: from Box::into_raw, never NULL.
            state: Some(unsafe { NonNull::new_unchecked(state) }),
            name: name.to_string(),
            outputs: options.outputs,
            _body: PhantomData,
        })
    }

    /// Calls the function: traces the closure on a new input signature, replays the cached graph
    /// otherwise. Returns [`FunctionOptions::outputs`] tensors. Errors: the closure's own error
    /// or panic (its code, the message prefixed with `function '<name>': `), INVALID_ARGUMENT for
    /// inputs that do not match the input signature or a closure returning a different count,
    /// and the ops' errors at replay.
    pub fn call(&mut self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let raw_inputs: Vec<*mut sys::cairn_tensor> = inputs.iter().map(|t| t.as_raw()).collect();
        let mut outputs: Vec<*mut sys::cairn_tensor> = vec![ptr::null_mut(); self.outputs];
        if let Some(state) = self.state {
            // SAFETY: the state lives as long as the C function; no trace is running now.
            unsafe { (*state.as_ptr()).error = None };
        }
        // SAFETY: live input handles borrowed for the call; `outputs` has the slots it fills.
        let status = unsafe {
            sys::cairn_function_call(
                self.raw.as_ptr(),
                raw_inputs.as_ptr(),
                raw_inputs.len(),
                outputs.as_mut_ptr(),
                outputs.len(),
            )
        };
        if !status.is_null() {
            // SAFETY: as above; the trace (if any) has returned.
            let from_body = self.state.and_then(|state| unsafe { (*state.as_ptr()).error.take() });
            let from_c = unsafe { check(status) }.unwrap_err();
            return Err(match from_body {
                Some(e) => Error::new(e.code(), format!("function '{}': {}", self.name, e.message())),
                None => from_c,
            });
        }
        outputs.into_iter().map(|t| Tensor::from_raw_result(t, "cairn_function_call")).collect()
    }

    /// How many times the closure has been traced successfully (one per distinct signature).
    pub fn num_traces(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { sys::cairn_function_num_traces(self.raw.as_ptr()) }
    }

    /// The graph of trace `index` (0 = the first) as text: one line per node with its op,
    /// attributes, inputs and output dtypes and shapes, then the results. OUT_OF_RANGE for an
    /// index >= [`Function::num_traces`].
    pub fn dump(&self, index: usize) -> Result<String> {
        // SAFETY: a live handle; `out` receives a string we free.
        take_string(|out| unsafe { sys::cairn_function_dump(self.raw.as_ptr(), index, out) })
    }

    /// The input signature of trace `index` as text, e.g. `float32[2,3], int32[]`.
    pub fn signature(&self, index: usize) -> Result<String> {
        take_string(|out| unsafe { sys::cairn_function_signature(self.raw.as_ptr(), index, out) })
    }

    /// How many tensors trace `index` returns: what a loaded function's `outputs` must be.
    /// OUT_OF_RANGE for an index >= [`Function::num_traces`].
    pub fn num_outputs(&self, index: usize) -> Result<usize> {
        let mut out = 0;
        // SAFETY: a live handle; `out` is written on success.
        unsafe { check(sys::cairn_function_num_outputs(self.raw.as_ptr(), index, &mut out))? };
        Ok(out)
    }

    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// Writes every trace, with the current values of the variables they read or write, to
    /// `path` (replaced atomically; docs/graph_export.md). [`Function::load`] in any language (C:
    /// `cairn_function_load`) reads it back. FAILED_PRECONDITION before the first call;
    /// UNIMPLEMENTED when a trace captured a string constant.
    pub fn export(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref(), "Function::export", "path")?;
        // SAFETY: a live handle and a NUL-terminated path, borrowed for the call.
        unsafe { check(sys::cairn_function_export(self.raw.as_ptr(), path.as_ptr())) }
    }

    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// The graph of trace `index` as TensorFlow GraphDef text (`node { name: ... op: ... }`) for
    /// TensorBoard's graph view. OUT_OF_RANGE for an index >= [`Function::num_traces`].
    pub fn graphdef(&self, index: usize) -> Result<String> {
        // SAFETY: a live handle; `out` receives a string we free.
        take_string(|out| unsafe { sys::cairn_function_graphdef(self.raw.as_ptr(), index, out) })
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_function {
        self.raw.as_ptr()
    }
}

impl Function<'static> {
    /// Experimental (`CAIRN_EXPERIMENTAL` in cairn.h): may change in any release.
    ///
    /// Loads a function written by [`Function::export`] (from any language) into `ctx`. It has no
    /// closure: the first call for each input shape re-traces the stored graph, and it owns fresh
    /// variables initialised from the file. A call whose inputs fit no stored signature fails with
    /// NOT_FOUND, listing the stored ones. The file does not say how many tensors the function
    /// returns, so `outputs` does (a different count fails at the call with INVALID_ARGUMENT).
    /// [`Function::name`] is the path. Errors: NOT_FOUND for a missing file, DATA_LOSS for a
    /// damaged one, INVALID_ARGUMENT for a file that is not an exported function.
    pub fn load(ctx: &Context, path: impl AsRef<Path>, outputs: usize) -> Result<Function<'static>> {
        crate::check_abi()?;
        let path = path.as_ref();
        let c_path = c_path(path, "Function::load", "path")?;
        let mut out = ptr::null_mut();
        // SAFETY: a live context and a NUL-terminated path borrowed for the call.
        unsafe { check(sys::cairn_function_load(ctx.as_raw(), c_path.as_ptr(), &mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_function_load: returned success but no function"))?;
        Ok(Function { raw, state: None, name: path.display().to_string(), outputs, _body: PhantomData })
    }
}

impl Drop for Function<'_> {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed. The C API calls
        // `release` (dropping the closure) before this returns, while 'f is still alive.
        unsafe { sys::cairn_function_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Function<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("outputs", &self.outputs)
            .field("num_traces", &self.num_traces())
            .finish()
    }
}

/// The C callback: runs the closure (see [`run_closure`]) and keeps its error for `call`.
unsafe extern "C" fn trace_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    inputs: *const *mut sys::cairn_tensor,
    n_inputs: usize,
    outputs: *mut *mut sys::cairn_tensor,
    n_outputs: usize,
) -> *mut sys::cairn_status {
    // SAFETY: user_data is the State given at creation, alive until release; traces run inside
    // Function::call, which holds `&mut Function`, so nothing else touches it now. The lifetime is
    // erased here; the closure's borrows are alive because its Function is.
    let state = &mut *(user_data as *mut State<'static>);
    const ARITY: Arity = Arity { owner: "the function", source: "FunctionOptions::outputs" };
    match run_closure(&mut *state.body, &ARITY, ctx, inputs, n_inputs, outputs, n_outputs) {
        Ok(()) => ptr::null_mut(),
        Err(error) => {
            let status = error_status(&error);
            state.error = Some(error);
            status
        }
    }
}

unsafe extern "C" fn release_trampoline(user_data: *mut c_void) {
    // SAFETY: called once, by cairn_function_free, with the State made in with_options.
    let state = Box::from_raw(user_data as *mut State<'static>);
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(move || drop(state))) {
        discard_panic(payload);
    }
}
