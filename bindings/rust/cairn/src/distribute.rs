//! Mirrored replicas (`tf.distribute.MirroredStrategy`): one replica per logical device, variables
//! made in the strategy's scope mirrored on every device, a step run once per replica in parallel
//! with all-reduces across the replicas, and batches split over the replicas (docs/distribute.md).
//!
//! ```
//! use cairn::distribute::MirroredStrategy;
//! use cairn::{ops, Context, Reduction, Tensor};
//!
//! # fn main() -> cairn::Result<()> {
//! let ctx = Context::new()?;
//! // Split the CPU into "cpu:0" and "cpu:1" before any device is used (here through the raw layer).
//! let configs = [cairn::sys::CAIRN_LOGICAL_DEVICE_CONFIG_INIT; 2];
//! // SAFETY: a live context, a NUL-terminated name and 2 configs borrowed for the call.
//! let status =
//!     unsafe { cairn::sys::cairn_context_set_logical_devices(ctx.as_raw(), c"cpu:0".as_ptr(), configs.as_ptr(), 2) };
//! assert!(status.is_null());
//!
//! let strategy = MirroredStrategy::new(&ctx, &[])?; // every CPU device
//! let batch = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])?;
//! let parts = strategy.split_batch(&batch)?; // parts[r] is on replica r's device
//! let sums = strategy.run(|r| {
//!     let partial = ops::sum(r.context(), &parts[r.id()], Default::default())?;
//!     r.all_reduce(Reduction::Sum, &[&partial])
//! })?;
//! for (r, outs) in sums.iter().enumerate() {
//!     assert_eq!(outs[0].to_vec::<f32>()?, [21.0]);
//!     assert_eq!(outs[0].device(), strategy.devices()[r]);
//! }
//! # Ok(())
//! # }
//! ```

use std::ffi::{c_void, CStr};
use std::mem::ManuallyDrop;
use std::ptr::{self, NonNull};
use std::sync::Mutex;
use std::time::Duration;

use cairn_sys as sys;

use crate::callback::{error_status, guard};
use crate::data::DatasetIterator;
use crate::error::{c_string, check};
use crate::mpi::{Mpi, MultiWorkerOptions};
use crate::{Code, Context, Error, Reduction, Result, Tensor};

/// tf.distribute.MirroredStrategy over logical devices ("cpu:0", "cpu:1" of a split CPU, or
/// "vulkan:0", "vulkan:1"). Variables made inside [`MirroredStrategy::scope`] (directly, by layers,
/// by optimizers) are mirrored on every device, and a model created and compiled there trains with
/// `fit` on every replica. [`MirroredStrategy::run`] calls a step once per replica, in parallel.
///
/// `Send + Sync`: the C strategy is thread-safe, one run at a time (a run started from inside a
/// step is FAILED_PRECONDITION). Dropping it frees it; a model compiled with it keeps it alive.
pub struct MirroredStrategy {
    raw: NonNull<sys::cairn_strategy>,
    devices: Vec<String>,
}

// SAFETY: the C strategy is internally synchronized (cairn.h: "Thread-safe; one run at a time").
unsafe impl Send for MirroredStrategy {}
unsafe impl Sync for MirroredStrategy {}

impl MirroredStrategy {
    /// A strategy over `devices` (distinct logical devices of one type), or over every logical
    /// device of the default device's type when `devices` is empty. Split a device first
    /// (`cairn_context_set_logical_devices`) to have several on one machine. NOT_FOUND for an
    /// unknown device, INVALID_ARGUMENT for a duplicate or devices of mixed types.
    pub fn new(ctx: &Context, devices: &[&str]) -> Result<MirroredStrategy> {
        Self::create(ctx, devices, None)
    }

    /// [`MirroredStrategy::new`] with the collective timeout: how long a replica waits in an
    /// all-reduce for the others before DEADLINE_EXCEEDED naming the replicas that did not arrive
    /// (default 120 s). INVALID_ARGUMENT below 1 ms.
    pub fn with_collective_timeout(ctx: &Context, devices: &[&str], timeout: Duration) -> Result<MirroredStrategy> {
        Self::create(ctx, devices, Some(timeout))
    }

