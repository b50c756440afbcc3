//! Checkpoints (tf.train.Checkpoint), restore statuses, the checkpoint manager
//! (tf.train.CheckpointManager) and the checkpoint reader (tf.train.list_variables /
//! load_variable), which also reads TensorFlow checkpoints and safetensors.
//!
//! cairn.h: "one checkpoint (and its manager) is used from one thread at a time", so
//! [`Checkpoint`] and [`CheckpointManager`] are `Send` but not `Sync`; the manager owns its
//! checkpoint, so the two always travel together.

use std::collections::BTreeMap;
use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::options::{init, set_fields};
use crate::{Code, Context, DType, Error, Object, Result, Tensor, WeightsFormat};

/// A checkpoint: a root object whose children are given at creation, plus a "save_counter" int64
/// variable. One checkpoint is one file; keys read like tf.train.list_variables:
/// `"<path>/.ATTRIBUTES/VARIABLE_VALUE"`.
///
/// Dropping it frees it, waiting for a background save (whose error is logged).
///
/// `Send`, not `Sync` (one thread at a time):
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<cairn::Checkpoint>(); // error: `Checkpoint` cannot be shared between threads
/// ```
pub struct Checkpoint {
    raw: NonNull<sys::cairn_checkpoint>,
    // Lent by the checkpoint (cairn_checkpoint_root) and freed with it, never through this.
    root: ManuallyDrop<Object>,
}

// SAFETY: cairn.h: "one checkpoint (and its manager) is used from one thread at a time": it may
// move between threads but not be shared. Not Sync.
unsafe impl Send for Checkpoint {}

