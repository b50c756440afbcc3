//! Summaries (tf.summary): TensorBoard event files. A [`SummaryWriter`] owns one event file in its
//! log directory, named as TensorFlow 2 names them; summary calls queue the event and return, and
//! a background thread writes it (on [`SummaryWriter::flush`], on close and every flush_millis).
//! Open the log directory with `tensorboard --logdir DIR`. docs/summaries.md has the details.
//!
//! Each summary is a method of the writer, and a function of this module with the same name
//! writes to the process-wide default writer ([`SummaryWriter::set_default`]) as tf.summary does:
//! with none set it writes nothing and succeeds. `step` `None` means the default step
//! ([`set_step`]); with none set, INVALID_ARGUMENT naming the tag.
//!
//! The tensor forms (`scalar_tensor`, `histogram`, `image`, `audio`) run as ops: inside a compiled
//! [`crate::Function`] they are recorded and write on every call, reading the default step when it
//! runs.
//!
//! ```no_run
//! use cairn::summary::{self, SummaryWriter, SummaryWriterOptions};
//! # fn main() -> cairn::Result<()> {
//! let writer = SummaryWriter::create("logs/run1", SummaryWriterOptions::new())?;
//! for step in 1..=3 {
//!     writer.scalar("loss", 1.0 / step as f64, Some(step))?;
//! }
//! writer.set_default(); // tf.summary's `with writer.as_default()`
//! summary::set_step(Some(4));
//! summary::text("note", "written to the default writer at step 4", None)?;
//! writer.close()?;
//! # Ok(())
//! # }
//! ```

use std::ffi::c_char;
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::checkpoint::{c_path, take_c_path};
use crate::error::{c_string, check};
use crate::options::init;
use crate::{Code, Context, Error, Function, Result, Tensor};

/// Options of [`SummaryWriter::create`] (tf.summary.create_file_writer's); unset fields keep
/// cairn.h's defaults: max_queue 10, flush_millis 1000, filename suffix ".v2".
#[derive(Clone, Debug, Default)]
pub struct SummaryWriterOptions {
    max_queue: Option<i64>,
    flush_millis: Option<i64>,
    filename_suffix: Option<String>,
}

impl SummaryWriterOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Events pending before the writer thread writes them (>= 1).
    pub fn max_queue(mut self, n: i64) -> Self {
        self.max_queue = Some(n);
        self
    }

    /// The flush timer in milliseconds; 0 flushes only on flush and close.
    pub fn flush_millis(mut self, ms: i64) -> Self {
        self.flush_millis = Some(ms);
        self
    }

    /// Appended to the file name (a "." is put before it when missing).
    pub fn filename_suffix(mut self, suffix: impl Into<String>) -> Self {
        self.filename_suffix = Some(suffix.into());
        self
    }
}

/// A summary writer (tf.summary.create_file_writer). Dropping it frees the handle; the writer
/// closes when no handle and no default-writer setting refers to it (errors of that close are
/// lost: call [`SummaryWriter::close`] to see them). `Send + Sync`: a writer may be used from
/// several threads at once.
pub struct SummaryWriter {
    raw: NonNull<sys::cairn_summary_writer>,
}

// SAFETY: cairn.h: "a writer may be used from several threads at once".
unsafe impl Send for SummaryWriter {}
unsafe impl Sync for SummaryWriter {}

impl SummaryWriter {
    /// A writer for `logdir` (created with its parents) with a new event file. INVALID_ARGUMENT
    /// for bad options; FAILED_PRECONDITION naming the directory when it cannot be created.
    pub fn create(logdir: impl AsRef<Path>, options: SummaryWriterOptions) -> Result<SummaryWriter> {
        let mut raw_opts = init(sys::cairn_summary_writer_options_init)?;
        let suffix = options
            .filename_suffix
            .as_deref()
            .map(|s| c_string(s, "SummaryWriter::create", "filename_suffix"))
            .transpose()?;
        if let Some(s) = &suffix {
            raw_opts.filename_suffix = s.as_ptr();
        }
        if let Some(n) = options.max_queue {
            raw_opts.max_queue = n;
        }
        if let Some(ms) = options.flush_millis {
            raw_opts.flush_millis = ms;
        }
        let dir = c_path(logdir.as_ref(), "SummaryWriter::create", "logdir")?;
        let mut out = ptr::null_mut();
        // SAFETY: the directory, options and suffix are borrowed for the call.
        unsafe { check(sys::cairn_summary_writer_create(dir.as_ptr(), &raw_opts, &mut out))? };
        NonNull::new(out)
            .map(|raw| SummaryWriter { raw })
            .ok_or_else(|| Error::new(Code::Internal, "cairn_summary_writer_create: returned success but no writer"))
    }

    /// Writes every queued event and pushes the file to the operating system. A pending error of
    /// the background thread; FAILED_PRECONDITION after close.
    pub fn flush(&self) -> Result<()> {
        // SAFETY: a live writer (here and below).
        unsafe { check(sys::cairn_summary_writer_flush(self.raw.as_ptr())) }
    }

