package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ---- Records: TFRecord files (tf.io.TFRecordWriter, tf.data.TFRecordDataset) ----

// RecordWriter writes a TFRecord file: each record is its length, a masked CRC32C of the
// length, the bytes and their masked CRC32C, optionally in a zlib or gzip stream. Records are
// buffered: readers see them after Flush, Sync or Close. Close it and check Close's error, the
// last chance to see a failed write; a finalizer closes a forgotten writer as a safety net only,
// losing that error. A writer is used from one goroutine at a time.
type RecordWriter struct {
	ptr  *C.cairn_record_writer
	path string
}

// RecordWriterOption sets a field of cairn_record_writer_options; a Compression is one too.
type RecordWriterOption interface {
	applyRecordWriter(*C.cairn_record_writer_options)
}

// RecordReaderOption sets a field of cairn_record_reader_options; a Compression is one too.
type RecordReaderOption interface {
	applyRecordReader(*C.cairn_record_reader_options)
}

// A Compression is an option of OpenRecordWriter and of the readers: the file's stream
// compression (default CompressionNone). Nothing in a file says which it is, so readers are told.
func (c Compression) applyRecordWriter(o *C.cairn_record_writer_options) {
	o.compression = C.cairn_compression(c)
}

func (c Compression) applyRecordReader(o *C.cairn_record_reader_options) {
	o.compression = C.cairn_compression(c)
}

type recordWriterOption func(*C.cairn_record_writer_options)

func (f recordWriterOption) applyRecordWriter(o *C.cairn_record_writer_options) { f(o) }

type recordReaderOption func(*C.cairn_record_reader_options)

func (f recordReaderOption) applyRecordReader(o *C.cairn_record_reader_options) { f(o) }

// WithLevel sets the zlib level, 0..9, of a compressed record file (default -1: zlib's default, 6).
func WithLevel(level int) RecordWriterOption {
	return recordWriterOption(func(o *C.cairn_record_writer_options) { o.level = C.int32_t(level) })
}

// WithIndex writes the index sidecar "<path>.cairnidx" on Close (default false): record counts in
// O(1), RecordReader.SeekRecord and sharding. Not with WithAppend.
func WithIndex(on bool) RecordWriterOption {
	return recordWriterOption(func(o *C.cairn_record_writer_options) { o.write_index = cBool(on) })
}

// WithAppend appends to an existing file instead of truncating it (default false).
func WithAppend(on bool) RecordWriterOption {
	return recordWriterOption(func(o *C.cairn_record_writer_options) { o.append = cBool(on) })
}

// WithVerifyChecksums checks both CRCs of every record read (default true).
func WithVerifyChecksums(on bool) RecordReaderOption {
	return recordReaderOption(func(o *C.cairn_record_reader_options) { o.verify_checksums = cBool(on) })
}

// WithReadAhead lets a background thread read ahead in large uncompressed files on machines with
// 4 or more CPUs (default true).
func WithReadAhead(on bool) RecordReaderOption {
	return recordReaderOption(func(o *C.cairn_record_reader_options) { o.read_ahead = cBool(on) })
}

// WithBufferSize sets the bytes per read (default 0: 1 MiB).
func WithBufferSize(n int) RecordReaderOption {
	return recordReaderOption(func(o *C.cairn_record_reader_options) { o.buffer_size = C.uint64_t(n) })
}

// recordReaderOptions is the C options struct: the defaults changed by options.
func recordReaderOptions(options []RecordReaderOption) (C.cairn_record_reader_options, error) {
	var o C.cairn_record_reader_options
	if err := cRecordReaderOptionsInit(&o, C.uint32_t(unsafe.Sizeof(o))); err != nil {
		return o, err
	}
	for _, opt := range options {
		opt.applyRecordReader(&o)
	}
	return o, nil
}