impl Checkpoint {
    /// A checkpoint over named root children (TF's `Checkpoint(**kwargs)`; set in name order).
    /// Names are unique, non-empty, hold no '/' and are not "save_counter". The checkpoint's root
    /// holds its own references to the children.
    ///
    /// ```
    /// # use cairn::{Checkpoint, Context, Module, List};
    /// # fn main() -> cairn::Result<()> {
    /// let ctx = Context::new()?;
    /// let (model, layers) = (Module::new(&ctx, "net")?, List::new(&ctx)?);
    /// let ckpt = Checkpoint::new(&ctx, &[("model", &model), ("layers", &layers)])?;
    /// assert_eq!(ckpt.root().child_count(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(ctx: &Context, children: &[(&str, &Object)]) -> Result<Checkpoint> {
        crate::check_abi()?;
        let names = children
            .iter()
            .map(|(name, _)| c_string(name, "Checkpoint::new", "child name"))
            .collect::<Result<Vec<_>>>()?;
        let name_ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let objects: Vec<*mut sys::cairn_object> = children.iter().map(|(_, o)| o.as_raw()).collect();
        let mut out = ptr::null_mut();
        // SAFETY: `children.len()` names and objects, all live for the call.
        unsafe {
            check(sys::cairn_checkpoint_create(
                ctx.as_raw(),
                name_ptrs.as_ptr(),
                objects.as_ptr(),
                children.len(),
                &mut out,
            ))?
        };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_checkpoint_create: returned success but no checkpoint"))?;
        // SAFETY: a live checkpoint; its root lives as long as it does.
        let root = NonNull::new(unsafe { sys::cairn_checkpoint_root(raw.as_ptr()) });
        let Some(root) = root else {
            unsafe { sys::cairn_checkpoint_free(raw.as_ptr()) };
            return Err(Error::new(Code::Internal, "cairn_checkpoint_root: no root"));
        };
        // SAFETY: ManuallyDrop: the handle is never freed through this Object.
        Ok(Checkpoint { raw, root: ManuallyDrop::new(unsafe { Object::from_raw(root) }) })
    }

    /// The root object, borrowed from the checkpoint (add more edges with [`Object::set`]). To
    /// keep it beyond the checkpoint, clone it (a handle of its own).
    ///
    /// ```compile_fail
    /// # use cairn::{Checkpoint, Context};
    /// let ctx = Context::new().unwrap();
    /// let root = {
    ///     let ckpt = Checkpoint::new(&ctx, &[]).unwrap();
    ///     ckpt.root() // error: `ckpt` does not live long enough
    /// };
    /// ```
    pub fn root(&self) -> &Object {
        &self.root
    }

    /// Sets the options (copied) for later saves and writes; waits for a running background save
    /// first.
    pub fn set_options(&self, options: CheckpointOptions) -> Result<()> {
        let mut raw = init(sys::cairn_checkpoint_options_init)?;
        set_fields!(raw, options, { compress, fsync });
        if let Some(on) = options.asynchronous {
            raw.r#async = on.into();
        }
        // SAFETY: a live checkpoint; the options are copied.
        unsafe { check(sys::cairn_checkpoint_set_options(self.raw.as_ptr(), &raw)) }
    }

    /// The current value of save_counter (0 before the first save or restore). An error when a
    /// background save failed (its error comes back here).
    pub fn save_counter(&self) -> Result<i64> {
        let mut n = 0;
        // SAFETY: a live checkpoint; `n` receives the counter.
        unsafe { check(sys::cairn_checkpoint_save_counter(self.raw.as_ptr(), &mut n))? };
        Ok(n)
    }

    /// Increments save_counter and writes `"<prefix>-<save_counter>"` atomically; returns that path.
    pub fn save(&self, prefix: impl AsRef<Path>) -> Result<PathBuf> {
        let prefix = c_path(prefix.as_ref(), "Checkpoint::save", "prefix")?;
        let mut path = ptr::null_mut();
        // SAFETY: `path` receives a string we free with cairn_free.
        unsafe {
            check(sys::cairn_checkpoint_save(self.raw.as_ptr(), prefix.as_ptr(), &mut path))?;
            Ok(take_c_path(path))
        }
    }

    /// Writes the checkpoint to exactly `path` (atomically), leaving save_counter alone.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref(), "Checkpoint::write", "path")?;
        unsafe { check(sys::cairn_checkpoint_write(self.raw.as_ptr(), path.as_ptr())) }
    }

    /// Waits for a background save and returns its error, if any (reported once).
    pub fn sync(&self) -> Result<()> {
        unsafe { check(sys::cairn_checkpoint_sync(self.raw.as_ptr())) }
    }

    /// Restores values from `path` by matching its objects to live ones along the same edges.
    /// Values whose objects do not exist yet are restored the moment their edge is created: they
    /// wait on the live objects that will receive them, so dropping the checkpoint and the status
    /// at once loses nothing.
    ///
    /// `path` may also be a TensorFlow checkpoint (a prefix such as `"<dir>/ckpt-5"`, its `.index`
    /// file, or a directory whose `checkpoint` state file names the latest one): its object graph
    /// is matched by the same rules after Keras' edge names are mapped onto Cairn's layers and
    /// optimizers, so `tf.train.Checkpoint(model=<Keras model>, optimizer=<Adam>)` restores into a
    /// checkpoint of `[("model", &sequential), ("optimizer", &adam)]`; each value's CRC32C is
    /// checked as it loads. A TF1 name-based checkpoint (NOT_FOUND) or a safetensors file
    /// (INVALID_ARGUMENT) has no object graph: load it by name with [`Object::load_weights`].
    ///
    /// Errors: NOT_FOUND for a missing file, DATA_LOSS for a damaged one, INVALID_ARGUMENT for a
    /// dtype or shape mismatch (the message names the key). A failed restore leaves the values it
    /// already assigned and keeps no deferred restores.
    pub fn restore(&self, path: impl AsRef<Path>) -> Result<RestoreStatus> {
        self.restore_opt(Some(path))
    }

    /// [`Checkpoint::restore`], where `None` restores nothing (TF's `restore(None)`, e.g. when a
    /// manager has no checkpoint yet): the status's asserts then fail.
    pub fn restore_opt<P: AsRef<Path>>(&self, path: Option<P>) -> Result<RestoreStatus> {
        let path = path.map(|p| c_path(p.as_ref(), "Checkpoint::restore", "path")).transpose()?;
        let mut out = ptr::null_mut();
        unsafe {
            check(sys::cairn_checkpoint_restore(
                self.raw.as_ptr(),
                path.as_ref().map_or(ptr::null(), |p| p.as_ptr()),
                &mut out,
            ))?
        };
        NonNull::new(out)
            .map(|raw| RestoreStatus { raw })
            .ok_or_else(|| Error::new(Code::Internal, "cairn_checkpoint_restore: returned success but no status"))
    }

    /// Writes the checkpoint to `path` in `format`, atomically (a failed export leaves an
    /// earlier file at `path` as it was), leaving save_counter alone:
    /// - [`WeightsFormat::Tf`]: the bundle `"<path>.index"` + `"<path>.data-00000-of-00001"` with
    ///   TensorFlow's object graph: `tf.train.load_checkpoint` reads every value and
    ///   `tf.train.Checkpoint` restores it (so does [`Checkpoint::restore`]);
    /// - [`WeightsFormat::Cairn`]: what [`Checkpoint::write`] writes;
    /// - [`WeightsFormat::Safetensors`]: every value by its checkpoint key, without an object graph
    ///   (to save one module under short names use [`Object::save_weights`]).
    ///
    /// INVALID_ARGUMENT for [`WeightsFormat::Auto`]; the errors of writing (PERMISSION_DENIED,
    /// RESOURCE_EXHAUSTED, ... naming the path).
    pub fn export(&self, path: impl AsRef<Path>, format: WeightsFormat, options: ExportOptions) -> Result<()> {
        let path = c_path(path.as_ref(), "Checkpoint::export", "path")?;
        let mut raw = init(sys::cairn_export_options_init)?;
        set_fields!(raw, options, { keras_names, save_counter });
        // SAFETY: a live checkpoint; the path and options outlive the call.
        unsafe { check(sys::cairn_checkpoint_export(self.raw.as_ptr(), path.as_ptr(), format.to_raw(), &raw)) }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_checkpoint {
        self.raw.as_ptr()
    }
}

