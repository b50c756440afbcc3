//! Options of the dataset sources and transformations. Builders keep only what their caller set;
//! the rest comes from the library's `cairn_X_init` (the header's defaults).

use std::ffi::{c_char, CString};
use std::ptr;

use cairn_sys as sys;

use crate::error::c_string;
use crate::function::raw_specs;
use crate::options::{init, set_fields};
use crate::{Code, Compression, DType, Error, Result, TensorSpec};

use super::{CStrings, ComponentSpec};

/// Options of [`Dataset::csv`](super::Dataset::csv) (tf.data.experimental.CsvDataset):
/// `CsvOptions::new(&[DType::Int64, DType::Float32]).header(true).defaults(&[Some("0"), None])`.
#[derive(Clone, Debug)]
pub struct CsvOptions {
    column_dtypes: Vec<DType>,
    column_defaults: Option<Vec<Option<String>>>,
    column_names: Option<Vec<String>>,
    select_columns: Option<Vec<i64>>,
    header: Option<bool>,
    delimiter: Option<u8>,
    na_value: Option<String>,
}

impl CsvOptions {
    /// One dtype per output column: float32, float64, int32, int64, or `DType::String` (the
    /// field's bytes as a uint8 vector). Every column is required and named by the header (with
    /// [`CsvOptions::header`]) or "0", "1", ...; fields are separated by ','.
    pub fn new(column_dtypes: &[DType]) -> CsvOptions {
        CsvOptions {
            column_dtypes: column_dtypes.to_vec(),
            column_defaults: None,
            column_names: None,
            select_columns: None,
            header: None,
            delimiter: None,
            na_value: None,
        }
    }

    /// One per output column: the text an empty (or [`CsvOptions::na_value`]) field takes, or
    /// `None` to make the column required.
    pub fn defaults(mut self, defaults: &[Option<&str>]) -> Self {
        self.column_defaults = Some(defaults.iter().map(|d| d.map(str::to_string)).collect());
        self
    }

    /// The components' names, one per output column.
    pub fn column_names(mut self, names: &[&str]) -> Self {
        self.column_names = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    /// Reads only these file columns (increasing indexes, one per dtype).
    pub fn select_columns(mut self, columns: &[i64]) -> Self {
        self.select_columns = Some(columns.to_vec());
        self
    }

    /// Skips each file's first line and takes the names from it.
    pub fn header(mut self, on: bool) -> Self {
        self.header = Some(on);
        self
    }

    /// The field separator, one ASCII character.
    pub fn delimiter(mut self, delimiter: u8) -> Self {
        self.delimiter = Some(delimiter);
        self
    }

    /// A field that counts as missing (besides empty fields).
    pub fn na_value(mut self, na_value: &str) -> Self {
        self.na_value = Some(na_value.to_string());
        self
    }

    pub(super) fn raw(&self) -> Result<RawCsvOptions> {
        const F: &str = "Dataset::csv";
        let n = self.column_dtypes.len();
        let check_len = |len: usize, what: &str| {
            if len == n {
                Ok(())
            } else {
                Err(Error::new(Code::InvalidArgument, format!("{F}: {len} {what} for {n} column dtype(s)")))
            }
        };
        let dtypes: Vec<sys::cairn_dtype> = self.column_dtypes.iter().map(|d| d.to_raw()).collect();
        let defaults = match &self.column_defaults {
            Some(d) => {
                check_len(d.len(), "defaults")?;
                Some(
                    d.iter()
                        .map(|v| v.as_deref().map(|v| c_string(v, F, "default")).transpose())
                        .collect::<Result<Vec<_>>>()?,
                )
            }
            None => None,
        };
        let default_ptrs: Option<Vec<*const c_char>> =
            defaults.as_ref().map(|d| d.iter().map(|v| v.as_ref().map_or(ptr::null(), |v| v.as_ptr())).collect());
        let names = self.column_names.as_ref().map(|n| CStrings::from_strs(n, F, "column name")).transpose()?;
        if let Some(names) = &names {
            check_len(names.len(), "column names")?;
        }
        if let Some(columns) = &self.select_columns {
            check_len(columns.len(), "selected columns")?;
        }
        let na_value = self.na_value.as_deref().map(|v| c_string(v, F, "na_value")).transpose()?;
        let mut opts = init(sys::cairn_csv_options_init)?;
        opts.column_dtypes = dtypes.as_ptr();
        opts.n_columns = n;
        if let Some(p) = &default_ptrs {
            opts.column_defaults = p.as_ptr();
        }
        if let Some(names) = &names {
            opts.column_names = names.as_ptr();
        }
        if let Some(columns) = &self.select_columns {
            opts.select_columns = columns.as_ptr();
        }
        if let Some(h) = self.header {
            opts.header = i32::from(h);
        }
        if let Some(d) = self.delimiter {
            opts.delimiter = i32::from(d);
        }
        if let Some(v) = &na_value {
            opts.na_value = v.as_ptr();
        }
        Ok(RawCsvOptions { opts, _dtypes: dtypes, _defaults: (defaults, default_ptrs), _names: names, _na: na_value })
    }
}

/// A C csv options struct with what it points to.
pub(super) struct RawCsvOptions {
    pub(super) opts: sys::cairn_csv_options,
    _dtypes: Vec<sys::cairn_dtype>,
    _defaults: (Option<Vec<Option<CString>>>, Option<Vec<*const c_char>>),
    _names: Option<CStrings>,
    _na: Option<CString>,
}

/// Options of [`Dataset::tfrecord`](super::Dataset::tfrecord):
/// `TfRecordOptions::new().compression(Compression::Gzip).num_parallel_reads(4)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TfRecordOptions {
    compression: Option<Compression>,
    num_parallel_reads: Option<i32>,
    buffer_size: Option<u64>,
}

