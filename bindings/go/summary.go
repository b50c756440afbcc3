package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"math"
	"runtime"
	"time"
	"unsafe"
)

// ---- Summaries (tf.summary): TensorBoard event files ----

// DefaultStep as the step of a summary call means the process-wide default step (SetSummaryStep);
// with none set the call fails with INVALID_ARGUMENT naming the tag.
const DefaultStep int64 = math.MinInt64

// SummaryWriter is tf.summary.create_file_writer: it owns one event file in its log directory
// ("<logdir>/events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2"). Summary calls queue the event and
// return; a background thread writes it, and events reach the file on Flush, on Close and every
// flush interval (default 1 s). An error of the background thread (a full disk, a deleted log
// directory) comes back once from the next call on the writer.
//
// The summary methods accept a nil *SummaryWriter: it means the default writer (SetDefault) at the
// time the summary runs; with none set nothing is written and the call succeeds, as tf.summary
// does. Open TensorBoard on the log directory with `tensorboard --logdir DIR`.
//
// A writer may be used from several goroutines at once. Close it and check the error; a finalizer
// frees a forgotten one as a safety net only.
type SummaryWriter struct {
	ptr *C.cairn_summary_writer
}

// SummaryWriterOption sets a field of cairn_summary_writer_options.
type SummaryWriterOption func(*summaryWriterConfig)

type summaryWriterConfig struct {
	opts   C.cairn_summary_writer_options
	suffix *string
}

// WithMaxQueue sets how many events may be pending before the writer thread writes them
// (default 10, at least 1).
func WithMaxQueue(n int) SummaryWriterOption {
	return func(c *summaryWriterConfig) { c.opts.max_queue = C.int64_t(n) }
}

// WithFlushInterval sets the flush timer (default 1 s; 0 flushes only on Flush and Close).
func WithFlushInterval(d time.Duration) SummaryWriterOption {
	return func(c *summaryWriterConfig) { c.opts.flush_millis = C.int64_t(d.Milliseconds()) }
}

// WithFilenameSuffix sets what the event file's name ends with (a "." is put before it when
// missing; default ".v2").
func WithFilenameSuffix(suffix string) SummaryWriterOption {
	return func(c *summaryWriterConfig) { c.suffix = &suffix }
}

// NewSummaryWriter creates a writer for logdir (made with its parents when missing) with a new
// event file. Errors: INVALID_ARGUMENT for bad options; FAILED_PRECONDITION naming the directory
// when it cannot be created.
func NewSummaryWriter(logdir string, options ...SummaryWriterOption) (*SummaryWriter, error) {
	if err := checkLibrary("NewSummaryWriter"); err != nil {
		return nil, err
	}
	var c summaryWriterConfig
	if err := cSummaryWriterOptionsInit(&c.opts, C.uint32_t(unsafe.Sizeof(c.opts))); err != nil {
		return nil, err
	}
	for _, opt := range options {
		opt(&c)
	}
	o := c.opts // cgo refuses a pointer into c, which holds a Go pointer
	if c.suffix != nil {
		o.filename_suffix = C.CString(*c.suffix)
		defer C.free(unsafe.Pointer(o.filename_suffix))
	}
	cdir := C.CString(logdir)
	defer C.free(unsafe.Pointer(cdir))
	var out *C.cairn_summary_writer
	if err := cSummaryWriterCreate(cdir, &o, &out); err != nil {
		return nil, err
	}
	w := &SummaryWriter{ptr: out}
	runtime.SetFinalizer(w, (*SummaryWriter).free)
	return w, nil
}

func (w *SummaryWriter) free() {
	cSummaryWriterFree(w.ptr)
	w.ptr = nil
}

// use is the C writer for a call of fn: NULL (the default writer) for a nil w, the binding's
// FAILED_PRECONDITION for a closed one.
func (w *SummaryWriter) use(fn string) (*C.cairn_summary_writer, error) {
	if w == nil {
		return nil, nil
	}
	if w.ptr == nil {
		return nil, handleError(fn, "summary writer", false)
	}
	return w.ptr, nil
}