impl Drop for Checkpoint {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; the root it lent goes with it (never freed through `root`).
        unsafe { sys::cairn_checkpoint_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checkpoint").field("root", &*self.root).field("save_counter", &self.save_counter()).finish()
    }
}

/// Options of [`Checkpoint::set_options`]; options not set keep cairn.h's defaults
/// (`cairn_checkpoint_options_init`: no compression, synchronous, fsync).
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckpointOptions {
    compress: Option<bool>,
    asynchronous: Option<bool>,
    fsync: Option<bool>,
}

impl CheckpointOptions {
    /// cairn.h's defaults: no compression, synchronous, fsync.
    pub fn new() -> Self {
        Self::default()
    }

    /// zstd per payload (stored raw when it would not shrink); default false.
    pub fn compress(mut self, on: bool) -> Self {
        self.compress = Some(on);
        self
    }

    /// Save and write snapshot the values and write in the background; default false. An error
    /// shows up on the next save, write, restore or [`Checkpoint::sync`].
    pub fn asynchronous(mut self, on: bool) -> Self {
        self.asynchronous = Some(on);
        self
    }

    /// fsync the file and its directory (crash safety); default true.
    pub fn fsync(mut self, on: bool) -> Self {
        self.fsync = Some(on);
        self
    }
}

/// Options of [`Checkpoint::export`]; options not set keep cairn.h's defaults
/// (`cairn_export_options_init`: Keras names, save_counter included).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExportOptions {
    keras_names: Option<bool>,
    save_counter: Option<bool>,
}

impl ExportOptions {
    /// cairn.h's defaults: Keras names, save_counter included.
    pub fn new() -> Self {
        Self::default()
    }

    /// TensorFlow: lay Cairn's layers and optimizers out as Keras 3 does, so that
    /// `tf.train.Checkpoint(model=<the Keras model>, ...)` restores them; `false` keeps Cairn's
    /// edge names (what a `tf.Module` restores). Default true.
    pub fn keras_names(mut self, on: bool) -> Self {
        self.keras_names = Some(on);
        self
    }

    /// TensorFlow: include save_counter (TensorFlow's restore expects it). Default true.
    pub fn save_counter(mut self, on: bool) -> Self {
        self.save_counter = Some(on);
        self
    }
}

/// What a restore matched, for its asserts. Dropping it frees it; deferred restores go on (they
/// wait on the objects).
pub struct RestoreStatus {
    raw: NonNull<sys::cairn_restore_status>,
}

// SAFETY: the status is a handle of its own (it may outlive the checkpoint). The restore state
// behind it is already reached from any thread (a deferred restore runs on whichever thread creates
// the edge, and objects may be used from any thread), so moving the status is fine. cairn.h states
// no sharing rule for it, so it is not Sync.
unsafe impl Send for RestoreStatus {}

