//! Input pipelines (tf.data): a [`Dataset`] is an immutable description of a pipeline (a source
//! and transformations), a [`DatasetIterator`] runs one and yields [`Element`]s.
//!
//! ```no_run
//! use cairn::data::{Dataset, MapOptions, AUTOTUNE};
//! use cairn::{ops, Context, Tensor};
//!
//! # fn main() -> cairn::Result<()> {
//! let ctx = Context::new()?;
//! let xs = Tensor::new(&ctx, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[6])?;
//! let ds = Dataset::from_tensor_slices(&ctx, &[("x", &xs)])?
//!     .map("double", |ctx, x| Ok(vec![ops::add(ctx, &x[0], &x[0])?]), MapOptions::new().output_names(&["x"]))?
//!     .shuffle(6, 42, true)?
//!     .batch(4, false)?
//!     .prefetch(AUTOTUNE)?;
//! for element in ds.iterate()? {
//!     println!("{:?}", element?["x"].to_vec::<f32>()?);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Every transformation returns a new dataset and leaves its input usable. Datasets and iterators
//! are `Send + Sync`. Host callbacks (map, filter, generator, interleave) are closures that are
//! `Send + Sync + 'static`: Cairn calls them from its worker threads, several at once, and drops
//! them (through the C API's `release` hook) when the last dataset using them is freed. An `Err`
//! they return, or a panic (caught: nothing unwinds into C), fails that element only: the iterator
//! returns the error ("map 'name' (element N): ...") and goes on with the next element.

use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::checkpoint::c_path;
use crate::error::{c_string, check, take_string};
use crate::example::{feature_keys, raw_feature_specs};
use crate::function::raw_specs;
use crate::{Code, Context, DType, Error, FeatureSpec, Result, Tensor, TensorSpec};

mod callbacks;
mod iterator;
mod options;

pub use iterator::{DatasetIterator, Element};
pub use options::{CsvOptions, FilterOptions, InterleaveOptions, MapOptions, TfRecordOptions};

/// num_parallel_calls, cycle_length or a buffer size chosen by Cairn (tf.data.AUTOTUNE).
pub const AUTOTUNE: i32 = sys::CAIRN_AUTOTUNE;

/// An immutable input pipeline (tf.data.Dataset). Dropping it frees the handle; datasets built
/// from it keep what they need. `Send + Sync`. `Debug` shows [`Dataset::describe`].
pub struct Dataset {
    raw: NonNull<sys::cairn_dataset>,
}

// SAFETY: cairn.h: "datasets are immutable and may be used from any thread"; the handle is freed
// only by Drop.
unsafe impl Send for Dataset {}
unsafe impl Sync for Dataset {}

/// One component of an element spec: its name, dtype and shape (-1 where a dim is unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentSpec {
    /// The component's name, unique within the element.
    pub name: String,
    /// Its dtype (a byte string is a uint8 vector: Cairn has no string tensors).
    pub dtype: DType,
    /// Its dims, -1 where unknown.
    pub shape: Vec<i64>,
}

impl ComponentSpec {
    /// `ComponentSpec::new("image", DType::Float32, &[28, 28])`.
    pub fn new(name: &str, dtype: DType, shape: &[i64]) -> ComponentSpec {
        ComponentSpec { name: name.to_string(), dtype, shape: shape.to_vec() }
    }

    /// The dtype and shape, without the name.
    pub fn tensor_spec(&self) -> TensorSpec {
        TensorSpec::new(self.dtype, &self.shape)
    }
}

/// How many elements a dataset has ([`Dataset::cardinality`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cardinality {
    /// This many.
    Finite(u64),
    /// It never ends (`repeat(None)`).
    Infinite,
    /// Not known without running it (after a filter).
    Unknown,
}

/// C strings and the array of their pointers, for the C API's `const char *const *` lists.
pub(crate) struct CStrings {
    _owned: Vec<CString>,
    ptrs: Vec<*const c_char>,
}

impl CStrings {
    fn new(owned: Vec<CString>) -> CStrings {
        let ptrs = owned.iter().map(|s| s.as_ptr()).collect();
        CStrings { _owned: owned, ptrs }
    }

