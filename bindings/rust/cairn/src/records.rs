//! Record files: TensorFlow's TFRecord format (tf.io.TFRecordWriter, tf.data.TFRecordDataset),
//! byte-compatible, with optional ZLIB or GZIP stream compression and an optional index sidecar
//! (`<path>.cairnidx`) for O(1) counts, seeking to record i and sharding. docs/records.md has the
//! details.
//!
//! ```no_run
//! use cairn::{RecordReader, RecordWriter, RecordWriterOptions};
//! # fn main() -> cairn::Result<()> {
//! let mut w = RecordWriter::create("data.tfrecord", RecordWriterOptions::new().write_index(true))?;
//! w.write(b"first")?;
//! w.write(b"second")?;
//! w.close()?; // the last chance to see a failed write
//! let records: Vec<Vec<u8>> = RecordReader::open("data.tfrecord", Default::default())?.collect::<Result<_, _>>()?;
//! assert_eq!(records, [b"first".to_vec(), b"second".to_vec()]);
//! # Ok(())
//! # }
//! ```

use std::ffi::c_void;
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{self, NonNull};

use cairn_sys as sys;

use crate::checkpoint::c_path;
use crate::error::check;
use crate::options::init;
use crate::{Code, Compression, Error, Result};

/// Options of [`RecordWriter::create`]; unset fields keep cairn.h's defaults
/// (`cairn_record_writer_options_init`): no compression, zlib's default level, no index, truncate.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordWriterOptions {
    compression: Option<Compression>,
    level: Option<i32>,
    write_index: Option<bool>,
    append: Option<bool>,
}

impl RecordWriterOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stream compression (readers must be told the same).
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// zlib level 0..=9; -1 is zlib's default (6, as TensorFlow).
    pub fn level(mut self, level: i32) -> Self {
        self.level = Some(level);
        self
    }

    /// Write the index sidecar `<path>.cairnidx` on close.
    pub fn write_index(mut self, on: bool) -> Self {
        self.write_index = Some(on);
        self
    }

    /// Append to an existing file instead of truncating it (no index then).
    pub fn append(mut self, on: bool) -> Self {
        self.append = Some(on);
        self
    }

    fn to_raw(self) -> Result<sys::cairn_record_writer_options> {
        let mut raw = init(sys::cairn_record_writer_options_init)?;
        if let Some(c) = self.compression {
            raw.compression = c.to_raw();
        }
        if let Some(level) = self.level {
            raw.level = level;
        }
        if let Some(on) = self.write_index {
            raw.write_index = on.into();
        }
        if let Some(on) = self.append {
            raw.append = on.into();
        }
        Ok(raw)
    }
}

/// Options of [`RecordReader::open`], [`record_file_count`] and [`record_index_build`]; unset
/// fields keep cairn.h's defaults: no compression, checksums verified, read-ahead on, 1 MiB reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecordReaderOptions {
    compression: Option<Compression>,
    verify_checksums: Option<bool>,
    read_ahead: Option<bool>,
    buffer_size: Option<u64>,
}

impl RecordReaderOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file's stream compression (nothing in the file says which).
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// Check both CRCs of every record (default on).
    pub fn verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = Some(on);
        self
    }

    /// A background thread reads ahead in large uncompressed files (default on; only on machines
    /// with 4 or more CPUs).
    pub fn read_ahead(mut self, on: bool) -> Self {
        self.read_ahead = Some(on);
        self
    }

    /// Bytes per read; 0 is the default (1 MiB).
    pub fn buffer_size(mut self, bytes: u64) -> Self {
        self.buffer_size = Some(bytes);
        self
    }

    fn to_raw(self) -> Result<sys::cairn_record_reader_options> {
        let mut raw = init(sys::cairn_record_reader_options_init)?;
        if let Some(c) = self.compression {
            raw.compression = c.to_raw();
        }
        if let Some(on) = self.verify_checksums {
            raw.verify_checksums = on.into();
        }
        if let Some(on) = self.read_ahead {
            raw.read_ahead = on.into();
        }
        if let Some(bytes) = self.buffer_size {
            raw.buffer_size = bytes;
        }
        Ok(raw)
    }
}

/// A record file being written. Records are buffered: readers see them after [`flush`] or
/// [`close`]. Dropping the writer closes it and loses the error of that close: call [`close`] to
/// see it. `Send`, not `Sync` (one thread at a time).
///
/// [`flush`]: RecordWriter::flush
/// [`close`]: RecordWriter::close
pub struct RecordWriter {
    raw: NonNull<sys::cairn_record_writer>,
    path: PathBuf,
}

// SAFETY: cairn.h: "a writer or reader handle is used by one thread at a time". Not Sync.
unsafe impl Send for RecordWriter {}