impl TfRecordOptions {
    /// The header's defaults: uncompressed, one file after another, 1 MiB reads.
    pub fn new() -> Self {
        Self::default()
    }

    /// The files' compression.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// Files read at once, interleaved one record each in a fixed order; or [`super::AUTOTUNE`].
    pub fn num_parallel_reads(mut self, n: i32) -> Self {
        self.num_parallel_reads = Some(n);
        self
    }

    /// Bytes per read.
    pub fn buffer_size(mut self, bytes: u64) -> Self {
        self.buffer_size = Some(bytes);
        self
    }

    pub(super) fn raw(&self) -> Result<sys::cairn_tfrecord_options> {
        let mut opts = init(sys::cairn_tfrecord_options_init)?;
        if let Some(c) = self.compression {
            opts.compression = c.to_raw();
        }
        set_fields!(opts, self, { num_parallel_reads, buffer_size });
        Ok(opts)
    }
}

/// Options of [`Dataset::map`](super::Dataset::map):
/// `MapOptions::new().num_parallel_calls(4).output_names(&["image", "label"])`.
#[derive(Clone, Debug, Default)]
pub struct MapOptions {
    num_parallel_calls: Option<i32>,
    deterministic: Option<bool>,
    compile: Option<bool>,
    output_names: Option<Vec<String>>,
    output_specs: Option<Vec<ComponentSpec>>,
    outputs: Option<usize>,
    seed: Option<i64>,
}

impl MapOptions {
    /// The header's defaults: one element at a time, in order, compiled, one output named "0".
    pub fn new() -> Self {
        Self::default()
    }

    /// Elements mapped at once on worker threads (N > 0, or [`super::AUTOTUNE`]); 0 maps one at a time.
    pub fn num_parallel_calls(mut self, n: i32) -> Self {
        self.num_parallel_calls = Some(n);
        self
    }

    /// Deliver in input order (default true).
    pub fn deterministic(mut self, on: bool) -> Self {
        self.deterministic = Some(on);
        self
    }

    /// `true` (default): trace the closure once per element spec and replay the graph; `false`:
    /// call it eagerly for every element, which needs [`MapOptions::output_specs`].
    pub fn compile(mut self, on: bool) -> Self {
        self.compile = Some(on);
        self
    }

    /// The output components' names (and so their count); default "0", "1", ...
    pub fn output_names(mut self, names: &[&str]) -> Self {
        self.output_names = Some(names.iter().map(|n| n.to_string()).collect());
        self
    }

    /// The output components' names, dtypes and shapes (required with `compile(false)`; when
    /// compiled they are otherwise taken from the trace).
    pub fn output_specs(mut self, specs: &[ComponentSpec]) -> Self {
        self.output_specs = Some(specs.to_vec());
        self
    }

    /// How many tensors the closure returns when neither names nor specs say; default 1.
    pub fn outputs(mut self, n: usize) -> Self {
        self.outputs = Some(n);
        self
    }