    pub(crate) fn from_strs<S: AsRef<str>>(items: &[S], function: &str, what: &str) -> Result<CStrings> {
        Ok(CStrings::new(items.iter().map(|s| c_string(s.as_ref(), function, what)).collect::<Result<_>>()?))
    }

    fn from_paths<P: AsRef<Path>>(paths: &[P], function: &str) -> Result<CStrings> {
        Ok(CStrings::new(paths.iter().map(|p| c_path(p.as_ref(), function, "path")).collect::<Result<_>>()?))
    }

    pub(crate) fn as_ptr(&self) -> *const *const c_char {
        self.ptrs.as_ptr()
    }

    /// NULL for an empty list (the C API's "default names").
    fn as_ptr_or_null(&self) -> *const *const c_char {
        if self.ptrs.is_empty() {
            ptr::null()
        } else {
            self.ptrs.as_ptr()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.ptrs.len()
    }
}

/// The names and C tensor specs of an element spec, kept alive together for a call.
pub(crate) struct RawSpecs {
    pub(crate) names: CStrings,
    specs: Vec<TensorSpec>,
}

impl RawSpecs {
    pub(crate) fn new(spec: &[ComponentSpec], function: &str) -> Result<RawSpecs> {
        let names: Vec<&str> = spec.iter().map(|c| c.name.as_str()).collect();
        Ok(RawSpecs {
            names: CStrings::from_strs(&names, function, "component name")?,
            specs: spec.iter().map(ComponentSpec::tensor_spec).collect(),
        })
    }

    /// The C specs; they borrow `self`'s shapes.
    pub(crate) fn specs(&self) -> Result<Vec<sys::cairn_tensor_spec>> {
        raw_specs(self.specs.iter())
    }
}

/// Runs a constructor that returns a new dataset through `out`.
pub(crate) fn new_dataset(
    function: &str,
    run: impl FnOnce(*mut *mut sys::cairn_dataset) -> *mut sys::cairn_status,
) -> Result<Dataset> {
    let mut out = ptr::null_mut();
    // SAFETY: `run` passes `out` to a constructor, which returns a status for us to free.
    unsafe { check(run(&mut out))? };
    NonNull::new(out)
        .map(|raw| Dataset { raw })
        .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but no dataset")))
}

/// Named tensors as the C API's parallel name and tensor arrays.
fn components(components: &[(&str, &Tensor)], function: &str) -> Result<(CStrings, Vec<*mut sys::cairn_tensor>)> {
    let names: Vec<&str> = components.iter().map(|(n, _)| *n).collect();
    let names = CStrings::from_strs(&names, function, "component name")?;
    Ok((names, components.iter().map(|(_, t)| t.as_raw()).collect()))
}

impl Dataset {
    // ---- Sources ----

    /// One element: the named tensors (tf.data.Dataset.from_tensors). Names must be unique and
    /// non-empty; at least one component.
    pub fn from_tensors(ctx: &Context, components: &[(&str, &Tensor)]) -> Result<Dataset> {
        Dataset::from_components(ctx, components, "Dataset::from_tensors", sys::cairn_dataset_from_tensors)
    }

    /// One element per row of the tensors' first dimension (from_tensor_slices): every tensor has
    /// rank >= 1 and the same first dimension.
    pub fn from_tensor_slices(ctx: &Context, components: &[(&str, &Tensor)]) -> Result<Dataset> {
        Dataset::from_components(ctx, components, "Dataset::from_tensor_slices", sys::cairn_dataset_from_tensor_slices)
    }

    fn from_components(
        ctx: &Context,
        comps: &[(&str, &Tensor)],
        function: &str,
        create: unsafe fn(
            *mut sys::cairn_context,
            *const *const c_char,
            *const *mut sys::cairn_tensor,
            usize,
            *mut *mut sys::cairn_dataset,
        ) -> *mut sys::cairn_status,
    ) -> Result<Dataset> {
        crate::check_abi()?;
        let (names, tensors) = components(comps, function)?;
        // SAFETY: live handles and names borrowed for the call.
        new_dataset(function, |out| unsafe {
            create(ctx.as_raw(), names.as_ptr_or_null(), tensors.as_ptr(), tensors.len(), out)
        })
    }