impl RecordWriter {
    /// Creates (or truncates; with [`RecordWriterOptions::append`], appends to) the record file
    /// `path`. NOT_FOUND / PERMISSION_DENIED naming the path; INVALID_ARGUMENT for a bad
    /// compression or level, or write_index with append.
    pub fn create(path: impl AsRef<Path>, options: RecordWriterOptions) -> Result<RecordWriter> {
        let path = path.as_ref();
        let raw_opts = options.to_raw()?;
        let c = c_path(path, "RecordWriter::create", "path")?;
        let mut out = ptr::null_mut();
        // SAFETY: the path and options are borrowed for the call; `out` receives the writer.
        unsafe { check(sys::cairn_record_writer_open(c.as_ptr(), &raw_opts, &mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_record_writer_open: returned success but no writer"))?;
        Ok(RecordWriter { raw, path: path.to_path_buf() })
    }

    /// Appends one record (copied). FAILED_PRECONDITION after [`RecordWriter::close`]; I/O
    /// errors (RESOURCE_EXHAUSTED for a full disk) naming the path.
    pub fn write(&mut self, record: &[u8]) -> Result<()> {
        // SAFETY: a live writer; `record` is borrowed for the call.
        unsafe {
            check(sys::cairn_record_writer_write(self.raw.as_ptr(), record.as_ptr().cast::<c_void>(), record.len()))
        }
    }

    /// Hands every record written so far to the operating system (a compressed stream gets a
    /// zlib sync flush), so readers see them.
    pub fn flush(&mut self) -> Result<()> {
        // SAFETY: a live writer (here and below).
        unsafe { check(sys::cairn_record_writer_flush(self.raw.as_ptr())) }
    }

    /// [`RecordWriter::flush`], then fsync: the records survive a crash of the machine.
    pub fn sync(&mut self) -> Result<()> {
        unsafe { check(sys::cairn_record_writer_sync(self.raw.as_ptr())) }
    }

    /// Flushes, ends the compressed stream, closes the file and writes the index sidecar when
    /// asked. Its error is the last chance to see a failed write. Closing again does nothing;
    /// writing after it is FAILED_PRECONDITION.
    pub fn close(&mut self) -> Result<()> {
        unsafe { check(sys::cairn_record_writer_close(self.raw.as_ptr())) }
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        // SAFETY: a live writer.
        unsafe { sys::cairn_record_writer_count(self.raw.as_ptr()) }.max(0) as u64
    }

    /// The file's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_record_writer {
        self.raw.as_ptr()
    }
}

impl Drop for RecordWriter {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed only here.
        unsafe { sys::cairn_record_writer_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for RecordWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordWriter").field("path", &self.path).field("count", &self.count()).finish()
    }
}

/// A record file being read, from its start. [`RecordReader::read`] borrows each record; the
/// reader is also an [`Iterator`] of owned records (`Result<Vec<u8>>`).
///
/// The end of the records so far and a last record still being written both end the iteration
/// (`None`); [`RecordReader::partial`] tells them apart. The reader stays where it was, so a later
/// `read` or `next` resumes there once the writer has written more (as TensorBoard tails event
/// files). A corrupt record is DATA_LOSS naming the path and the byte offset; the iterator yields
/// that error once and then ends. `Send`, not `Sync`.
pub struct RecordReader {
    raw: NonNull<sys::cairn_record_reader>,
    path: PathBuf,
    failed: bool,
}

// SAFETY: cairn.h: "a writer or reader handle is used by one thread at a time". Not Sync.
unsafe impl Send for RecordReader {}

impl RecordReader {
    /// Opens the record file `path` for reading from its start. NOT_FOUND / PERMISSION_DENIED
    /// naming the path.
    pub fn open(path: impl AsRef<Path>, options: RecordReaderOptions) -> Result<RecordReader> {
        let path = path.as_ref();
        let raw_opts = options.to_raw()?;
        let c = c_path(path, "RecordReader::open", "path")?;
        let mut out = ptr::null_mut();
        // SAFETY: the path and options are borrowed for the call; `out` receives the reader.
        unsafe { check(sys::cairn_record_reader_open(c.as_ptr(), &raw_opts, &mut out))? };
        let raw = NonNull::new(out)
            .ok_or_else(|| Error::new(Code::Internal, "cairn_record_reader_open: returned success but no reader"))?;
        Ok(RecordReader { raw, path: path.to_path_buf(), failed: false })
    }

    /// The next record, borrowed until the reader's next call; `None` at the end of the file or at
    /// a last record still being written ([`RecordReader::partial`]), after which a later call
    /// retries from the same offset. DATA_LOSS `"<path>: corrupt record at offset N: ..."`; the
    /// reader is unusable after it.
    pub fn read(&mut self) -> Result<Option<&[u8]>> {
        let (mut data, mut n, mut got) = (ptr::null(), 0usize, 0);
        // SAFETY: a live reader; the record stays valid until the next call on it, which the
        // borrow of `self` ensures.
        let status = unsafe { sys::cairn_record_reader_next(self.raw.as_ptr(), &mut data, &mut n, &mut got) };
        if let Err(e) = unsafe { check(status) } {
            self.failed = true;
            return Err(e);
        }
        if got == 0 {
            return Ok(None);
        }
        Ok(Some(if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data.cast::<u8>(), n) } }))
    }

    /// Where the next record starts in the uncompressed stream (the file offset without
    /// compression): what [`RecordReader::seek`] takes.
    pub fn offset(&self) -> u64 {
        // SAFETY: a live reader (here and below).
        unsafe { sys::cairn_record_reader_offset(self.raw.as_ptr()) }.max(0) as u64
    }

    /// Whether the last read found an incomplete record at the offset (a file still being
    /// written, or one cut short) rather than the end.
    pub fn partial(&self) -> bool {
        unsafe { sys::cairn_record_reader_partial(self.raw.as_ptr()) != 0 }
    }

    /// Moves to `offset`, a record's start as [`RecordReader::offset`] gave it (a wrong one shows
    /// as DATA_LOSS on the next read). Compressed streams get there by decompressing: O(offset).
    /// OUT_OF_RANGE past the end of a compressed stream.
    pub fn seek(&mut self, offset: u64) -> Result<()> {
        let offset = i64::try_from(offset)
            .map_err(|_| Error::new(Code::InvalidArgument, format!("RecordReader::seek: offset {offset} too large")))?;
        self.failed = false;
        unsafe { check(sys::cairn_record_reader_seek(self.raw.as_ptr(), offset)) }
    }

    /// Moves to record `index` (0-based) through the index sidecar. FAILED_PRECONDITION saying why
    /// when there is no valid index (build one with [`record_index_build`]); OUT_OF_RANGE past
    /// the end (the record count itself moves to the end).
    pub fn seek_record(&mut self, index: u64) -> Result<()> {
        let index = i64::try_from(index).unwrap_or(i64::MAX);
        self.failed = false;
        unsafe { check(sys::cairn_record_reader_seek_record(self.raw.as_ptr(), index)) }
    }

    /// The file's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The raw handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::cairn_record_reader {
        self.raw.as_ptr()
    }
}