impl RestoreStatus {
    /// FAILED_PRECONDITION unless every checkpoint value was restored and every live object under
    /// the root was matched; the message names every unmatched path. Returns `self` for chaining.
    pub fn assert_consumed(&self) -> Result<&Self> {
        unsafe { check(sys::cairn_restore_status_assert_consumed(self.raw.as_ptr()))? };
        Ok(self)
    }

    /// FAILED_PRECONDITION unless every live variable under the root was matched.
    pub fn assert_existing_objects_matched(&self) -> Result<&Self> {
        unsafe { check(sys::cairn_restore_status_assert_existing_objects_matched(self.raw.as_ptr()))? };
        Ok(self)
    }

    /// Silences the warning logged when checkpoint values were never restored.
    pub fn expect_partial(&self) -> &Self {
        unsafe { sys::cairn_restore_status_expect_partial(self.raw.as_ptr()) };
        self
    }
}

impl Drop for RestoreStatus {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::cairn_restore_status_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for RestoreStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RestoreStatus")
    }
}

/// Keeps a directory of numbered checkpoints `"<directory>/<checkpoint_name>-<N>"` and deletes old
/// ones (tf.train.CheckpointManager). It owns its [`Checkpoint`]: reach it with
/// [`CheckpointManager::checkpoint`], take it back with [`CheckpointManager::into_checkpoint`].
/// `Send`, not `Sync`, like the checkpoint:
///
/// ```compile_fail
/// fn shared<T: Sync>() {}
/// shared::<cairn::CheckpointManager>(); // error: cannot be shared between threads
/// ```
pub struct CheckpointManager {
    raw: NonNull<sys::cairn_checkpoint_manager>,
    checkpoint: Checkpoint, // dropped after the manager (Drop frees `raw` first)
}

// SAFETY: as for Checkpoint; the manager and the checkpoint it owns move together.
unsafe impl Send for CheckpointManager {}

impl CheckpointManager {
    /// A manager saving `checkpoint` into `directory` (created if missing). It reads the
    /// directory's state file, or rebuilds the list from the intact checkpoints there, and removes
    /// temporary files an interrupted save left behind. On error the checkpoint is dropped (the
    /// objects it refers to are not).
    pub fn new(
        checkpoint: Checkpoint,
        directory: impl AsRef<Path>,
        options: CheckpointManagerOptions,
    ) -> Result<CheckpointManager> {
        let directory = c_path(directory.as_ref(), "CheckpointManager::new", "directory")?;
        let name = options
            .checkpoint_name
            .as_deref()
            .map(|n| c_string(n, "CheckpointManager::new", "checkpoint_name"))
            .transpose()?;
        let mut raw = init(sys::cairn_checkpoint_manager_options_init)?;
        set_fields!(raw, options, { max_to_keep, keep_checkpoint_every_n_hours });
        if let Some(name) = &name {
            raw.checkpoint_name = name.as_ptr();
        }
        let mut out = ptr::null_mut();
        // SAFETY: live checkpoint; the options and strings outlive the call.
        unsafe {
            check(sys::cairn_checkpoint_manager_create(checkpoint.as_raw(), directory.as_ptr(), &raw, &mut out))?
        };
        let raw = NonNull::new(out).ok_or_else(|| {
            Error::new(Code::Internal, "cairn_checkpoint_manager_create: returned success but no manager")
        })?;
        Ok(CheckpointManager { raw, checkpoint })
    }

    /// The checkpoint it saves (for restore, options, its root, ...).
    pub fn checkpoint(&self) -> &Checkpoint {
        &self.checkpoint
    }

    /// Frees the manager and gives back its checkpoint.
    pub fn into_checkpoint(self) -> Checkpoint {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again; the manager handle is freed once here and
        // the checkpoint moved out once.
        unsafe {
            sys::cairn_checkpoint_manager_free(this.raw.as_ptr());
            ptr::read(&this.checkpoint)
        }
    }