    fn create(ctx: &Context, devices: &[&str], timeout: Option<Duration>) -> Result<MirroredStrategy> {
        let mut opts = crate::options::init(sys::cairn_mirrored_options_init)?;
        if let Some(t) = timeout {
            opts.collective_timeout_ms = i64::try_from(t.as_millis()).unwrap_or(i64::MAX);
        }
        let names =
            devices.iter().map(|d| c_string(d, "MirroredStrategy::new", "device")).collect::<Result<Vec<_>>>()?;
        let ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let list = if ptrs.is_empty() { ptr::null() } else { ptrs.as_ptr() };
        let mut out = ptr::null_mut();
        // SAFETY: a live context; the names outlive the call; `opts` is initialized.
        unsafe { check(sys::cairn_mirrored_strategy_create(ctx.as_raw(), list, ptrs.len(), &opts, &mut out))? };
        Self::from_new(out, "cairn_mirrored_strategy_create")
    }

    /// `tf.distribute.MultiWorkerMirroredStrategy`: a strategy whose replicas are the processes of
    /// `mpi`, this process's one replica (its id the rank) on ctx's CPU. A model made and compiled
    /// in its [`scope`](MirroredStrategy::scope) trains with `fit` unchanged under `mpirun`: each
    /// dataset element is a global batch of which every worker trains on its rows, the weights
    /// are broadcast from rank 0 before the first step, the gradients are summed across the
    /// workers, and only rank 0 prints progress and runs the callbacks that write. Every worker
    /// must make the same calls with the same data. The strategy shares `mpi`'s communicator and
    /// timeout (`mpi` may be dropped first); its collectives and `mpi`'s calls must come in the
    /// same order on every rank. INVALID_ARGUMENT for an `mpi` of another context.
    pub fn multi_worker(ctx: &Context, mpi: &Mpi, options: &MultiWorkerOptions) -> Result<MirroredStrategy> {
        let mut opts = crate::options::init(sys::cairn_multi_worker_options_init)?;
        opts.check_replicas = i32::from(options.check_replicas);
        let mut out = ptr::null_mut();
        // SAFETY: a live context and handle; `opts` is initialized.
        unsafe { check(sys::cairn_multi_worker_strategy_create(ctx.as_raw(), mpi.as_raw(), &opts, &mut out))? };
        Self::from_new(out, "cairn_multi_worker_strategy_create")
    }