    /// int64 scalars start, start + step, ... before stop (tf.data.Dataset.range); one component
    /// "value". INVALID_ARGUMENT for step 0.
    pub fn range(ctx: &Context, start: i64, stop: i64, step: i64) -> Result<Dataset> {
        crate::check_abi()?;
        new_dataset("Dataset::range", |out| unsafe { sys::cairn_dataset_range(ctx.as_raw(), start, stop, step, out) })
    }

    /// The lines of text files, without their line ends (TextLineDataset): one component "line",
    /// the bytes as a uint8 vector. A missing file is NOT_FOUND at the first read.
    pub fn text_lines<P: AsRef<Path>>(ctx: &Context, paths: &[P]) -> Result<Dataset> {
        crate::check_abi()?;
        let paths = CStrings::from_paths(paths, "Dataset::text_lines")?;
        new_dataset("Dataset::text_lines", |out| unsafe {
            sys::cairn_dataset_text_lines(ctx.as_raw(), paths.as_ptr(), paths.len(), out)
        })
    }

    /// Records of CSV files (CsvDataset), one component per column; see [`CsvOptions`].
    pub fn csv<P: AsRef<Path>>(ctx: &Context, paths: &[P], options: &CsvOptions) -> Result<Dataset> {
        crate::check_abi()?;
        let paths = CStrings::from_paths(paths, "Dataset::csv")?;
        let raw = options.raw()?;
        new_dataset("Dataset::csv", |out| unsafe {
            sys::cairn_dataset_csv(ctx.as_raw(), paths.as_ptr(), paths.len(), &raw.opts, out)
        })
    }

    /// The file names matching glob `patterns` (list_files), one component "filename" (a uint8
    /// vector): sorted, then a permutation seeded by `seed` when `shuffle` is set (reshuffled on
    /// each iteration). NOT_FOUND when nothing matches.
    pub fn list_files<S: AsRef<str>>(ctx: &Context, patterns: &[S], shuffle: bool, seed: i64) -> Result<Dataset> {
        crate::check_abi()?;
        let patterns = CStrings::from_strs(patterns, "Dataset::list_files", "pattern")?;
        new_dataset("Dataset::list_files", |out| unsafe {
            sys::cairn_dataset_list_files(
                ctx.as_raw(),
                patterns.as_ptr(),
                patterns.len(),
                i32::from(shuffle),
                seed,
                out,
            )
        })
    }

    /// The records of TFRecord files (TFRecordDataset): one component "record", a uint8 vector.
    pub fn tfrecord<P: AsRef<Path>>(ctx: &Context, paths: &[P], options: TfRecordOptions) -> Result<Dataset> {
        crate::check_abi()?;
        let paths = CStrings::from_paths(paths, "Dataset::tfrecord")?;
        let raw = options.raw()?;
        new_dataset("Dataset::tfrecord", |out| unsafe {
            sys::cairn_dataset_tfrecord(ctx.as_raw(), paths.as_ptr(), paths.len(), &raw, out)
        })
    }

    /// Elements from a Rust generator with a declared element spec (from_generator):
    /// `generator(ctx, index)` returns the tensors of element `index` (0, 1, ... within one
    /// iteration) in spec order, or `None` at the end. A generator that returns the same element
    /// for the same index makes restores exact. It is called from worker threads (one call at a
    /// time per iteration, several iterations at once); each element is checked against `spec`.
    pub fn from_generator<F>(ctx: &Context, spec: &[ComponentSpec], generator: F) -> Result<Dataset>
    where
        F: Fn(&Context, i64) -> Result<Option<Vec<Tensor>>> + Send + Sync + 'static,
    {
        crate::check_abi()?;
        let raw = RawSpecs::new(spec, "Dataset::from_generator")?;
        let specs = raw.specs()?;
        callbacks::hand_over::<callbacks::GeneratorFn>(Box::new(generator), |user_data, release| {
            new_dataset("Dataset::from_generator", |out| unsafe {
                sys::cairn_dataset_from_generator(
                    ctx.as_raw(),
                    raw.names.as_ptr(),
                    specs.as_ptr(),
                    specs.len(),
                    Some(callbacks::generator_trampoline),
                    user_data,
                    release,
                    out,
                )
            })
        })
    }

    // ---- Transformations ----

