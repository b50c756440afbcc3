//! tf.train.Example and SequenceExample: build, serialize, parse and read back features, and parse
//! batches of serialized records straight into tensors (tf.io.parse_example,
//! tf.io.parse_sequence_example). docs/example.md has the details.
//!
//! ```
//! use cairn::{Example, Feature};
//! # fn main() -> cairn::Result<()> {
//! let mut ex = Example::new()?;
//! ex.set_int64s("label", &[7])?;
//! ex.set_floats("pixels", &[0.0, 0.5, 1.0])?;
//! let bytes = ex.serialize()?;
//! let back = Example::parse(&bytes)?;
//! assert_eq!(back.feature("label")?, Feature::Int64s(vec![7]));
//! assert_eq!(back.keys(), ["label", "pixels"]);
//! # Ok(())
//! # }
//! ```

use std::ffi::{c_char, c_void, CStr, CString};
use std::fmt;
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::error::{c_string, check};
use crate::options::init;
use crate::{Code, Context, DType, Error, ExampleKind, FeatureKind, FeatureSpecKind, Result, Tensor};

/// cairn.h's `CAIRN_EXAMPLE_NO_STEP`: a feature rather than a step of a feature list.
const NO_STEP: i64 = -1;

/// The values of one feature (or of one step of a feature list).
#[derive(Clone, Debug, PartialEq)]
pub enum Feature {
    /// A Feature with no list set (reads as an empty list of any dtype).
    None,
    /// bytes_list: byte strings (any bytes, NUL included).
    Bytes(Vec<Vec<u8>>),
    /// float_list.
    Floats(Vec<f32>),
    /// int64_list.
    Int64s(Vec<i64>),
}

/// A tf.train.Example (features) or tf.train.SequenceExample (context features and feature
/// lists) being built or read. `Send + Sync`: reads may run on several threads at once; the
/// setters take `&mut self`.
pub struct Example {
    raw: NonNull<sys::cairn_example>,
}

// SAFETY: cairn.h: "a cairn_example may be read from several threads at once; a write (set,
// append) needs the example to itself" — writes take &mut self.
unsafe impl Send for Example {}
unsafe impl Sync for Example {}

impl Example {
    /// An empty tf.train.Example.
    pub fn new() -> Result<Example> {
        Example::create(ExampleKind::Example)
    }

    /// An empty tf.train.SequenceExample.
    pub fn new_sequence() -> Result<Example> {
        Example::create(ExampleKind::SequenceExample)
    }