    /// Shards every later save across the processes of `mpi` (`None`: one file per save again).
    /// Every rank then calls [`CheckpointManager::save`] (or `save_numbered` with the same number),
    /// each on its own manager over the same directory, which every rank must see (one machine's
    /// disk, or a shared filesystem). Each rank writes its share of the values as a shard file
    /// beside the checkpoint, and rank 0 commits the index at the checkpoint's path once every
    /// shard is durable: a failure or crash of any rank before that leaves the previous checkpoints
    /// listed and intact. Sharded saves are synchronous. The index is the checkpoint:
    /// [`Checkpoint::restore`] takes its path in any number of processes, with or without MPI. The
    /// manager holds the communicator until it is dropped or sharded anew.
    pub fn shard(&self, mpi: Option<&crate::mpi::Mpi>) -> Result<()> {
        let mpi = mpi.map_or(ptr::null_mut(), |m| m.as_raw());
        // SAFETY: a live manager; a live handle or NULL.
        unsafe { check(sys::cairn_checkpoint_manager_shard(self.raw.as_ptr(), mpi)) }
    }

    /// Increments save_counter and saves `"<directory>/<checkpoint_name>-<save_counter>"`, then
    /// deletes checkpoints beyond max_to_keep; returns the path.
    pub fn save(&self) -> Result<PathBuf> {
        self.save_raw(-1)
    }

    /// Like [`CheckpointManager::save`] with the file numbered `checkpoint_number` instead of the
    /// counter (save_counter still increments).
    pub fn save_numbered(&self, checkpoint_number: u64) -> Result<PathBuf> {
        let number = i64::try_from(checkpoint_number).map_err(|_| {
            Error::new(
                Code::InvalidArgument,
                format!("CheckpointManager::save_numbered: {checkpoint_number} is too large"),
            )
        })?;
        self.save_raw(number)
    }

    fn save_raw(&self, number: i64) -> Result<PathBuf> {
        let mut path = ptr::null_mut();
        // SAFETY: `path` receives a string we free with cairn_free.
        unsafe {
            check(sys::cairn_checkpoint_manager_save(self.raw.as_ptr(), number, &mut path))?;
            Ok(take_c_path(path))
        }
    }

    /// The newest checkpoint's path, if any.
    pub fn latest(&self) -> Option<PathBuf> {
        // SAFETY: borrowed until the next save or free; copied at once.
        let p = unsafe { sys::cairn_checkpoint_manager_latest(self.raw.as_ptr()) };
        (!p.is_null()).then(|| unsafe { path_from_c(p) })
    }

    /// The newest checkpoint a manager (or a ModelCheckpoint callback) saved in `directory`
    /// (tf.train.latest_checkpoint): `None` when it has none or does not exist. Reads the directory as a manager
    /// does (its state file, or the intact checkpoints there), through a manager of an empty
    /// checkpoint; so it also removes temporary files an interrupted save left there.
    ///
    /// ```no_run
    /// # use cairn::{Checkpoint, CheckpointManager, Context, Object};
    /// # fn f(ctx: &Context, fresh: &Object) -> Result<(), Box<dyn std::error::Error>> {
    /// let latest = CheckpointManager::latest_in(ctx, "checkpoints")?.ok_or("no checkpoint")?;
    /// Checkpoint::new(ctx, &[("model", fresh)])?.restore(latest)?.expect_partial();
    /// # Ok(())
    /// # }
    /// ```
    pub fn latest_in(ctx: &Context, directory: impl AsRef<Path>) -> Result<Option<PathBuf>> {
        if !directory.as_ref().is_dir() {
            return Ok(None); // a manager would create it
        }
        let empty = Checkpoint::new(ctx, &[])?;
        Ok(CheckpointManager::new(empty, directory, CheckpointManagerOptions::new())?.latest())
    }

    /// The checkpoints it keeps track of, oldest first.
    pub fn checkpoints(&self) -> Vec<PathBuf> {
        let n = unsafe { sys::cairn_checkpoint_manager_count(self.raw.as_ptr()) };
        (0..n)
            .filter_map(|i| {
                // SAFETY: as in latest().
                let p = unsafe { sys::cairn_checkpoint_manager_path(self.raw.as_ptr(), i) };
                (!p.is_null()).then(|| unsafe { path_from_c(p) })
            })
            .collect()
    }
}