    /// The key of the closure's random ops that have seed 0 (default 0: the context's seed); each
    /// element's stream is keyed by (seed, epoch, element index).
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub(super) fn raw(&self) -> Result<RawMapOptions> {
        const F: &str = "Dataset::map";
        let names: Option<Vec<&str>> = match (&self.output_specs, &self.output_names) {
            (Some(_), Some(_)) => {
                return Err(Error::new(
                    Code::InvalidArgument,
                    format!("{F}: give output_names or output_specs, not both"),
                ))
            }
            (Some(specs), None) => Some(specs.iter().map(|s| s.name.as_str()).collect()),
            (None, Some(names)) => Some(names.iter().map(String::as_str).collect()),
            (None, None) => None,
        };
        let n = names.as_ref().map_or(self.outputs.unwrap_or(1), Vec::len);
        if let (Some(given), Some(names)) = (self.outputs, &names) {
            if given != names.len() {
                return Err(Error::new(
                    Code::InvalidArgument,
                    format!("{F}: outputs({given}) but {} output names or specs", names.len()),
                ));
            }
        }
        let names = names.map(|n| CStrings::from_strs(&n, F, "output name")).transpose()?;
        let specs: Option<Vec<TensorSpec>> =
            self.output_specs.as_ref().map(|s| s.iter().map(ComponentSpec::tensor_spec).collect());
        let c_specs = specs.as_ref().map(|s| raw_specs(s.iter())).transpose()?;
        let mut opts = init(sys::cairn_map_options_init)?;
        set_fields!(opts, self, { num_parallel_calls, seed });
        if let Some(d) = self.deterministic {
            opts.deterministic = i32::from(d);
        }
        if let Some(c) = self.compile {
            opts.compile = i32::from(c);
        }
        if let Some(names) = &names {
            opts.output_names = names.as_ptr();
        }
        if let Some(s) = &c_specs {
            opts.output_specs = s.as_ptr();
        }
        opts.n_outputs = n;
        Ok(RawMapOptions { opts, _names: names, _specs: (specs, c_specs) })
    }
}

/// A C map options struct with what it points to.
pub(super) struct RawMapOptions {
    pub(super) opts: sys::cairn_map_options,
    _names: Option<CStrings>,
    _specs: (Option<Vec<TensorSpec>>, Option<Vec<sys::cairn_tensor_spec>>),
}

/// Options of [`Dataset::filter`](super::Dataset::filter).
#[derive(Clone, Copy, Debug, Default)]
pub struct FilterOptions {
    compile: Option<bool>,
    seed: Option<i64>,
}

impl FilterOptions {
    /// The header's defaults: compiled, seed 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// As [`MapOptions::compile`].
    pub fn compile(mut self, on: bool) -> Self {
        self.compile = Some(on);
        self
    }

    /// As [`MapOptions::seed`].
    pub fn seed(mut self, seed: i64) -> Self {
        self.seed = Some(seed);
        self
    }

    pub(super) fn raw(&self) -> Result<sys::cairn_filter_options> {
        let mut opts = init(sys::cairn_filter_options_init)?;
        if let Some(c) = self.compile {
            opts.compile = i32::from(c);
        }
        set_fields!(opts, self, { seed });
        Ok(opts)
    }
}

/// Options of [`Dataset::interleave`](super::Dataset::interleave):
/// `InterleaveOptions::new().cycle_length(2).block_length(1).num_parallel_calls(2)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct InterleaveOptions {
    cycle_length: Option<i32>,
    block_length: Option<i32>,
    num_parallel_calls: Option<i32>,
    deterministic: Option<bool>,
}

impl InterleaveOptions {
    /// The header's defaults: cycle length [`super::AUTOTUNE`] (the CPUs), block length 1, no
    /// read-ahead, deterministic.
    pub fn new() -> Self {
        Self::default()
    }

    /// Inner datasets open at once.
    pub fn cycle_length(mut self, n: i32) -> Self {
        self.cycle_length = Some(n);
        self
    }

    /// Consecutive elements from each before moving on.
    pub fn block_length(mut self, n: i32) -> Self {
        self.block_length = Some(n);
        self
    }

    /// Inner datasets read ahead in parallel.
    pub fn num_parallel_calls(mut self, n: i32) -> Self {
        self.num_parallel_calls = Some(n);
        self
    }

    /// The fixed round-robin order (default true).
    pub fn deterministic(mut self, on: bool) -> Self {
        self.deterministic = Some(on);
        self
    }

    pub(super) fn raw(&self) -> Result<sys::cairn_interleave_options> {
        let mut opts = init(sys::cairn_interleave_options_init)?;
        set_fields!(opts, self, { cycle_length, block_length, num_parallel_calls });
        if let Some(d) = self.deterministic {
            opts.deterministic = i32::from(d);
        }
        Ok(opts)
    }
}