    fn create(kind: ExampleKind) -> Result<Example> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: `out` receives a new example.
        unsafe { check(sys::cairn_example_create(kind.to_raw(), &mut out))? };
        Example::from_raw_result(out, "cairn_example_create")
    }

    /// Parses a serialized tf.train.Example. DATA_LOSS for malformed bytes, naming the offset.
    pub fn parse(bytes: &[u8]) -> Result<Example> {
        Example::parse_kind(ExampleKind::Example, bytes)
    }

    /// Parses a serialized tf.train.SequenceExample.
    pub fn parse_sequence(bytes: &[u8]) -> Result<Example> {
        Example::parse_kind(ExampleKind::SequenceExample, bytes)
    }

    fn parse_kind(kind: ExampleKind, bytes: &[u8]) -> Result<Example> {
        crate::check_abi()?;
        let mut out = ptr::null_mut();
        // SAFETY: `bytes` is borrowed for the call; `out` receives a new example.
        unsafe { check(sys::cairn_example_parse(kind.to_raw(), bytes.as_ptr().cast(), bytes.len(), &mut out))? };
        Example::from_raw_result(out, "cairn_example_parse")
    }

    fn from_raw_result(out: *mut sys::cairn_example, function: &str) -> Result<Example> {
        NonNull::new(out)
            .map(|raw| Example { raw })
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but no example")))
    }

    /// Which message this is.
    pub fn kind(&self) -> ExampleKind {
        // SAFETY: a live example (here and below).
        ExampleKind::from_raw(unsafe { sys::cairn_example_get_kind(self.raw.as_ptr()) }).unwrap_or(ExampleKind::Example)
    }

    /// Sets feature `key` (a context feature of a SequenceExample) to int64s, replacing what it held.
    pub fn set_int64s(&mut self, key: &str, values: &[i64]) -> Result<()> {
        let key = c_string(key, "Example::set_int64s", "key")?;
        unsafe { check(sys::cairn_example_set_int64s(self.raw.as_ptr(), key.as_ptr(), values.as_ptr(), values.len())) }
    }

    /// Sets feature `key` to floats.
    pub fn set_floats(&mut self, key: &str, values: &[f32]) -> Result<()> {
        let key = c_string(key, "Example::set_floats", "key")?;
        unsafe { check(sys::cairn_example_set_floats(self.raw.as_ptr(), key.as_ptr(), values.as_ptr(), values.len())) }
    }

    /// Sets feature `key` to byte strings (`&[&[u8]]`, `&[&str]`, `&[Vec<u8>]`, ...).
    pub fn set_bytes<B: AsRef<[u8]>>(&mut self, key: &str, values: &[B]) -> Result<()> {
        let key = c_string(key, "Example::set_bytes", "key")?;
        let (ptrs, lens) = byte_arrays(values);
        unsafe {
            check(sys::cairn_example_set_bytes(
                self.raw.as_ptr(),
                key.as_ptr(),
                ptrs.as_ptr(),
                lens.as_ptr(),
                values.len(),
            ))
        }
    }

    /// Appends one step of int64s to feature list `key` of a SequenceExample (creating the list).
    /// INVALID_ARGUMENT for an Example.
    pub fn append_step_int64s(&mut self, key: &str, values: &[i64]) -> Result<()> {
        let key = c_string(key, "Example::append_step_int64s", "key")?;
        unsafe {
            check(sys::cairn_example_append_step_int64s(self.raw.as_ptr(), key.as_ptr(), values.as_ptr(), values.len()))
        }
    }

    /// Appends one step of floats to feature list `key`.
    pub fn append_step_floats(&mut self, key: &str, values: &[f32]) -> Result<()> {
        let key = c_string(key, "Example::append_step_floats", "key")?;
        unsafe {
            check(sys::cairn_example_append_step_floats(self.raw.as_ptr(), key.as_ptr(), values.as_ptr(), values.len()))
        }
    }

    /// Appends one step of byte strings to feature list `key`.
    pub fn append_step_bytes<B: AsRef<[u8]>>(&mut self, key: &str, values: &[B]) -> Result<()> {
        let key = c_string(key, "Example::append_step_bytes", "key")?;
        let (ptrs, lens) = byte_arrays(values);
        unsafe {
            check(sys::cairn_example_append_step_bytes(
                self.raw.as_ptr(),
                key.as_ptr(),
                ptrs.as_ptr(),
                lens.as_ptr(),
                values.len(),
            ))
        }
    }

    /// The protobuf encoding: keys sorted, lists packed, the bytes of protobuf's deterministic
    /// serialization.
    pub fn serialize(&self) -> Result<Vec<u8>> {
        let (mut out, mut n): (*mut c_char, usize) = (ptr::null_mut(), 0);
        // SAFETY: on success `out` holds `n` bytes we free with cairn_free.
        unsafe {
            check(sys::cairn_example_serialize(self.raw.as_ptr(), &mut out, &mut n))?;
            let bytes = if n == 0 { Vec::new() } else { std::slice::from_raw_parts(out.cast::<u8>(), n).to_vec() };
            sys::cairn_free(out.cast());
            Ok(bytes)
        }
    }

    /// The features' keys (context features of a SequenceExample), sorted bytewise.
    pub fn keys(&self) -> Vec<String> {
        let n = unsafe { sys::cairn_example_feature_count(self.raw.as_ptr()) };
        (0..n).filter_map(|i| borrowed_str(unsafe { sys::cairn_example_feature_key(self.raw.as_ptr(), i) })).collect()
    }

    /// The feature lists' keys of a SequenceExample, sorted; empty for an Example.
    pub fn feature_list_keys(&self) -> Vec<String> {
        let n = unsafe { sys::cairn_example_feature_list_count(self.raw.as_ptr()) };
        (0..n)
            .filter_map(|i| borrowed_str(unsafe { sys::cairn_example_feature_list_key(self.raw.as_ptr(), i) }))
            .collect()
    }

    /// How many steps feature list `key` has. NOT_FOUND naming the key.
    pub fn steps(&self, key: &str) -> Result<usize> {
        let key = c_string(key, "Example::steps", "key")?;
        let mut n = 0;
        unsafe { check(sys::cairn_example_feature_list_steps(self.raw.as_ptr(), key.as_ptr(), &mut n))? };
        Ok(n)
    }

    /// The values of feature `key` (a context feature of a SequenceExample). NOT_FOUND naming the key.
    pub fn feature(&self, key: &str) -> Result<Feature> {
        self.values(key, NO_STEP)
    }

    /// The values of step `step` of feature list `key`. NOT_FOUND naming the key; OUT_OF_RANGE
    /// for a step past the list's end.
    pub fn step(&self, key: &str, step: usize) -> Result<Feature> {
        self.values(key, i64::try_from(step).unwrap_or(i64::MAX))
    }

    fn values(&self, key: &str, step: i64) -> Result<Feature> {
        let key = c_string(key, "Example::feature", "key")?;
        let mut v = init(sys::cairn_feature_values_init)?;
        // SAFETY: a live example; the pointers in `v` are borrowed from it while `&self` is, and
        // copied before returning.
        unsafe {
            check(sys::cairn_example_values(self.raw.as_ptr(), key.as_ptr(), step, &mut v))?;
            Ok(match FeatureKind::from_raw(v.kind) {
                Some(FeatureKind::Float) => Feature::Floats(copy(v.floats, v.count)),
                Some(FeatureKind::Int64) => Feature::Int64s(copy(v.int64s, v.count)),
                Some(FeatureKind::Bytes) => {
                    Feature::Bytes((0..v.count).map(|i| self.bytes_at(&key, step, i)).collect::<Result<_>>()?)
                }
                _ => Feature::None,
            })
        }
    }

    fn bytes_at(&self, key: &CString, step: i64, index: usize) -> Result<Vec<u8>> {
        let (mut data, mut n): (*const c_void, usize) = (ptr::null(), 0);
        // SAFETY: the string is borrowed from the example; copied at once.
        unsafe {
            check(sys::cairn_example_bytes(self.raw.as_ptr(), key.as_ptr(), step, index, &mut data, &mut n))?;
            Ok(copy(data.cast::<u8>(), n))
        }
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_example {
        self.raw.as_ptr()
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed only here.
        unsafe { sys::cairn_example_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for Example {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Example")
            .field("kind", &self.kind())
            .field("keys", &self.keys())
            .field("feature_lists", &self.feature_list_keys())
            .finish()
    }
}

/// One feature to parse from each record of a batch (tf.io.FixedLenFeature, VarLenFeature,
/// FixedLenSequenceFeature and a ragged sequence feature). dtype `Float32` reads float lists,
/// `Int64` int64 lists and `Uint8` byte lists (the bytes of the feature's strings concatenated).
#[derive(Debug)]
pub struct FeatureSpec {
    key: String,
    kind: FeatureSpecKind,
    dtype: DType,
    shape: Vec<i64>,
    default_value: Option<Tensor>,
}

impl FeatureSpec {
    fn new(key: &str, kind: FeatureSpecKind, dtype: DType, shape: &[i64]) -> FeatureSpec {
        FeatureSpec { key: key.to_string(), kind, dtype, shape: shape.to_vec(), default_value: None }
    }

    /// `shape` values per record: gives [`Parsed::FixedLen`] with values `[batch, shape...]`.
    pub fn fixed_len(key: &str, dtype: DType, shape: &[i64]) -> FeatureSpec {
        FeatureSpec::new(key, FeatureSpecKind::FixedLen, dtype, shape)
    }

    /// Any number of values per record: gives [`Parsed::VarLen`].
    pub fn var_len(key: &str, dtype: DType) -> FeatureSpec {
        FeatureSpec::new(key, FeatureSpecKind::VarLen, dtype, &[])
    }

    /// A feature list of `shape` values per step (SequenceExamples): gives
    /// [`Parsed::FixedLenSequence`].
    pub fn fixed_len_sequence(key: &str, dtype: DType, shape: &[i64]) -> FeatureSpec {
        FeatureSpec::new(key, FeatureSpecKind::FixedLenSequence, dtype, shape)
    }

    /// A feature list of any number of values per step: gives [`Parsed::VarLenSequence`].
    pub fn var_len_sequence(key: &str, dtype: DType) -> FeatureSpec {
        FeatureSpec::new(key, FeatureSpecKind::VarLenSequence, dtype, &[])
    }

    /// FixedLen: the value of a missing feature (without one, missing is INVALID_ARGUMENT).
    /// FixedLenSequence: the padding after a record's last step (default zeros). The spec's
    /// dtype, with one element (repeated) or the shape's element count.
    pub fn default_value(mut self, value: Tensor) -> FeatureSpec {
        self.default_value = Some(value);
        self
    }

    /// The spec's kind.
    pub fn kind(&self) -> FeatureSpecKind {
        self.kind
    }
}

/// The tensors parsed for one [`FeatureSpec`] (CPU tensors).
#[derive(Debug)]
pub enum Parsed {
    /// `values` `[batch, shape...]`.
    FixedLen {
        /// The values.
        values: Tensor,
    },
    /// `values` `[total]` and int64 `row_lengths` `[batch]`.
    VarLen {
        /// Every record's values, concatenated.
        values: Tensor,
        /// How many values each record has.
        row_lengths: Tensor,
    },
    /// `values` `[batch, max_steps, shape...]` padded with the default, int64 `lengths` `[batch]`.
    FixedLenSequence {
        /// The values, padded.
        values: Tensor,
        /// Each record's step count.
        lengths: Tensor,
    },
    /// `values` `[total]`, int64 `step_lengths` `[total_steps]` and int64 `steps` `[batch]`.
    VarLenSequence {
        /// Every step's values, concatenated.
        values: Tensor,
        /// How many values each step has.
        step_lengths: Tensor,
        /// Each record's step count.
        steps: Tensor,
    },
}

impl Parsed {
    /// The values tensor, whatever the kind.
    pub fn values(&self) -> &Tensor {
        match self {
            Parsed::FixedLen { values }
            | Parsed::VarLen { values, .. }
            | Parsed::FixedLenSequence { values, .. }
            | Parsed::VarLenSequence { values, .. } => values,
        }
    }

    /// Every tensor, in the C API's output order.
    pub fn into_tensors(self) -> Vec<Tensor> {
        match self {
            Parsed::FixedLen { values } => vec![values],
            Parsed::VarLen { values, row_lengths } => vec![values, row_lengths],
            Parsed::FixedLenSequence { values, lengths } => vec![values, lengths],
            Parsed::VarLenSequence { values, step_lengths, steps } => vec![values, step_lengths, steps],
        }
    }
}

/// Parses serialized tf.train.Examples into tensors, as tf.io.parse_example does, on the
/// context's thread pool: one [`Parsed`] per spec (FixedLen and VarLen specs, distinct keys), in
/// spec order. DATA_LOSS for a malformed record; INVALID_ARGUMENT for a bad spec, a missing
/// feature without default, a wrong value count or a dtype mismatch, naming the record and key.
pub fn parse_examples<R: AsRef<[u8]>>(ctx: &Context, records: &[R], specs: &[FeatureSpec]) -> Result<Vec<Parsed>> {
    parse_batch(ctx, records, specs, false)
}

/// Parses serialized tf.train.SequenceExamples, as tf.io.parse_sequence_example does: FixedLen
/// and VarLen specs read context features, the sequence specs read feature lists (a missing list
/// has 0 steps).
pub fn parse_sequence_examples<R: AsRef<[u8]>>(
    ctx: &Context,
    records: &[R],
    specs: &[FeatureSpec],
) -> Result<Vec<Parsed>> {
    parse_batch(ctx, records, specs, true)
}

/// The specs' keys as C strings, for [`raw_feature_specs`].
pub(crate) fn feature_keys(specs: &[FeatureSpec], function: &str) -> Result<Vec<CString>> {
    specs.iter().map(|s| c_string(&s.key, function, "key")).collect()
}

/// C feature specs for `specs`, borrowing `keys` (from [`feature_keys`]), shapes and defaults.
pub(crate) fn raw_feature_specs(specs: &[FeatureSpec], keys: &[CString]) -> Result<Vec<sys::cairn_feature_spec>> {
    specs
        .iter()
        .zip(keys)
        .map(|(s, key)| {
            let mut raw = init(sys::cairn_feature_spec_init)?;
            raw.key = key.as_ptr();
            raw.kind = s.kind.to_raw();
            raw.dtype = s.dtype.to_raw();
            raw.shape = if s.shape.is_empty() { ptr::null() } else { s.shape.as_ptr() };
            raw.rank = s.shape.len();
            raw.default_value = s.default_value.as_ref().map_or(ptr::null(), |t| t.as_raw());
            Ok(raw)
        })
        .collect()
}

fn parse_batch<R: AsRef<[u8]>>(
    ctx: &Context,
    records: &[R],
    specs: &[FeatureSpec],
    sequence: bool,
) -> Result<Vec<Parsed>> {
    let function = if sequence { "parse_sequence_examples" } else { "parse_examples" };
    let keys = feature_keys(specs, function)?;
    let raw_specs = raw_feature_specs(specs, &keys)?;
    let mut n_outputs = 0;
    // SAFETY: the specs, their keys, shapes and defaults live for the calls below.
    unsafe { check(sys::cairn_parse_num_outputs(raw_specs.as_ptr(), raw_specs.len(), &mut n_outputs))? };
    let (ptrs, lens) = byte_arrays(records);
    let mut outputs: Vec<*mut sys::cairn_tensor> = vec![ptr::null_mut(); n_outputs];
    let parse = if sequence { sys::cairn_parse_sequence_examples } else { sys::cairn_parse_examples };
    // SAFETY: `records.len()` records borrowed for the call; `outputs` has the slots it fills.
    unsafe {
        check(parse(
            ctx.as_raw(),
            ptrs.as_ptr(),
            lens.as_ptr(),
            records.len(),
            raw_specs.as_ptr(),
            raw_specs.len(),
            outputs.as_mut_ptr(),
            n_outputs,
        ))?
    };
    // Own every output first, so that all are freed whatever happens next.
    // SAFETY: each non-NULL slot is a new tensor the caller owns.
    let owned: Vec<Option<Tensor>> =
        outputs.into_iter().map(|t| NonNull::new(t).map(|t| unsafe { Tensor::from_raw(t) })).collect();
    let mut tensors = owned.into_iter().flatten();
    let mut next = || {
        tensors
            .next()
            .ok_or_else(|| Error::new(Code::Internal, format!("{function}: returned success but not every output")))
    };
    specs
        .iter()
        .map(|s| {
            Ok(match s.kind {
                FeatureSpecKind::FixedLen => Parsed::FixedLen { values: next()? },
                FeatureSpecKind::VarLen => Parsed::VarLen { values: next()?, row_lengths: next()? },
                FeatureSpecKind::FixedLenSequence => Parsed::FixedLenSequence { values: next()?, lengths: next()? },
                FeatureSpecKind::VarLenSequence => {
                    Parsed::VarLenSequence { values: next()?, step_lengths: next()?, steps: next()? }
                }
            })
        })
        .collect()
}

/// The pointer and length arrays of the C API's byte-string lists.
fn byte_arrays<B: AsRef<[u8]>>(values: &[B]) -> (Vec<*const c_void>, Vec<usize>) {
    values.iter().map(|v| (v.as_ref().as_ptr().cast::<c_void>(), v.as_ref().len())).unzip()
}

/// A copy of `n` values at `p` (NULL allowed when n is 0).
///
/// # Safety
/// `p` points to `n` live values when n > 0.
unsafe fn copy<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    if n == 0 || p.is_null() {
        Vec::new()
    } else {
        std::slice::from_raw_parts(p, n).to_vec()
    }
}

/// A copy of a borrowed C string; None for NULL.
fn borrowed_str(p: *const c_char) -> Option<String> {
    // SAFETY: NULL or a live NUL-terminated string borrowed from the example.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}