impl Drop for CheckpointManager {
    fn drop(&mut self) {
        // SAFETY: self owns the handle (waits for a background save); the checkpoint field is
        // dropped after this.
        unsafe { sys::cairn_checkpoint_manager_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for CheckpointManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointManager").field("checkpoints", &self.checkpoints()).finish()
    }
}

/// Options of [`CheckpointManager::new`]; options not set keep cairn.h's defaults
/// (`cairn_checkpoint_manager_options_init`).
#[derive(Clone, Debug, Default)]
pub struct CheckpointManagerOptions {
    checkpoint_name: Option<String>,
    max_to_keep: Option<i64>,
    keep_checkpoint_every_n_hours: Option<f64>,
}

impl CheckpointManagerOptions {
    /// cairn.h's defaults: file names `"ckpt-<N>"`, keep the 5 newest, no hourly keeping.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file name prefix; default "ckpt".
    pub fn checkpoint_name(mut self, name: impl Into<String>) -> Self {
        self.checkpoint_name = Some(name.into());
        self
    }

    /// How many checkpoints to keep; default 5. 0 is refused by [`CheckpointManager::new`]
    /// (INVALID_ARGUMENT).
    pub fn max_to_keep(mut self, n: usize) -> Self {
        self.max_to_keep = Some(i64::try_from(n).unwrap_or(i64::MAX));
        self
    }

    /// Keep every checkpoint (max_to_keep -1).
    pub fn keep_all(mut self) -> Self {
        self.max_to_keep = Some(-1);
        self
    }

    /// Also keep one checkpoint per this many hours; 0 (default) turns it off.
    pub fn keep_checkpoint_every_n_hours(mut self, hours: f64) -> Self {
        self.keep_checkpoint_every_n_hours = Some(hours);
        self
    }
}

/// Reads weights without the program that wrote them: keys with dtypes and shapes, and their
/// values (tf.train.load_checkpoint, safetensors' `safe_open`). It opens all three formats of
/// [`WeightsFormat`], told from the file's bytes and the files beside it:
/// - Cairn checkpoint files;
/// - TensorFlow checkpoints (tensor_bundle V2): a prefix (`"<dir>/ckpt-5"`, with `ckpt-5.index`
///   and `ckpt-5.data-00000-of-00001` beside it), the `.index` file, or a directory whose
///   `checkpoint` state file names the latest one; TF1 name-based checkpoints too;
/// - safetensors: a `.safetensors` file, a sharded model's index `.json`, or a directory holding
///   `model.safetensors.index.json` or `model.safetensors`.
///
/// Keys are sorted in byte order, `_CHECKPOINTABLE_OBJECT_GRAPH` (a string entry) included when
/// the file has an object graph (a TF1 checkpoint or safetensors has none).
pub struct CheckpointReader {
    raw: NonNull<sys::cairn_checkpoint_reader>,
}

// SAFETY: a reader is a handle of its own; cairn.h promises nothing about sharing it, so it may
// move between threads but not be shared. Not Sync.
unsafe impl Send for CheckpointReader {}

/// One key of a checkpoint, as [`CheckpointReader::entries`] lists it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CheckpointEntry {
    /// `"<path>/.ATTRIBUTES/VARIABLE_VALUE"`, or "_CHECKPOINTABLE_OBJECT_GRAPH".
    pub key: String,
    /// The element type a load returns: `DType::String` for the object graph and TensorFlow's
    /// string tensors, `DType::Float32` for safetensors' F8 types, `DType::Invalid` for a dtype
    /// Cairn lacks, whose loads fail with UNIMPLEMENTED naming the key (see
    /// [`CheckpointReader::type_name`]).
    pub dtype: DType,
    /// The stored tensor's shape.
    pub shape: Vec<i64>,
}

