//! Collectives across processes over MPI (docs/mpi.md): an [`Mpi`] is this process's place in an
//! MPI communicator, one member per process launched by `mpirun`. On it,
//! [`MirroredStrategy::multi_worker`](crate::distribute::MirroredStrategy::multi_worker) trains a
//! model with `fit` across the processes, and
//! [`CheckpointManager::shard`](crate::CheckpointManager::shard) splits each save among them.
//!
//! libcairn does not link MPI: the first [`Mpi::init`] loads the plugin `libcairn_mpi.so` from
//! `$CAIRN_MPI_PLUGIN`, else beside libcairn.so, else the loader's path, and fails with
//! UNAVAILABLE naming where it looked. Without `mpirun` the world is this one process.
//!
//! ```no_run
//! use std::time::Duration;
//! use cairn::mpi::Mpi;
//! use cairn::{Context, Reduction, Tensor};
//!
//! # fn main() -> cairn::Result<()> {
//! let ctx = Context::new()?;
//! let mpi = Mpi::init(&ctx, Duration::from_secs(60))?;
//! let mine = Tensor::new(&ctx, &[mpi.rank() as f32], &[1])?;
//! let sum = mpi.all_reduce(Reduction::Sum, &mine)?; // 0 + 1 + ... + (size - 1) on every rank
//! assert_eq!(sum.to_vec::<f32>()?, [(0..mpi.size()).sum::<usize>() as f32]);
//! # Ok(())
//! # }
//! ```

use std::ffi::c_void;
use std::ptr::{self, NonNull};
use std::time::Duration;

use cairn_sys as sys;

use crate::error::check;
use crate::{Code, Context, Error, Reduction, Result, Tensor};

/// This process's membership in an MPI communicator (`cairn_mpi`).
///
/// Every process must issue the same collectives in the same order with the same dtypes and
/// shapes; ranks that disagree all get INVALID_ARGUMENT. A call that waits longer than the timeout
/// fails with DEADLINE_EXCEEDED naming the call and the rank, after which every call fails with
/// FAILED_PRECONDITION: end the job. `Send + Sync`: the C handle serializes its calls. Dropping
/// it frees it; MPI is finalized when the last user of Cairn's initialization (an `Mpi`, a
/// strategy or a sharded manager made from it) is freed, and cannot start again in the process.
pub struct Mpi {
    raw: NonNull<sys::cairn_mpi>,
}

// SAFETY: cairn.h: "Calls on one cairn_mpi are serialized".
unsafe impl Send for Mpi {}
unsafe impl Sync for Mpi {}

impl Mpi {
    /// Joins the job's communicator (a private copy of MPI_COMM_WORLD), initializing MPI unless
    /// the process already has. `timeout` bounds how long each collective waits for the other
    /// ranks (at least 1 ms). UNAVAILABLE without the plugin or MPI, FAILED_PRECONDITION when MPI
    /// cannot start (again), INVALID_ARGUMENT for a timeout below 1 ms.
    pub fn init(ctx: &Context, timeout: Duration) -> Result<Mpi> {
        let ms = timeout_ms("Mpi::init", timeout)?;
        // SAFETY: a live context; `out` receives a handle we own.
        Self::create("cairn_mpi_init", |out| unsafe { sys::cairn_mpi_init(ctx.as_raw(), ms, out) })
    }

    /// Uses the communicator of a host that already runs MPI (the host initializes and finalizes
    /// MPI; Cairn works on a private copy of it). Errors: as [`Mpi::init`]; FAILED_PRECONDITION
    /// when MPI is not initialized.
    ///
    /// # Safety
    /// `comm` must be the host's `MPI_Comm` stored in a pointer (Open MPI's `MPI_Comm` is one),
    /// valid for the call.
    pub unsafe fn adopt(ctx: &Context, comm: *mut c_void, timeout: Duration) -> Result<Mpi> {
        let ms = timeout_ms("Mpi::adopt", timeout)?;
        // SAFETY: a live context; the caller vouches for `comm`.
        Self::create("cairn_mpi_adopt", |out| unsafe { sys::cairn_mpi_adopt(ctx.as_raw(), comm, ms, out) })
    }