impl Iterator for RecordReader {
    type Item = Result<Vec<u8>>;

    /// The next record, copied. `None` at the end or at a partial record (a later call resumes);
    /// after an error, `None` until a seek.
    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        if self.failed {
            return None;
        }
        self.read().map(|r| r.map(<[u8]>::to_vec)).transpose()
    }
}

impl Drop for RecordReader {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed only here.
        unsafe { sys::cairn_record_reader_free(self.raw.as_ptr()) }
    }
}

impl fmt::Debug for RecordReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordReader").field("path", &self.path).field("offset", &self.offset()).finish()
    }
}

/// The number of complete records in `path`: from a valid index sidecar in O(1), otherwise by
/// reading the file (with checksums as `options` say).
pub fn record_file_count(path: impl AsRef<Path>, options: RecordReaderOptions) -> Result<u64> {
    let raw_opts = options.to_raw()?;
    let c = c_path(path.as_ref(), "record_file_count", "path")?;
    let mut n = 0;
    // SAFETY: borrowed for the call; `n` receives the count.
    unsafe { check(sys::cairn_record_file_count(c.as_ptr(), &raw_opts, &mut n))? };
    Ok(n.max(0) as u64)
}

/// Reads `path` and writes its index sidecar `<path>.cairnidx` (replacing a stale one); returns
/// the number of records indexed.
pub fn record_index_build(path: impl AsRef<Path>, options: RecordReaderOptions) -> Result<u64> {
    let raw_opts = options.to_raw()?;
    let c = c_path(path.as_ref(), "record_index_build", "path")?;
    let mut n = 0;
    // SAFETY: borrowed for the call; `n` receives the count.
    unsafe { check(sys::cairn_record_index_build(c.as_ptr(), &raw_opts, &mut n))? };
    Ok(n.max(0) as u64)
}

/// The records `begin..end` of shard `shard` of `num_shards` over `count` records: every record
/// is in exactly one shard. Use with [`RecordReader::seek_record`]. INVALID_ARGUMENT for a shard
/// outside `0..num_shards`.
pub fn record_shard_range(count: u64, num_shards: u64, shard: u64) -> Result<std::ops::Range<u64>> {
    crate::check_abi()?;
    let arg = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let (mut begin, mut end) = (0, 0);
    // SAFETY: plain values; `begin` and `end` receive the range.
    unsafe { check(sys::cairn_record_shard_range(arg(count), arg(num_shards), arg(shard), &mut begin, &mut end))? };
    Ok(begin as u64..end as u64)
}