    /// Flushes, stops the writer thread and closes the file; later summary calls on this writer
    /// fail with FAILED_PRECONDITION. Closing twice is fine.
    pub fn close(&self) -> Result<()> {
        unsafe { check(sys::cairn_summary_writer_close(self.raw.as_ptr())) }
    }

    /// The path of the event file being written.
    pub fn path(&self) -> Result<PathBuf> {
        let mut out = ptr::null_mut();
        // SAFETY: `out` receives a string we free.
        unsafe {
            check(sys::cairn_summary_writer_path(self.raw.as_ptr(), &mut out))?;
            Ok(take_c_path(out))
        }
    }

    /// Makes this writer the process-wide default (tf.summary's `with writer.as_default()`),
    /// holding a reference to it until replaced or [`SummaryWriter::clear_default`].
    pub fn set_default(&self) {
        unsafe { sys::cairn_summary_writer_set_default(self.raw.as_ptr()) }
    }

    /// Clears the process-wide default writer.
    pub fn clear_default() {
        if crate::check_abi().is_ok() {
            // SAFETY: NULL clears the setting.
            unsafe { sys::cairn_summary_writer_set_default(ptr::null_mut()) }
        }
    }

    /// tf.summary.scalar from a host value (a float32 scalar). Not recorded inside compiled
    /// functions: use [`SummaryWriter::scalar_tensor`] there.
    pub fn scalar(&self, tag: &str, value: f64, step: Option<i64>) -> Result<()> {
        scalar_to(self.raw.as_ptr(), tag, value, step)
    }

    /// tf.summary.text.
    pub fn text(&self, tag: &str, text: &str, step: Option<i64>) -> Result<()> {
        text_to(self.raw.as_ptr(), tag, text, step)
    }

    /// tf.summary.scalar from a rank-0 tensor of a real dtype or bool. INVALID_ARGUMENT naming the
    /// tag for another rank or dtype.
    pub fn scalar_tensor(&self, ctx: &Context, tag: &str, t: &Tensor, step: Option<i64>) -> Result<()> {
        scalar_tensor_to(self.raw.as_ptr(), ctx, tag, t, step)
    }

    /// tf.summary.histogram: `buckets` equal-width buckets (0 gives TF2's default of 30).
    pub fn histogram(&self, ctx: &Context, tag: &str, t: &Tensor, buckets: usize, step: Option<i64>) -> Result<()> {
        histogram_to(self.raw.as_ptr(), ctx, tag, t, buckets, step)
    }

    /// tf.summary.image: a `[k, height, width, channels]` batch (1, 3 or 4 channels; uint8, or
    /// float in [0, 1]); the first `max_outputs` images (`None`: 3) as PNGs.
    pub fn image(
        &self,
        ctx: &Context,
        tag: &str,
        images: &Tensor,
        max_outputs: Option<usize>,
        step: Option<i64>,
    ) -> Result<()> {
        image_to(self.raw.as_ptr(), ctx, tag, images, max_outputs, step)
    }

    /// tf.summary.audio: a `[k, frames, channels]` float batch in [-1, 1]; the first
    /// `max_outputs` clips (`None`: 3) as 16-bit WAV at `sample_rate` Hz.
    pub fn audio(
        &self,
        ctx: &Context,
        tag: &str,
        audio: &Tensor,
        sample_rate: f64,
        max_outputs: Option<usize>,
        step: Option<i64>,
    ) -> Result<()> {
        audio_to(self.raw.as_ptr(), ctx, tag, audio, sample_rate, max_outputs, step)
    }