impl CheckpointReader {
    /// Opens weights in any of the three formats and verifies their header, footer and index.
    /// NOT_FOUND for a missing file, DATA_LOSS naming the damaged part.
    pub fn open(path: impl AsRef<Path>) -> Result<CheckpointReader> {
        crate::check_abi()?;
        let path = c_path(path.as_ref(), "CheckpointReader::open", "path")?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_checkpoint_reader_open(path.as_ptr(), &mut out))? };
        NonNull::new(out)
            .map(|raw| CheckpointReader { raw })
            .ok_or_else(|| Error::new(Code::Internal, "cairn_checkpoint_reader_open: returned success but no reader"))
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        unsafe { sys::cairn_checkpoint_reader_count(self.raw.as_ptr()) }
    }

    /// Whether the checkpoint has no keys (never true for a valid one: the object graph is a key).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key `i` with its dtype and shape, in key order; `None` out of range.
    pub fn entry(&self, i: usize) -> Option<CheckpointEntry> {
        let r = self.raw.as_ptr();
        // SAFETY: a live reader; the key is borrowed from it and copied at once.
        unsafe {
            let key = sys::cairn_checkpoint_reader_key(r, i);
            if key.is_null() {
                return None;
            }
            let rank = sys::cairn_checkpoint_reader_rank(r, i);
            Some(CheckpointEntry {
                key: CStr::from_ptr(key).to_string_lossy().into_owned(),
                dtype: DType::from_raw(sys::cairn_checkpoint_reader_dtype(r, i)).unwrap_or(DType::Invalid),
                shape: (0..rank).map(|axis| sys::cairn_checkpoint_reader_dim(r, i, axis)).collect(),
            })
        }
    }

    /// Every key with its dtype and shape, sorted by key (tf.train.list_variables).
    pub fn entries(&self) -> Vec<CheckpointEntry> {
        (0..self.len()).filter_map(|i| self.entry(i)).collect()
    }

    /// The value of `key` (checksums verified) as a new tensor on `ctx`'s default device.
    /// NOT_FOUND for an unknown key, DATA_LOSS for a damaged payload, INVALID_ARGUMENT for a
    /// string entry (see [`CheckpointReader::load_string`]), UNIMPLEMENTED naming the key for a
    /// dtype Cairn lacks (uint16, complex128, U32, ...).
    pub fn load(&self, ctx: &Context, key: &str) -> Result<Tensor> {
        let key = c_string(key, "CheckpointReader::load", "key")?;
        let mut out = ptr::null_mut();
        unsafe { check(sys::cairn_checkpoint_reader_load(self.raw.as_ptr(), ctx.as_raw(), key.as_ptr(), &mut out))? };
        Tensor::from_raw_result(out, "cairn_checkpoint_reader_load")
    }

    /// The bytes of a string entry (the serialized object graph; element 0 of a TensorFlow string
    /// tensor, see [`CheckpointReader::load_string_element`]).
    pub fn load_string(&self, key: &str) -> Result<Vec<u8>> {
        let key = c_string(key, "CheckpointReader::load_string", "key")?;
        // SAFETY: a live reader and key; take_bytes frees what the call hands over.
        unsafe {
            take_bytes(|out, size| sys::cairn_checkpoint_reader_load_string(self.raw.as_ptr(), key.as_ptr(), out, size))
        }
    }

    /// Element `index` (row-major) of a string value: TensorFlow's string tensors, or a Cairn
    /// file's object graph (one element). NOT_FOUND for an unknown key, INVALID_ARGUMENT for a
    /// value that is not a string or an index past its elements, DATA_LOSS for a damaged value.
    pub fn load_string_element(&self, key: &str, index: usize) -> Result<Vec<u8>> {
        let key = c_string(key, "CheckpointReader::load_string_element", "key")?;
        // SAFETY: as in load_string.
        unsafe {
            take_bytes(|out, size| {
                sys::cairn_checkpoint_reader_load_string_element(self.raw.as_ptr(), key.as_ptr(), index, out, size)
            })
        }
    }

    /// The format of the file read (never [`WeightsFormat::Auto`] for an open reader).
    pub fn format(&self) -> WeightsFormat {
        // SAFETY: a live reader.
        WeightsFormat::from_raw(unsafe { sys::cairn_checkpoint_reader_format(self.raw.as_ptr()) })
            .unwrap_or(WeightsFormat::Auto)
    }

    /// The dtype of key `i` as its file names it: "float32" for Cairn and TensorFlow, "F32",
    /// "BF16", "F8_E4M3", "U32", ... for safetensors; also for dtypes Cairn lacks, whose
    /// [`CheckpointEntry::dtype`] is `DType::Invalid`. `None` out of range.
    pub fn type_name(&self, i: usize) -> Option<&str> {
        // SAFETY: a live reader; the string is borrowed from it, so it lives as long as `&self`.
        unsafe { borrowed_str(sys::cairn_checkpoint_reader_type_name(self.raw.as_ptr(), i)) }
    }

    /// Checks the stored checksum of `key` without keeping its value (loads check it too).
    /// `Ok(true)` when it matched, `Ok(false)` when the file keeps no checksum for the key (a
    /// safetensors tensor written without Cairn's opt-in checksum). NOT_FOUND for an unknown key,
    /// DATA_LOSS naming the key when the bytes do not match.
    pub fn verify(&self, key: &str) -> Result<bool> {
        let key = c_string(key, "CheckpointReader::verify", "key")?;
        let mut checked = 0;
        // SAFETY: a live reader and key; `checked` receives the answer.
        unsafe { check(sys::cairn_checkpoint_reader_verify(self.raw.as_ptr(), key.as_ptr(), &mut checked))? };
        Ok(checked != 0)
    }

    /// The metadata strings: a safetensors file's `"__metadata__"` (the first shard's for a
    /// sharded model), Cairn's checksum keys (`"cairn.checksum.<name>"`) included; empty for the
    /// other formats.
    pub fn metadata(&self) -> BTreeMap<String, String> {
        let r = self.raw.as_ptr();
        let n = unsafe { sys::cairn_checkpoint_reader_metadata_count(r) };
        (0..n)
            .filter_map(|i| {
                // SAFETY: a live reader; both strings are borrowed from it and copied at once.
                let (key, value) = unsafe {
                    (sys::cairn_checkpoint_reader_metadata_key(r, i), sys::cairn_checkpoint_reader_metadata_value(r, i))
                };
                if key.is_null() || value.is_null() {
                    return None;
                }
                let copy = |s| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
                Some((copy(key), copy(value)))
            })
            .collect()
    }
}