// OpenRecordWriter creates (or truncates; WithAppend appends to) the record file path. Errors:
// NOT_FOUND or PERMISSION_DENIED naming the path; INVALID_ARGUMENT for a bad compression or
// level, or WithIndex with WithAppend.
func OpenRecordWriter(path string, options ...RecordWriterOption) (*RecordWriter, error) {
	if err := checkLibrary("OpenRecordWriter"); err != nil {
		return nil, err
	}
	var o C.cairn_record_writer_options
	if err := cRecordWriterOptionsInit(&o, C.uint32_t(unsafe.Sizeof(o))); err != nil {
		return nil, err
	}
	for _, opt := range options {
		opt.applyRecordWriter(&o)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.cairn_record_writer
	if err := cRecordWriterOpen(cpath, &o, &out); err != nil {
		return nil, err
	}
	w := &RecordWriter{ptr: out, path: path}
	runtime.SetFinalizer(w, (*RecordWriter).free)
	return w, nil
}

// free is the finalizer's safety net: it closes the file, losing a write error.
func (w *RecordWriter) free() {
	cRecordWriterFree(w.ptr)
	w.ptr = nil
}

func (w *RecordWriter) handle() *C.cairn_record_writer {
	if w == nil {
		return nil
	}
	return w.ptr
}

// Path is the path the writer was opened with.
func (w *RecordWriter) Path() string { return w.path }

// Write appends one record (copied). Errors: FAILED_PRECONDITION after Close; I/O errors
// (RESOURCE_EXHAUSTED for a full disk) naming the path.
func (w *RecordWriter) Write(record []byte) error {
	err := w.do("RecordWriter.Write", func(p *C.cairn_record_writer) error {
		return cRecordWriterWrite(p, unsafe.Pointer(unsafe.SliceData(record)), C.size_t(len(record)))
	})
	runtime.KeepAlive(record)
	return err
}

// do runs call on the C writer after checking w, naming fn in the binding's errors.
func (w *RecordWriter) do(fn string, call func(*C.cairn_record_writer) error) error {
	if err := checkOpen(fn, "record writer", w); err != nil {
		return err
	}
	err := call(w.ptr)
	runtime.KeepAlive(w)
	return err
}

// Flush hands every record written so far to the operating system (a compressed stream gets a
// zlib sync flush), so readers see them.
func (w *RecordWriter) Flush() error { return w.do("RecordWriter.Flush", cRecordWriterFlush) }

// Sync is Flush, then fsync: the records survive a crash of the machine.
func (w *RecordWriter) Sync() error { return w.do("RecordWriter.Sync", cRecordWriterSync) }

// Count is the number of records written so far; 0 after Close.
func (w *RecordWriter) Count() int64 {
	n := int64(cRecordWriterCount(w.handle()))
	runtime.KeepAlive(w)
	return n
}

// Close flushes, ends the compressed stream, closes the file, writes the index sidecar when asked
// and frees the writer. Its error is the last chance to see a failed write. Closing twice does
// nothing and returns nil; other methods then fail with FAILED_PRECONDITION.
func (w *RecordWriter) Close() error {
	if w == nil || w.ptr == nil {
		return nil
	}
	runtime.SetFinalizer(w, nil)
	err := cRecordWriterClose(w.ptr)
	w.free()
	return err
}

// RecordReader reads a record file from its start. At the end of the file, or at a last record
// still being written, Next reports no record and the reader stays where it was: a later Next
// resumes there once the writer has written more (Partial tells the two apart). Corrupt data is
// DATA_LOSS "<path>: corrupt record at offset N: ...", after which the reader is unusable. A reader
// is used from one goroutine at a time; Close it (a finalizer frees a forgotten one).
type RecordReader struct {
	ptr    *C.cairn_record_reader
	record []byte
	err    error
}

// OpenRecordReader opens the record file path for reading from its start. Errors: NOT_FOUND or
// PERMISSION_DENIED naming the path.
func OpenRecordReader(path string, options ...RecordReaderOption) (*RecordReader, error) {
	if err := checkLibrary("OpenRecordReader"); err != nil {
		return nil, err
	}
	o, err := recordReaderOptions(options)
	if err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.cairn_record_reader
	if err := cRecordReaderOpen(cpath, &o, &out); err != nil {
		return nil, err
	}
	r := &RecordReader{ptr: out}
	runtime.SetFinalizer(r, (*RecordReader).Close)
	return r, nil
}

// Close frees the reader. Closing twice does nothing.
func (r *RecordReader) Close() {
	if r == nil || r.ptr == nil {
		return
	}
	runtime.SetFinalizer(r, nil)
	cRecordReaderFree(r.ptr)
	r.ptr = nil
}

func (r *RecordReader) handle() *C.cairn_record_reader {
	if r == nil {
		return nil
	}
	return r.ptr
}

// Next reads the next record, a copy the caller owns. ok is false, with a nil error, at the end of
// the file or at an incomplete last record (Partial is then true); the reader stays at its offset
// and a later Next retries from there.
func (r *RecordReader) Next() (record []byte, ok bool, err error) {
	if err := checkOpen("RecordReader.Next", "record reader", r); err != nil {
		return nil, false, err
	}
	var data unsafe.Pointer
	var n C.size_t
	var got C.cairn_bool
	err = cRecordReaderNext(r.ptr, &data, &n, &got)
	if err == nil && got != 0 {
		record = copyBytes(data, n)
	}
	runtime.KeepAlive(r)
	return record, err == nil && got != 0, err
}

// copyBytes is a Go copy of n bytes at p (C memory), never nil; unlike C.GoBytes it takes sizes
// past 2 GiB.
func copyBytes(p unsafe.Pointer, n C.size_t) []byte {
	b := make([]byte, int(n))
	if n > 0 {
		copy(b, unsafe.Slice((*byte)(p), int(n)))
	}
	return b
}

// Scan reads the next record for Record, as bufio.Scanner does: false at the end of the records
// readable now (Partial says whether an incomplete one follows) or on an error, which Err returns.
//
//	for r.Scan() {
//		use(r.Record())
//	}
//	if err := r.Err(); err != nil { ... }
func (r *RecordReader) Scan() bool {
	var ok bool
	r.record, ok, r.err = r.Next()
	return ok
}

// Record is the record the last Scan read; nil after a Scan that returned false.
func (r *RecordReader) Record() []byte { return r.record }

// Err is the error that ended the last Scan, nil at the end of the file or at a partial record.
func (r *RecordReader) Err() error { return r.err }

// All is the records readable now as an iterator for Go 1.23's range-over-func (a module on
// go 1.23 or later may write `for rec, err := range r.All()`): each record with a nil error; an
// error, if one ends the reading, as the last pair. It stops at the end of the file and at a
// partial record (see Partial), and resumes from there when called again.
func (r *RecordReader) All() func(yield func([]byte, error) bool) {
	return func(yield func([]byte, error) bool) {
		for {
			record, ok, err := r.Next()
			if err != nil {
				yield(nil, err)
				return
			}
			if !ok || !yield(record, nil) {
				return
			}
		}
	}
}

// Partial is true when the last Next found an incomplete record at the offset (a file still being
// written, or one cut short).
func (r *RecordReader) Partial() bool {
	p := cRecordReaderPartial(r.handle()) != 0
	runtime.KeepAlive(r)
	return p
}

// Offset is where the next record starts in the uncompressed stream (the file offset without
// compression); -1 after Close.
func (r *RecordReader) Offset() int64 {
	off := int64(cRecordReaderOffset(r.handle()))
	runtime.KeepAlive(r)
	return off
}

// SeekOffset moves to offset, a record's start as Offset gave it (a wrong one shows as DATA_LOSS on the
// next read). Compressed streams get there by decompressing. Errors: INVALID_ARGUMENT for a
// negative offset; OUT_OF_RANGE past the end of a compressed stream.
func (r *RecordReader) SeekOffset(offset int64) error {
	return r.seek("RecordReader.SeekOffset", offset, cRecordReaderSeek)
}

// SeekRecord moves to record index (0-based; the record count moves to the end) through the index
// sidecar. Errors: FAILED_PRECONDITION saying why when there is no valid index (BuildRecordIndex
// makes one); OUT_OF_RANGE past the end.
func (r *RecordReader) SeekRecord(index int64) error {
	return r.seek("RecordReader.SeekRecord", index, cRecordReaderSeekRecord)
}

func (r *RecordReader) seek(fn string, to int64, seek func(*C.cairn_record_reader, C.int64_t) error) error {
	if err := checkOpen(fn, "record reader", r); err != nil {
		return err
	}
	err := seek(r.ptr, C.int64_t(to))
	runtime.KeepAlive(r)
	return err
}

// CountRecords is the number of complete records in path: from a valid index sidecar in O(1),
// otherwise by reading the file.
func CountRecords(path string, options ...RecordReaderOption) (int64, error) {
	return wholeRecordFile("CountRecords", path, options, cRecordFileCount)
}

// BuildRecordIndex reads path and writes its index sidecar "<path>.cairnidx" (replacing a stale
// one); it returns the number of records indexed.
func BuildRecordIndex(path string, options ...RecordReaderOption) (int64, error) {
	return wholeRecordFile("BuildRecordIndex", path, options, cRecordIndexBuild)
}

func wholeRecordFile(fn, path string, options []RecordReaderOption,
	call func(*C.char, *C.cairn_record_reader_options, *C.int64_t) error) (int64, error) {
	if err := checkLibrary(fn); err != nil {
		return 0, err
	}
	o, err := recordReaderOptions(options)
	if err != nil {
		return 0, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var n C.int64_t
	if err := call(cpath, &o, &n); err != nil {
		return 0, err
	}
	return int64(n), nil
}

// ShardRange is the records [begin, end) of shard shard of numShards over count records:
// [shard*count/numShards, (shard+1)*count/numShards), so every record is in exactly one shard.
// Use it with RecordReader.SeekRecord. Errors: INVALID_ARGUMENT for a negative count or a shard
// outside [0, numShards).
func ShardRange(count, numShards, shard int64) (begin, end int64, err error) {
	var b, e C.int64_t
	if err := cRecordShardRange(C.int64_t(count), C.int64_t(numShards), C.int64_t(shard), &b, &e); err != nil {
		return 0, 0, err
	}
	return int64(b), int64(e), nil
}