// Flush writes every queued event and pushes the file to the operating system; it returns when
// done. Errors: a pending error of the background thread. A nil writer flushes nothing.
func (w *SummaryWriter) Flush() error {
	p, err := w.use("SummaryWriter.Flush")
	if err != nil || p == nil {
		return err
	}
	err = cSummaryWriterFlush(p)
	runtime.KeepAlive(w)
	return err
}

// Close flushes, stops the writer thread, closes the file and frees the handle; later calls on w
// fail with FAILED_PRECONDITION, and compiled functions that recorded summaries to it fail when
// no default-writer setting holds it any more. Closing twice does nothing and returns nil.
func (w *SummaryWriter) Close() error {
	if w == nil || w.ptr == nil {
		return nil
	}
	runtime.SetFinalizer(w, nil)
	err := cSummaryWriterClose(w.ptr)
	w.free()
	return err
}

// Path is the path of the event file being written (a new file after the old one was deleted).
func (w *SummaryWriter) Path() (string, error) {
	if err := checkOpen("SummaryWriter.Path", "summary writer", w); err != nil {
		return "", err
	}
	var out *C.char
	err := cSummaryWriterPath(w.ptr, &out)
	runtime.KeepAlive(w)
	return takeString(out, err)
}

// SetDefault makes w the process-wide default writer (tf.summary's `with writer.as_default()`);
// the setting holds a reference to it until replaced or cleared. A nil or closed w clears it.
func (w *SummaryWriter) SetDefault() {
	if w == nil {
		ClearDefaultSummaryWriter()
		return
	}
	cSummaryWriterSetDefault(w.ptr)
	runtime.KeepAlive(w)
}

// ClearDefaultSummaryWriter unsets the default writer: summaries to a nil writer write nothing.
func ClearDefaultSummaryWriter() { cSummaryWriterSetDefault(nil) }

// SetSummaryStep sets the process-wide default step (tf.summary.experimental.set_step), which
// summaries with step DefaultStep use. DefaultStep unsets it.
func SetSummaryStep(step int64) { cSummarySetStep(C.int64_t(step)) }

// SummaryStep is the process-wide default step; ok is false when none is set.
func SummaryStep() (step int64, ok bool) {
	s := int64(cSummaryStep())
	return s, s != DefaultStep
}

// withTag runs call with the C writer and tag after checking w, naming fn in the errors.
func (w *SummaryWriter) withTag(fn, tag string, call func(*C.cairn_summary_writer, *C.char) error) error {
	p, err := w.use(fn)
	if err != nil {
		return err
	}
	ctag := C.CString(tag)
	defer C.free(unsafe.Pointer(ctag))
	err = call(p, ctag)
	runtime.KeepAlive(w)
	return err
}

// withTensor is withTag for the tensor summaries: it checks ctx and t too.
func (w *SummaryWriter) withTensor(fn string, ctx *Context, tag string, t *Tensor,
	call func(*C.cairn_context, *C.cairn_summary_writer, *C.char, *C.cairn_tensor) error) error {
	if err := checkOpen(fn, "context", ctx, "tensor", t); err != nil {
		return err
	}
	err := w.withTag(fn, tag, func(p *C.cairn_summary_writer, ctag *C.char) error {
		return call(ctx.ptr, p, ctag, t.ptr)
	})
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(t)
	return err
}

// Scalar is tf.summary.scalar from a Go value: it queues a float32 scalar at step (or
// DefaultStep), costing well under a microsecond. It is not recorded inside a Function's body (use
// ScalarTensor there).
func (w *SummaryWriter) Scalar(tag string, value float64, step int64) error {
	return w.withTag("SummaryWriter.Scalar", tag, func(p *C.cairn_summary_writer, ctag *C.char) error {
		return cSummaryScalar(p, ctag, C.double(value), C.int64_t(step))
	})
}

// Text is tf.summary.text: a UTF-8 string for the text plugin.
func (w *SummaryWriter) Text(tag, text string, step int64) error {
	return w.withTag("SummaryWriter.Text", tag, func(p *C.cairn_summary_writer, ctag *C.char) error {
		ctext := C.CString(text)
		defer C.free(unsafe.Pointer(ctext))
		return cSummaryText(p, ctag, ctext, C.int64_t(step))
	})
}