/// Runs a call that hands over a byte buffer (freed with cairn_free) and its length, and copies it.
///
/// # Safety
/// `run` passes both pointers to a C API call that fills them on success.
unsafe fn take_bytes(run: impl FnOnce(*mut *mut c_char, *mut usize) -> *mut sys::cairn_status) -> Result<Vec<u8>> {
    let mut out = ptr::null_mut();
    let mut size = 0;
    check(run(&mut out, &mut size))?;
    let bytes = if out.is_null() { Vec::new() } else { std::slice::from_raw_parts(out.cast::<u8>(), size).to_vec() };
    sys::cairn_free(out.cast());
    Ok(bytes)
}

/// A borrowed C string as `&str`; `None` for NULL (or text that is not UTF-8).
///
/// # Safety
/// `s` is NULL or a NUL-terminated string that lives as long as `'a`.
unsafe fn borrowed_str<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        None
    } else {
        CStr::from_ptr(s).to_str().ok()
    }
}

impl Drop for CheckpointReader {
    fn drop(&mut self) {
        // SAFETY: self owns the handle.
        unsafe { sys::cairn_checkpoint_reader_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for CheckpointReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CheckpointReader").field("format", &self.format()).field("keys", &self.len()).finish()
    }
}

/// A path as a C string; INVALID_ARGUMENT when it holds a NUL byte.
pub(crate) fn c_path(path: &Path, function: &str, what: &str) -> Result<CString> {
    #[cfg(unix)]
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).to_vec();
    #[cfg(not(unix))]
    let bytes = path
        .to_str()
        .ok_or_else(|| Error::new(Code::InvalidArgument, format!("{function}: {what} {path:?} is not valid UTF-8")))?
        .as_bytes()
        .to_vec();
    CString::new(bytes)
        .map_err(|_| Error::new(Code::InvalidArgument, format!("{function}: {what} {path:?} contains a NUL byte")))
}

/// A copy of a borrowed C path.
///
/// # Safety
/// `p` is a live NUL-terminated string.
unsafe fn path_from_c(p: *const c_char) -> PathBuf {
    let bytes = CStr::from_ptr(p).to_bytes();
    #[cfg(unix)]
    return PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes));
    #[cfg(not(unix))]
    return PathBuf::from(String::from_utf8_lossy(bytes).into_owned());
}

/// Copies and frees a path the C API handed over (NULL gives an empty path).
///
/// # Safety
/// `p` is NULL or a string to free with cairn_free.
pub(crate) unsafe fn take_c_path(p: *mut c_char) -> PathBuf {
    if p.is_null() {
        return PathBuf::new();
    }
    let path = path_from_c(p);
    sys::cairn_free(p.cast());
    path
}