    /// Applies `f` to every element (Dataset.map): it gets the element's components in order and
    /// returns the new element's. Compiled by default: `f` is traced now, on symbolic tensors,
    /// and the graph is replayed for every element (so a wrong `f` fails here); with
    /// `MapOptions::compile(false)` it runs eagerly for each element and
    /// [`MapOptions::output_specs`] declares what it returns. `name` names it in errors
    /// ("map 'name' (element 17): ...") and in [`Dataset::describe`].
    pub fn map<F>(&self, name: &str, f: F, options: MapOptions) -> Result<Dataset>
    where
        F: Fn(&Context, &[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
    {
        let raw = options.raw()?;
        self.apply_function("Dataset::map", name, Box::new(f), raw.opts, |o, r| o.release = r, sys::cairn_dataset_map)
    }

    /// Keeps the elements for which `predicate` returns a true bool scalar (Dataset.filter). The
    /// result is a stream: its cardinality is unknown and a shuffle after it buffers.
    pub fn filter<F>(&self, name: &str, predicate: F, options: FilterOptions) -> Result<Dataset>
    where
        F: Fn(&Context, &[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
    {
        // A filter's function is a map's with one output, the predicate's bool scalar.
        let f = move |ctx: &Context, x: &[Tensor]| Ok(vec![predicate(ctx, x)?]);
        let opts = options.raw()?;
        self.apply_function("Dataset::filter", name, Box::new(f), opts, |o, r| o.release = r, sys::cairn_dataset_filter)
    }

    /// map or filter: `create(self, name, trampoline, user_data, options with release, out)`.
    fn apply_function<O>(
        &self,
        function: &str,
        name: &str,
        f: Box<callbacks::MapFn>,
        mut opts: O,
        set_release: fn(&mut O, callbacks::Release),
        create: unsafe fn(
            *const sys::cairn_dataset,
            *const c_char,
            sys::cairn_function_fn,
            *mut std::ffi::c_void,
            *const O,
            *mut *mut sys::cairn_dataset,
        ) -> *mut sys::cairn_status,
    ) -> Result<Dataset> {
        let c_name = c_string(name, function, "name")?;
        callbacks::hand_over(f, |user_data, release| {
            set_release(&mut opts, release);
            // SAFETY: live handles, a NUL-terminated name and options borrowed for the call;
            // user_data is the hook the trampoline expects.
            new_dataset(function, |out| unsafe {
                create(self.raw.as_ptr(), c_name.as_ptr(), Some(callbacks::function_trampoline), user_data, &opts, out)
            })
        })
    }

    /// Maps each element to a dataset with `f` and interleaves their elements (Dataset.interleave):
    /// `cycle_length` inner datasets at a time, `block_length` elements from each in turn. Every
    /// inner dataset must have the element spec `spec`.
    pub fn interleave<F>(&self, f: F, spec: &[ComponentSpec], options: InterleaveOptions) -> Result<Dataset>
    where
        F: Fn(&Context, &[Tensor]) -> Result<Dataset> + Send + Sync + 'static,
    {
        let raw = RawSpecs::new(spec, "Dataset::interleave")?;
        let specs = raw.specs()?;
        let mut opts = options.raw()?;
        callbacks::hand_over::<callbacks::InterleaveFn>(Box::new(f), |user_data, release| {
            opts.release = release;
            new_dataset("Dataset::interleave", |out| unsafe {
                sys::cairn_dataset_interleave(
                    self.raw.as_ptr(),
                    Some(callbacks::interleave_trampoline),
                    user_data,
                    raw.names.as_ptr(),
                    specs.as_ptr(),
                    specs.len(),
                    &opts,
                    out,
                )
            })
        })
    }

    /// Stacks `batch_size` consecutive elements into one (Dataset.batch); the last batch is
    /// smaller unless `drop_remainder`.
    pub fn batch(&self, batch_size: i64, drop_remainder: bool) -> Result<Dataset> {
        self.derive("Dataset::batch", |ds, out| unsafe {
            sys::cairn_dataset_batch(ds, batch_size, i32::from(drop_remainder), out)
        })
    }

    /// Batches elements of different shapes by padding them (Dataset.padded_batch).
    /// `padded_shapes`: `None` pads every dim to the batch's largest; or one shape per component,
    /// where -1 pads to the batch's largest and a fixed dim pads to that size. `padding_values`:
    /// `None` pads with zeros; or one per component, `None` or a scalar of its dtype.
    pub fn padded_batch(
        &self,
        batch_size: i64,
        drop_remainder: bool,
        padded_shapes: Option<&[&[i64]]>,
        padding_values: Option<&[Option<&Tensor>]>,
    ) -> Result<Dataset> {
        let n = self.num_components();
        let check_len = |len: usize, what: &str| {
            if len == n {
                Ok(())
            } else {
                Err(Error::new(
                    Code::InvalidArgument,
                    format!("Dataset::padded_batch: {len} {what} for {n} component(s)"),
                ))
            }
        };
        let shapes: Option<Vec<TensorSpec>> =
            padded_shapes.map(|s| s.iter().map(|dims| TensorSpec::new(DType::Float32, dims)).collect());
        if let Some(s) = &shapes {
            check_len(s.len(), "padded shapes")?;
        }
        let raw_shapes = shapes.as_ref().map(|s| raw_specs(s.iter())).transpose()?;
        let values: Option<Vec<*mut sys::cairn_tensor>> =
            padding_values.map(|v| v.iter().map(|t| t.map_or(ptr::null_mut(), |t| t.as_raw())).collect());
        if let Some(v) = &values {
            check_len(v.len(), "padding values")?;
        }
        self.derive("Dataset::padded_batch", |ds, out| unsafe {
            sys::cairn_dataset_padded_batch(
                ds,
                batch_size,
                i32::from(drop_remainder),
                raw_shapes.as_ref().map_or(ptr::null(), |s| s.as_ptr()),
                values.as_ref().map_or(ptr::null(), |v| v.as_ptr()),
                out,
            )
        })
    }

    /// Splits each element along its first dimension (Dataset.unbatch).
    pub fn unbatch(&self) -> Result<Dataset> {
        self.derive("Dataset::unbatch", |ds, out| unsafe { sys::cairn_dataset_unbatch(ds, out) })
    }

    /// Shuffles (Dataset.shuffle): over an indexable input a seeded permutation of the whole input
    /// (nothing to save); over a stream a buffer of `buffer_size` elements. With
    /// `reshuffle_each_iteration` each pass of a repeat (and each new iterator) has its own order.
    pub fn shuffle(&self, buffer_size: i64, seed: i64, reshuffle_each_iteration: bool) -> Result<Dataset> {
        self.derive("Dataset::shuffle", |ds, out| unsafe {
            sys::cairn_dataset_shuffle(ds, buffer_size, seed, i32::from(reshuffle_each_iteration), out)
        })
    }

    /// The input `count` times, or forever for `None` (Dataset.repeat).
    pub fn repeat(&self, count: Option<u64>) -> Result<Dataset> {
        let count = count.map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX));
        self.derive("Dataset::repeat", |ds, out| unsafe { sys::cairn_dataset_repeat(ds, count, out) })
    }

    /// The first `count` elements; -1 all (Dataset.take).
    pub fn take(&self, count: i64) -> Result<Dataset> {
        self.derive("Dataset::take", |ds, out| unsafe { sys::cairn_dataset_take(ds, count, out) })
    }

    /// All but the first `count` elements; -1 skips all (Dataset.skip).
    pub fn skip(&self, count: i64) -> Result<Dataset> {
        self.derive("Dataset::skip", |ds, out| unsafe { sys::cairn_dataset_skip(ds, count, out) })
    }

    /// Every `num_shards`-th element starting at `index` (Dataset.shard).
    pub fn shard(&self, num_shards: i64, index: i64) -> Result<Dataset> {
        self.derive("Dataset::shard", |ds, out| unsafe { sys::cairn_dataset_shard(ds, num_shards, index, out) })
    }

    /// Computes up to `buffer_size` elements ahead on a background thread (Dataset.prefetch);
    /// [`AUTOTUNE`] picks the size, and over an indexable pipeline also computes elements on every
    /// CPU (the functions of its maps must then tolerate concurrent calls).
    pub fn prefetch(&self, buffer_size: impl Into<i64>) -> Result<Dataset> {
        let n = buffer_size.into();
        self.derive("Dataset::prefetch", |ds, out| unsafe { sys::cairn_dataset_prefetch(ds, n, out) })
    }

    /// Prefetches and copies every component to `device` ("cpu", "vulkan:0") ahead of use
    /// (prefetch_to_device).
    pub fn prefetch_to_device(&self, device: &str, buffer_size: impl Into<i64>) -> Result<Dataset> {
        let n = buffer_size.into();
        let device = c_string(device, "Dataset::prefetch_to_device", "device")?;
        self.derive("Dataset::prefetch_to_device", |ds, out| unsafe {
            sys::cairn_dataset_prefetch_to_device(ds, device.as_ptr(), n, out)
        })
    }

    /// Caches the elements (Dataset.cache): in memory for `None`, else in the file `filename`
    /// (complete once the first full pass ends; later iterations read it).
    pub fn cache(&self, filename: Option<&Path>) -> Result<Dataset> {
        let filename = filename.map(|f| c_path(f, "Dataset::cache", "filename")).transpose()?;
        self.derive("Dataset::cache", |ds, out| unsafe {
            sys::cairn_dataset_cache(ds, filename.as_ref().map_or(ptr::null(), |f| f.as_ptr()), out)
        })
    }

    /// Elements of `datasets` side by side (Dataset.zip): the components of the first, then of
    /// the second, ...; it ends with the shortest. Component names must not repeat (rename with
    /// [`Dataset::select`]).
    pub fn zip(datasets: &[&Dataset]) -> Result<Dataset> {
        crate::check_abi()?;
        let raw: Vec<*const sys::cairn_dataset> = datasets.iter().map(|d| d.raw.as_ptr().cast_const()).collect();
        new_dataset("Dataset::zip", |out| unsafe { sys::cairn_dataset_zip(raw.as_ptr(), raw.len(), out) })
    }

    /// The elements of `self`, then those of `other` (Dataset.concatenate). The specs must have
    /// the same names, dtypes and ranks; dims that differ become -1.
    pub fn concatenate(&self, other: &Dataset) -> Result<Dataset> {
        self.derive("Dataset::concatenate", |ds, out| unsafe {
            sys::cairn_dataset_concatenate(ds, other.raw.as_ptr(), out)
        })
    }

    /// Prepends an int64 scalar component "index" counting from `start` (Dataset.enumerate).
    pub fn enumerate(&self, start: i64) -> Result<Dataset> {
        self.derive("Dataset::enumerate", |ds, out| unsafe { sys::cairn_dataset_enumerate(ds, start, out) })
    }

    /// Keeps the components `names`, in that order, renamed to `new_names` (`None`: the same).
    pub fn select(&self, names: &[&str], new_names: Option<&[&str]>) -> Result<Dataset> {
        let c_names = CStrings::from_strs(names, "Dataset::select", "component name")?;
        let c_new = new_names.map(|n| CStrings::from_strs(n, "Dataset::select", "new name")).transpose()?;
        if let Some(n) = &c_new {
            if n.len() != c_names.len() {
                return Err(Error::new(
                    Code::InvalidArgument,
                    format!("Dataset::select: {} new names for {} names", n.len(), c_names.len()),
                ));
            }
        }
        self.derive("Dataset::select", |ds, out| unsafe {
            sys::cairn_dataset_select(
                ds,
                c_names.as_ptr(),
                c_new.as_ref().map_or(ptr::null(), |n| n.as_ptr()),
                c_names.len(),
                out,
            )
        })
    }

    /// Parses the serialized tf.train.Example in `component` (a uint8 vector, one record) with
    /// `specs`; the component is replaced by the parsed outputs without the batch dimension,
    /// named `"<key>"` (fixed length) or `"<key>/indices"`, `"<key>/values"` (variable length).
    pub fn parse_example(&self, component: &str, specs: &[FeatureSpec]) -> Result<Dataset> {
        let component = c_string(component, "Dataset::parse_example", "component")?;
        let keys = feature_keys(specs, "Dataset::parse_example")?;
        let raw = raw_feature_specs(specs, &keys)?;
        self.derive("Dataset::parse_example", |ds, out| unsafe {
            sys::cairn_dataset_parse_example(ds, component.as_ptr(), raw.as_ptr(), raw.len(), out)
        })
    }

    /// A transformation of `self`: `run(self's handle, out)`.
    fn derive(
        &self,
        function: &str,
        run: impl FnOnce(*const sys::cairn_dataset, *mut *mut sys::cairn_dataset) -> *mut sys::cairn_status,
    ) -> Result<Dataset> {
        new_dataset(function, |out| run(self.raw.as_ptr(), out))
    }

    // ---- Running it ----

    /// An iterator from the first element. It is a tracked object (kind `ObjectKind::Iterator`):
    /// put it in a checkpoint beside the model to save and restore its position.
    pub fn iterate(&self) -> Result<DatasetIterator> {
        let mut out = ptr::null_mut();
        // SAFETY: a live dataset; `out` receives a new object handle.
        unsafe { check(sys::cairn_dataset_iterate(self.raw.as_ptr(), &mut out))? };
        let object = crate::Object::from_result(out, "cairn_dataset_iterate")?;
        Ok(DatasetIterator::new(object, self.component_names()?))
    }

    // ---- The element spec ----

    /// The number of components of each element.
    pub fn num_components(&self) -> usize {
        // SAFETY: a live handle (here and below).
        unsafe { sys::cairn_dataset_num_components(self.raw.as_ptr()) }
    }

    /// Component `index` of the element spec; OUT_OF_RANGE past the last.
    pub fn component(&self, index: usize) -> Result<ComponentSpec> {
        let (mut name, mut dtype, mut shape, mut rank) = (ptr::null(), 0, ptr::null(), 0);
        unsafe {
            check(sys::cairn_dataset_component(self.raw.as_ptr(), index, &mut name, &mut dtype, &mut shape, &mut rank))?
        };
        // SAFETY: borrowed from the dataset, which lives through these copies.
        let name =
            if name.is_null() { String::new() } else { unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned() };
        let shape = if rank == 0 || shape.is_null() {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(shape, rank) }.to_vec()
        };
        let dtype = DType::from_raw(dtype)
            .ok_or_else(|| Error::new(Code::Internal, format!("Dataset::component: unknown dtype {dtype}")))?;
        Ok(ComponentSpec { name, dtype, shape })
    }

    /// Every component of the element spec, in order.
    pub fn element_spec(&self) -> Result<Vec<ComponentSpec>> {
        (0..self.num_components()).map(|i| self.component(i)).collect()
    }

    pub(crate) fn component_names(&self) -> Result<Vec<String>> {
        Ok(self.element_spec()?.into_iter().map(|c| c.name).collect())
    }

    /// How many elements it has: a count, infinite (repeat forever) or unknown (after a filter).
    pub fn cardinality(&self) -> Cardinality {
        match unsafe { sys::cairn_dataset_cardinality(self.raw.as_ptr()) } {
            n if n >= 0 => Cardinality::Finite(n as u64),
            n if n == i64::from(sys::CAIRN_INFINITE_CARDINALITY) => Cardinality::Infinite,
            _ => Cardinality::Unknown,
        }
    }

    /// The pipeline as text, as errors name it: "range(0, 10, 1).map('f', parallel=4).batch(32)".
    pub fn describe(&self) -> Result<String> {
        take_string(|out| unsafe { sys::cairn_dataset_describe(self.raw.as_ptr(), out) })
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_dataset {
        self.raw.as_ptr()
    }

    /// Gives up ownership of the raw handle; the caller frees it with `cairn_dataset_free`.
    pub fn into_raw(self) -> *mut sys::cairn_dataset {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// Takes ownership of a raw handle.
    ///
    /// # Safety
    /// `raw` must be a live dataset handle that nothing else frees.
    pub unsafe fn from_raw(raw: NonNull<sys::cairn_dataset>) -> Dataset {
        Dataset { raw }
    }
}

impl Drop for Dataset {
    fn drop(&mut self) {
        // SAFETY: self owns the handle, and this is the only place it is freed.
        unsafe { sys::cairn_dataset_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.describe() {
            Ok(text) => write!(f, "Dataset({text})"),
            Err(_) => f.write_str("Dataset(?)"),
        }
    }
}