// ScalarTensor is tf.summary.scalar from a tensor: t is a rank-0 tensor of a real dtype or bool,
// written as float32. Eager, it writes now; inside a Function's body (ctx the body's context) it
// records an op that writes on every call of the function, reading the default step when it runs.
// Errors: INVALID_ARGUMENT naming the tag for another rank or dtype.
func (w *SummaryWriter) ScalarTensor(ctx *Context, tag string, t *Tensor, step int64) error {
	return w.withTensor("SummaryWriter.ScalarTensor", ctx, tag, t,
		func(c *C.cairn_context, p *C.cairn_summary_writer, ctag *C.char, ct *C.cairn_tensor) error {
			return cSummaryScalarTensor(c, p, ctag, ct, C.int64_t(step))
		})
}

// Histogram is tf.summary.histogram: TF2's buckets equal-width buckets (0 or less: 30) from the
// minimum to the maximum of t (any real dtype and shape). Recorded inside a Function's body as
// ScalarTensor is. Errors: INVALID_ARGUMENT naming the tag for a NaN or infinite value or a bad
// dtype.
func (w *SummaryWriter) Histogram(ctx *Context, tag string, t *Tensor, buckets int, step int64) error {
	return w.withTensor("SummaryWriter.Histogram", ctx, tag, t,
		func(c *C.cairn_context, p *C.cairn_summary_writer, ctag *C.char, ct *C.cairn_tensor) error {
			return cSummaryHistogram(c, p, ctag, ct, C.int64_t(buckets), C.int64_t(step))
		})
}

// Image is tf.summary.image: images is a [k, height, width, channels] batch with 1, 3 or 4
// channels, uint8 or float (clamped to [0, 1]); the first maxOutputs (negative: 3) are written as
// PNGs. Recorded inside a Function's body as ScalarTensor is.
func (w *SummaryWriter) Image(ctx *Context, tag string, images *Tensor, maxOutputs int, step int64) error {
	return w.withTensor("SummaryWriter.Image", ctx, tag, images,
		func(c *C.cairn_context, p *C.cairn_summary_writer, ctag *C.char, ct *C.cairn_tensor) error {
			return cSummaryImage(c, p, ctag, ct, C.int64_t(maxOutputs), C.int64_t(step))
		})
}

// Audio is tf.summary.audio: audio is a [k, frames, channels] float batch in [-1, 1]; the first
// maxOutputs clips (negative: 3) are written as 16-bit WAV at sampleRate Hz (a whole number).
// Recorded inside a Function's body as ScalarTensor is.
func (w *SummaryWriter) Audio(ctx *Context, tag string, audio *Tensor, sampleRate float64, maxOutputs int, step int64) error {
	return w.withTensor("SummaryWriter.Audio", ctx, tag, audio,
		func(c *C.cairn_context, p *C.cairn_summary_writer, ctag *C.char, ct *C.cairn_tensor) error {
			return cSummaryAudio(c, p, ctag, ct, C.double(sampleRate), C.int64_t(maxOutputs), C.int64_t(step))
		})
}

// Graph is tf.summary.graph: it writes the graph of trace `trace` (0 = the first) of fn as a
// binary tensorflow.GraphDef, which TensorBoard's graph dashboard draws. Errors: OUT_OF_RANGE for a
// trace that does not exist.
func (w *SummaryWriter) Graph(fn *Function, trace int, step int64) error {
	const name = "SummaryWriter.Graph"
	if err := checkOpen(name, "function", fn); err != nil {
		return err
	}
	if trace < 0 {
		return newError(CodeOutOfRange, name+": trace index is negative")
	}
	p, err := w.use(name)
	if err != nil {
		return err
	}
	err = cSummaryGraph(p, fn.handle(), C.size_t(trace), C.int64_t(step))
	runtime.KeepAlive(w)
	runtime.KeepAlive(fn)
	return err
}