    /// Owns the strategy `out` that `fn_name` made, with its replicas' devices.
    fn from_new(out: *mut sys::cairn_strategy, fn_name: &str) -> Result<MirroredStrategy> {
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, format!("{fn_name}: returned success but no strategy")))?;
        // SAFETY: a live strategy; each device name is a NUL-terminated string it owns.
        let devices = unsafe {
            (0..sys::cairn_strategy_num_replicas(raw.as_ptr()))
                .map(|r| CStr::from_ptr(sys::cairn_strategy_device(raw.as_ptr(), r)).to_string_lossy().into_owned())
                .collect()
        };
        Ok(MirroredStrategy { raw, devices })
    }

    /// The number of replicas.
    pub fn num_replicas(&self) -> usize {
        self.devices.len()
    }

    /// The replicas' logical devices, replica 0's first.
    pub fn devices(&self) -> &[String] {
        &self.devices
    }

    /// Runs `f` inside the strategy's scope (`strategy.scope()`) on the calling thread: variables
    /// made in `f` are mirrored on every replica device, and a model created and compiled in `f`
    /// trains on every replica. Scopes belong to the thread; work `f` hands to other threads is
    /// outside. The scope is left when `f` returns or panics (the panic goes on). Scopes nest.
    pub fn scope<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        // SAFETY: a live strategy.
        unsafe { check(sys::cairn_strategy_scope_enter(self.raw.as_ptr()))? };
        struct Exit<'s>(&'s MirroredStrategy, bool);
        impl Drop for Exit<'_> {
            fn drop(&mut self) {
                if !self.1 {
                    // SAFETY: this thread entered the scope above; during a panic an error
                    // cannot be reported.
                    let _ = unsafe { check(sys::cairn_strategy_scope_exit(self.0.raw.as_ptr())) };
                }
            }
        }
        let mut exit = Exit(self, false);
        let result = f();
        exit.1 = true;
        // SAFETY: as above.
        let left = unsafe { check(sys::cairn_strategy_scope_exit(self.raw.as_ptr())) };
        let value = result?;
        left?;
        Ok(value)
    }

    /// Calls `step` once per replica, in parallel, each on the strategy's thread for that replica
    /// inside a device scope of its device, and waits for all of them. Returns each replica's
    /// tensors, replica 0's first. When a step fails (an `Err` or a panic), the other replicas'
    /// all-reduces end at once (ABORTED) and `run` returns the error with the step's code, its
    /// message prefixed with the replica and its device ("replica 1 (cpu:1): ...").
    pub fn run<F>(&self, step: F) -> Result<Vec<Vec<Tensor>>>
    where
        F: Fn(&Replica<'_>) -> Result<Vec<Tensor>> + Send + Sync,
    {
        let state = RunState { step: &step, results: Mutex::new((0..self.devices.len()).map(|_| None).collect()) };
        let user_data = &state as *const RunState<'_> as *mut c_void;
        // Never read: the run has no C outputs (the steps' results stay in `state`).
        let mut none: [*mut sys::cairn_tensor; 1] = [ptr::null_mut()];
        // SAFETY: a live strategy; `state` outlives the call, which waits for every replica.
        unsafe {
            check(sys::cairn_strategy_run(
                self.raw.as_ptr(),
                Some(replica_trampoline),
                user_data,
                none.as_mut_ptr(),
                0,
            ))?
        };
        let results = state.results.into_inner().unwrap_or_else(|e| e.into_inner());
        results
            .into_iter()
            .enumerate()
            .map(|(r, t)| {
                t.ok_or_else(|| {
                    Error::new(Code::Internal, format!("MirroredStrategy::run: replica {r} returned nothing"))
                })
            })
            .collect()
    }

    /// Combines one tensor per replica (one output of [`MirroredStrategy::run`] from each, replica
    /// 0's first) into one on replica 0's device, in replica order (`strategy.reduce`).
    pub fn reduce(&self, reduction: Reduction, per_replica: &[&Tensor]) -> Result<Tensor> {
        let raw: Vec<*mut sys::cairn_tensor> = per_replica.iter().map(|t| t.as_raw()).collect();
        let mut out = ptr::null_mut();
        // SAFETY: a live strategy and tensors borrowed for the call.
        unsafe {
            check(sys::cairn_strategy_reduce(self.raw.as_ptr(), reduction.to_raw(), raw.as_ptr(), raw.len(), &mut out))?
        };
        Tensor::from_raw_result(out, "cairn_strategy_reduce")
    }

    /// Splits a global batch along dimension 0 into one part per replica (the first replicas take
    /// one more row when it does not divide), each on its replica's device. INVALID_ARGUMENT for a
    /// scalar or fewer rows than replicas.
    pub fn split_batch(&self, global: &Tensor) -> Result<Vec<Tensor>> {
        let mut parts = vec![ptr::null_mut(); self.devices.len()];
        // SAFETY: a live strategy; `parts` has one slot per replica.
        unsafe {
            check(sys::cairn_strategy_split_batch(self.raw.as_ptr(), global.as_raw(), parts.as_mut_ptr(), parts.len()))?
        };
        parts.into_iter().map(|p| Tensor::from_raw_result(p, "cairn_strategy_split_batch")).collect()
    }

    /// The next global batch of `it`, each component split as [`MirroredStrategy::split_batch`]
    /// does (`strategy.experimental_distribute_dataset`): `parts[r]` are replica r's components in
    /// the dataset's order; `Ok(None)` at the end of the data. The iterator stays an ordinary one.
    pub fn iterator_next(&self, it: &DatasetIterator) -> Result<Option<Vec<Vec<Tensor>>>> {
        let k = it.names().len();
        let mut parts = vec![ptr::null_mut(); self.devices.len() * k];
        // SAFETY: a live strategy and iterator; `parts` has replicas * components slots.
        let status = unsafe {
            sys::cairn_strategy_iterator_next(
                self.raw.as_ptr(),
                it.as_object().as_raw(),
                parts.as_mut_ptr(),
                parts.len(),
            )
        };
        if let Err(e) = unsafe { check(status) } {
            return if e.code() == Code::OutOfRange { Ok(None) } else { Err(e) };
        }
        // Own every part first, so that all are freed whatever happens next.
        let owned =
            parts.into_iter().map(|p| Tensor::from_raw_result(p, "cairn_strategy_iterator_next")).collect::<Vec<_>>();
        let mut owned = owned.into_iter().collect::<Result<Vec<Tensor>>>()?.into_iter();
        Ok(Some((0..self.devices.len()).map(|_| owned.by_ref().take(k).collect()).collect()))
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_strategy {
        self.raw.as_ptr()
    }
}

impl Drop for MirroredStrategy {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed.
        unsafe { sys::cairn_strategy_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for MirroredStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MirroredStrategy").field("devices", &self.devices).finish()
    }
}

/// sum(per_example_loss) / global_batch_size (`tf.nn.compute_average_loss`): a replica's loss
/// scaled so that the sum of the replicas' gradients is the gradient of the global batch's mean
/// loss. INVALID_ARGUMENT for a global batch size below 1.
pub fn compute_average_loss(ctx: &Context, per_example_loss: &Tensor, global_batch_size: i64) -> Result<Tensor> {
    let mut out = ptr::null_mut();
    // SAFETY: a live context and tensor borrowed for the call.
    unsafe {
        check(sys::cairn_compute_average_loss(ctx.as_raw(), per_example_loss.as_raw(), global_batch_size, &mut out))?
    };
    Tensor::from_raw_result(out, "cairn_compute_average_loss")
}

/// What a step sees during [`MirroredStrategy::run`]: its replica, its device and the context to
/// run ops with (ops without inputs run on the replica's device). Valid only during that call.
pub struct Replica<'a> {
    raw: *mut sys::cairn_replica_context,
    ctx: &'a Context,
}