    fn create(fn_name: &str, call: impl FnOnce(*mut *mut sys::cairn_mpi) -> *mut sys::cairn_status) -> Result<Mpi> {
        let mut out = ptr::null_mut();
        // SAFETY: `call` returns a status we own.
        unsafe { check(call(&mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, format!("{fn_name}: returned success but no handle")))?;
        Ok(Mpi { raw })
    }

    /// This process's rank, 0 .. size - 1.
    pub fn rank(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { sys::cairn_mpi_rank(self.raw.as_ptr()) as usize }
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        // SAFETY: a live handle.
        unsafe { sys::cairn_mpi_size(self.raw.as_ptr()) as usize }
    }

    /// The reduction of `value` across the processes: a new tensor of its dtype and shape on its
    /// device, the same on every rank. Float16 and bfloat16 reduce in float32; the mean of
    /// integers truncates. INVALID_ARGUMENT for a dtype that does not reduce or ranks that disagree.
    pub fn all_reduce(&self, reduction: Reduction, value: &Tensor) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: a live handle and tensor; `out` receives a tensor we own.
        unsafe { check(sys::cairn_mpi_all_reduce(self.raw.as_ptr(), reduction.to_raw(), value.as_raw(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_mpi_all_reduce")
    }

    /// Rank `root`'s `value` on every rank (each passes a tensor of the same dtype and shape).
    /// INVALID_ARGUMENT for a root that is not a rank, a string tensor or ranks that disagree.
    pub fn broadcast(&self, root: usize, value: &Tensor) -> Result<Tensor> {
        let root = i32::try_from(root)
            .map_err(|_| Error::new(Code::InvalidArgument, format!("Mpi::broadcast: root {root} is not a rank")))?;
        let mut out = ptr::null_mut();
        // SAFETY: as in all_reduce.
        unsafe { check(sys::cairn_mpi_broadcast(self.raw.as_ptr(), root, value.as_raw(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_mpi_broadcast")
    }

    /// Every rank's `value` concatenated along dimension 0 in rank order (a scalar gives a vector
    /// of `size()` elements). INVALID_ARGUMENT for a string tensor or ranks that disagree.
    pub fn all_gather(&self, value: &Tensor) -> Result<Tensor> {
        let mut out = ptr::null_mut();
        // SAFETY: as in all_reduce.
        unsafe { check(sys::cairn_mpi_all_gather(self.raw.as_ptr(), value.as_raw(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_mpi_all_gather")
    }

    /// Returns once every rank has called it.
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a live handle.
        unsafe { check(sys::cairn_mpi_barrier(self.raw.as_ptr())) }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_mpi {
        self.raw.as_ptr()
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        // SAFETY: we own the handle; it is freed once.
        unsafe { sys::cairn_mpi_free(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mpi(rank {} of {})", self.rank(), self.size())
    }
}

/// `timeout` in whole milliseconds, or INVALID_ARGUMENT naming `fn_name` below 1 ms.
fn timeout_ms(fn_name: &str, timeout: Duration) -> Result<i64> {
    if timeout < Duration::from_millis(1) {
        return Err(Error::new(Code::InvalidArgument, format!("{fn_name}: the timeout {timeout:?} is below 1 ms")));
    }
    Ok(i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX))
}

/// Options of [`MirroredStrategy::multi_worker`](crate::distribute::MirroredStrategy::multi_worker)
/// (`cairn_multi_worker_options`).
#[derive(Clone, Debug, Default)]
pub struct MultiWorkerOptions {
    pub(crate) check_replicas: bool,
}

impl MultiWorkerOptions {
    /// cairn.h's defaults: no replica check.
    pub fn new() -> Self {
        Self::default()
    }

    /// A debug check: after every training step of a model compiled with the strategy, compare a
    /// checksum of every weight across the workers and fail with INTERNAL naming the first
    /// variable that differs (also on when the environment has `CAIRN_CHECK_REPLICAS=1`). It costs
    /// a copy of every weight and one all-gather per step.
    pub fn check_replicas(mut self, on: bool) -> Self {
        self.check_replicas = on;
        self
    }
}