    /// tf.summary.graph: the graph of trace `index` of `function` as a binary GraphDef, which
    /// TensorBoard's graph dashboard draws. OUT_OF_RANGE for an index past the traces.
    pub fn graph(&self, function: &Function<'_>, index: usize, step: Option<i64>) -> Result<()> {
        graph_to(self.raw.as_ptr(), function, index, step)
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_summary_writer {
        self.raw.as_ptr()
    }
}

impl Drop for SummaryWriter {
    fn drop(&mut self) {
        // SAFETY: self owns this handle; it is freed only here.
        unsafe { sys::cairn_summary_writer_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for SummaryWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SummaryWriter").field("path", &self.path().unwrap_or_default()).finish()
    }
}

/// Sets the process-wide default step (tf.summary.experimental.set_step); `None` unsets it.
pub fn set_step(step: Option<i64>) {
    if crate::check_abi().is_ok() {
        // SAFETY: a plain value.
        unsafe { sys::cairn_summary_set_step(raw_step(step)) }
    }
}

/// The process-wide default step; `None` when unset.
pub fn step() -> Option<i64> {
    crate::check_abi().ok()?;
    // SAFETY: no arguments.
    let s = unsafe { sys::cairn_summary_step() };
    (s != DEFAULT_STEP).then_some(s)
}

/// [`SummaryWriter::scalar`] to the default writer.
pub fn scalar(tag: &str, value: f64, step: Option<i64>) -> Result<()> {
    scalar_to(ptr::null_mut(), tag, value, step)
}

/// [`SummaryWriter::text`] to the default writer.
pub fn text(tag: &str, text: &str, step: Option<i64>) -> Result<()> {
    text_to(ptr::null_mut(), tag, text, step)
}

/// [`SummaryWriter::scalar_tensor`] to the default writer (the one set when it runs).
pub fn scalar_tensor(ctx: &Context, tag: &str, t: &Tensor, step: Option<i64>) -> Result<()> {
    scalar_tensor_to(ptr::null_mut(), ctx, tag, t, step)
}

/// [`SummaryWriter::histogram`] to the default writer.
pub fn histogram(ctx: &Context, tag: &str, t: &Tensor, buckets: usize, step: Option<i64>) -> Result<()> {
    histogram_to(ptr::null_mut(), ctx, tag, t, buckets, step)
}

/// [`SummaryWriter::image`] to the default writer.
pub fn image(ctx: &Context, tag: &str, images: &Tensor, max_outputs: Option<usize>, step: Option<i64>) -> Result<()> {
    image_to(ptr::null_mut(), ctx, tag, images, max_outputs, step)
}

/// [`SummaryWriter::audio`] to the default writer.
pub fn audio(
    ctx: &Context,
    tag: &str,
    audio: &Tensor,
    sample_rate: f64,
    max_outputs: Option<usize>,
    step: Option<i64>,
) -> Result<()> {
    audio_to(ptr::null_mut(), ctx, tag, audio, sample_rate, max_outputs, step)
}

/// [`SummaryWriter::graph`] to the default writer.
pub fn graph(function: &Function<'_>, index: usize, step: Option<i64>) -> Result<()> {
    graph_to(ptr::null_mut(), function, index, step)
}

/// cairn.h's `CAIRN_SUMMARY_DEFAULT_STEP` (INT64_MIN): "use the default step".
const DEFAULT_STEP: i64 = i64::MIN;

// The calls themselves: `w` is a live writer, or NULL for the default one.
type Writer = *mut sys::cairn_summary_writer;

fn raw_step(step: Option<i64>) -> i64 {
    step.unwrap_or(DEFAULT_STEP)
}

fn raw_max_outputs(max_outputs: Option<usize>) -> i64 {
    max_outputs.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX))
}

/// Runs one summary call with the tag as a C string.
fn with_tag(function: &str, tag: &str, run: impl FnOnce(*const c_char) -> *mut sys::cairn_status) -> Result<()> {
    crate::check_abi()?;
    let tag = c_string(tag, function, "tag")?;
    // SAFETY: `run` gets a NUL-terminated tag borrowed for the call; the status is its own.
    unsafe { check(run(tag.as_ptr())) }
}

// In each call below `w` is live or NULL and the handles are borrowed for the call.
fn scalar_to(w: Writer, tag: &str, value: f64, step: Option<i64>) -> Result<()> {
    with_tag("summary::scalar", tag, |tag| unsafe { sys::cairn_summary_scalar(w, tag, value, raw_step(step)) })
}

fn text_to(w: Writer, tag: &str, text: &str, step: Option<i64>) -> Result<()> {
    let text = c_string(text, "summary::text", "text")?;
    with_tag("summary::text", tag, |tag| unsafe { sys::cairn_summary_text(w, tag, text.as_ptr(), raw_step(step)) })
}

fn scalar_tensor_to(w: Writer, ctx: &Context, tag: &str, t: &Tensor, step: Option<i64>) -> Result<()> {
    with_tag("summary::scalar_tensor", tag, |tag| unsafe {
        sys::cairn_summary_scalar_tensor(ctx.as_raw(), w, tag, t.as_raw(), raw_step(step))
    })
}

fn histogram_to(w: Writer, ctx: &Context, tag: &str, t: &Tensor, buckets: usize, step: Option<i64>) -> Result<()> {
    let buckets = i64::try_from(buckets).unwrap_or(i64::MAX);
    with_tag("summary::histogram", tag, |tag| unsafe {
        sys::cairn_summary_histogram(ctx.as_raw(), w, tag, t.as_raw(), buckets, raw_step(step))
    })
}

fn image_to(
    w: Writer,
    ctx: &Context,
    tag: &str,
    t: &Tensor,
    max_outputs: Option<usize>,
    step: Option<i64>,
) -> Result<()> {
    with_tag("summary::image", tag, |tag| unsafe {
        sys::cairn_summary_image(ctx.as_raw(), w, tag, t.as_raw(), raw_max_outputs(max_outputs), raw_step(step))
    })
}

fn audio_to(
    w: Writer,
    ctx: &Context,
    tag: &str,
    t: &Tensor,
    sample_rate: f64,
    max_outputs: Option<usize>,
    step: Option<i64>,
) -> Result<()> {
    let max_outputs = raw_max_outputs(max_outputs);
    with_tag("summary::audio", tag, |tag| unsafe {
        sys::cairn_summary_audio(ctx.as_raw(), w, tag, t.as_raw(), sample_rate, max_outputs, raw_step(step))
    })
}

fn graph_to(w: Writer, function: &Function<'_>, index: usize, step: Option<i64>) -> Result<()> {
    crate::check_abi()?;
    unsafe { check(sys::cairn_summary_graph(w, function.as_raw(), index, raw_step(step))) }
}