impl Replica<'_> {
    /// The replica's index, 0 .. num_replicas - 1.
    pub fn id(&self) -> usize {
        // SAFETY: a replica context alive during the step.
        unsafe { sys::cairn_replica_id(self.raw) as usize }
    }

    /// The replica's logical device, e.g. "cpu:1".
    pub fn device(&self) -> String {
        // SAFETY: a replica context alive during the step; the name is NUL-terminated.
        unsafe { CStr::from_ptr(sys::cairn_replica_device(self.raw)).to_string_lossy().into_owned() }
    }

    /// The context to run the replica's ops with.
    pub fn context(&self) -> &Context {
        self.ctx
    }

    /// Combines `tensors` across the replicas: every replica calls it with tensors of the same
    /// dtypes and shapes, in the same order, and each gets the results on its own device, reduced
    /// in replica order whatever the arrival order (every replica gets the same bits).
    /// DEADLINE_EXCEEDED when a replica does not arrive within the collective timeout, ABORTED
    /// when another replica failed.
    pub fn all_reduce(&self, reduction: Reduction, tensors: &[&Tensor]) -> Result<Vec<Tensor>> {
        let raw: Vec<*mut sys::cairn_tensor> = tensors.iter().map(|t| t.as_raw()).collect();
        let mut outs = vec![ptr::null_mut(); raw.len()];
        // SAFETY: a replica context alive during the step; tensors borrowed for the call; one
        // output slot per input.
        unsafe {
            check(sys::cairn_replica_all_reduce(
                self.raw,
                reduction.to_raw(),
                raw.as_ptr(),
                raw.len(),
                outs.as_mut_ptr(),
            ))?
        };
        outs.into_iter().map(|p| Tensor::from_raw_result(p, "cairn_replica_all_reduce")).collect()
    }
}

type Step<'f> = dyn Fn(&Replica<'_>) -> Result<Vec<Tensor>> + Sync + 'f;

/// What the trampoline reaches through `user_data`: the step and each replica's results.
struct RunState<'f> {
    step: &'f Step<'f>,
    results: Mutex<Vec<Option<Vec<Tensor>>>>,
}

unsafe extern "C" fn replica_trampoline(
    user_data: *mut c_void,
    ctx: *mut sys::cairn_context,
    replica: *mut sys::cairn_replica_context,
    _outputs: *mut *mut sys::cairn_tensor,
    _n_outputs: usize,
) -> *mut sys::cairn_status {
    // SAFETY: user_data is the RunState of the run waiting for this call (the lifetime is erased;
    // the run's stack frame is live until every replica returns).
    let state = &*(user_data as *const RunState<'static>);
    let result = guard(|| {
        let ctx = NonNull::new(ctx).ok_or_else(|| Error::new(Code::Internal, "the C callback got no context"))?;
        // SAFETY: the runtime lends the context for the call.
        let ctx: ManuallyDrop<Context> = Context::lent(ctx);
        let r = Replica { raw: replica, ctx: &ctx };
        let id = r.id();
        let tensors = (state.step)(&r)?;
        let mut results = state.results.lock().unwrap_or_else(|e| e.into_inner());
        let slot = results.get_mut(id).ok_or_else(|| {
            Error::new(Code::Internal, format!("MirroredStrategy::run: replica id {id} out of range"))
        })?;
        *slot = Some(tensors);
        Ok(())
    });
    result.err().map_or(ptr::null_mut(), |e| error_status(&e))
}
