package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"slices"
	"unsafe"
)

// Checkpoint is a tf.train.Checkpoint: a root object whose children are given at creation, plus
// a "save_counter" int64 variable, saved to and restored from one file (keys read like
// tf.train.list_variables: "<path>/.ATTRIBUTES/VARIABLE_VALUE"). One checkpoint, with its
// manager, is used from one goroutine at a time.
type Checkpoint struct {
	ptr *C.cairn_checkpoint
}

// NewCheckpoint creates a checkpoint over the named root children (TensorFlow's
// Checkpoint(**kwargs); they are set in name order). Names are non-empty, without '/', and not
// "save_counter". The checkpoint holds its own references to the children.
func NewCheckpoint(ctx *Context, children map[string]Tracked) (*Checkpoint, error) {
	if err := checkOpen("NewCheckpoint", "context", ctx); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(children))
	for name := range children {
		names = append(names, name)
	}
	slices.Sort(names)
	// Go arrays holding only C pointers may be passed to C.
	cnames := make([]*C.char, len(names))
	cobjs := make([]*C.cairn_object, len(names))
	for i, name := range names {
		cnames[i] = C.CString(name)
		defer C.free(unsafe.Pointer(cnames[i]))
		if err := checkOpen("NewCheckpoint", fmt.Sprintf("child %q", name), children[name]); err != nil {
			return nil, err
		}
		cobjs[i] = handleOf(children[name])
	}
	var out *C.cairn_checkpoint
	err := cCheckpointCreate(ctx.handle(), unsafe.SliceData(cnames), unsafe.SliceData(cobjs), C.size_t(len(names)), &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(children)
	if err != nil {
		return nil, err
	}
	c := &Checkpoint{ptr: out}
	runtime.SetFinalizer(c, (*Checkpoint).Close)
	return c, nil
}

// Close frees the checkpoint, waiting for a background save (whose error is logged). Its Root
// handles become unusable. Closing twice does nothing.
func (c *Checkpoint) Close() {
	if c == nil || c.ptr == nil {
		return
	}
	runtime.SetFinalizer(c, nil)
	cCheckpointFree(c.ptr)
	c.ptr = nil
}

func (c *Checkpoint) handle() *C.cairn_checkpoint {
	if c == nil {
		return nil
	}
	return c.ptr
}

// Root is the checkpoint's root object; add edges to it with Set. It is borrowed from the
// checkpoint: it keeps the checkpoint open while in use, Close on it does nothing, and it stops
// working when the checkpoint is closed. Take a handle of its own with Share.
func (c *Checkpoint) Root() *Object {
	// A new view per call: a Checkpoint must not point back at its root, or the pair would form a
	// cycle with a finalizer, which the garbage collector never frees.
	root := &Object{ptr: cCheckpointRoot(c.handle()), owner: c}
	runtime.KeepAlive(c)
	return root
}

// CheckpointOption sets a field of cairn_checkpoint_options; unset fields keep their defaults.
type CheckpointOption func(*C.cairn_checkpoint_options)

// WithCompression compresses each payload with zstd, storing it raw when it would not shrink
// (default false).
func WithCompression(on bool) CheckpointOption {
	return func(o *C.cairn_checkpoint_options) { o.compress = cBool(on) }
}

// WithAsync makes Save and Write snapshot the values and write in the background (default
// false). An error shows up on the next Save, Write, Restore or Sync.
func WithAsync(on bool) CheckpointOption {
	return func(o *C.cairn_checkpoint_options) { o.async = cBool(on) }
}

// WithFsync fsyncs the file and its directory for crash safety (default true).
func WithFsync(on bool) CheckpointOption {
	return func(o *C.cairn_checkpoint_options) { o.fsync = cBool(on) }
}

// cBool is b as a cairn_bool (CAIRN_TRUE or CAIRN_FALSE).
func cBool(b bool) C.cairn_bool {
	if b {
		return C.CAIRN_TRUE
	}
	return C.CAIRN_FALSE
}

// SetOptions sets the checkpoint's options: the defaults changed by options (so no options
// restores the defaults).
func (c *Checkpoint) SetOptions(options ...CheckpointOption) error {
	if err := checkOpen("Checkpoint.SetOptions", "checkpoint", c); err != nil {
		return err
	}
	opts := (*C.cairn_checkpoint_options)(C.malloc(C.size_t(unsafe.Sizeof(C.cairn_checkpoint_options{}))))
	defer C.free(unsafe.Pointer(opts))
	if err := cCheckpointOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return err
	}
	for _, set := range options {
		set(opts)
	}
	err := cCheckpointSetOptions(c.handle(), opts)
	runtime.KeepAlive(c)
	return err
}

// SaveCounter is the current value of save_counter (0 before the first save or restore).
func (c *Checkpoint) SaveCounter() (int64, error) {
	if err := checkOpen("Checkpoint.SaveCounter", "checkpoint", c); err != nil {
		return 0, err
	}
	var n C.int64_t
	err := cCheckpointSaveCounter(c.handle(), &n)
	runtime.KeepAlive(c)
	return int64(n), err
}

// Save increments save_counter and writes "<prefix>-<save_counter>" atomically; it returns the
// path written.
func (c *Checkpoint) Save(prefix string) (string, error) {
	if err := checkOpen("Checkpoint.Save", "checkpoint", c); err != nil {
		return "", err
	}
	cprefix := C.CString(prefix)
	defer C.free(unsafe.Pointer(cprefix))
	var path *C.char
	err := cCheckpointSave(c.handle(), cprefix, &path)
	runtime.KeepAlive(c)
	return takeString(path, err)
}

// takeString copies and frees a string the library handed over.
func takeString(p *C.char, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer cFree(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// Write writes the checkpoint to exactly path (atomically), leaving save_counter alone.
func (c *Checkpoint) Write(path string) error {
	if err := checkOpen("Checkpoint.Write", "checkpoint", c); err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := cCheckpointWrite(c.handle(), cpath)
	runtime.KeepAlive(c)
	return err
}

// ExportOption sets a field of cairn_export_options; unset fields keep their defaults.
type ExportOption func(*C.cairn_export_options)

// WithKerasNames lays Cairn's layers and optimizers out as Keras 3 does in a TensorFlow export, so
// that tf.train.Checkpoint(model=<the equivalent Keras model>, optimizer=...) restores them
// (default true); false keeps Cairn's edge names, which a tf.Module of the same structure restores.
func WithKerasNames(on bool) ExportOption {
	return func(o *C.cairn_export_options) { o.keras_names = cBool(on) }
}

// WithSaveCounter includes save_counter in a TensorFlow export (default true; TensorFlow's
// restore expects it).
func WithSaveCounter(on bool) ExportOption {
	return func(o *C.cairn_export_options) { o.save_counter = cBool(on) }
}

// Export writes the checkpoint to path in format, atomically (a failed export leaves an earlier
// file at path as it was), leaving save_counter alone:
//   - WeightsFormatTf: the bundle "<path>.index" + "<path>.data-00000-of-00001" with TensorFlow's
//     object graph; tf.train.load_checkpoint reads every value, tf.train.Checkpoint restores it,
//     and so does Restore;
//   - WeightsFormatCairn: what Write writes;
//   - WeightsFormatSafetensors: every value by its checkpoint key, without an object graph (to
//     save one module under short names use Object.SaveWeights).
//
// Errors: INVALID_ARGUMENT for WeightsFormatAuto or an unknown format, the errors of writing
// (PERMISSION_DENIED, RESOURCE_EXHAUSTED, ... naming the path).
func (c *Checkpoint) Export(path string, format WeightsFormat, options ...ExportOption) error {
	if err := checkOpen("Checkpoint.Export", "checkpoint", c); err != nil {
		return err
	}
	opts := cAlloc[C.cairn_export_options]()
	defer C.free(unsafe.Pointer(opts))
	if err := cExportOptionsInit(opts, C.uint32_t(unsafe.Sizeof(*opts))); err != nil {
		return err
	}
	for _, set := range options {
		set(opts)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := cCheckpointExport(c.handle(), cpath, C.cairn_weights_format(format), opts)
	runtime.KeepAlive(c)
	return err
}

// Sync waits for a background (async) save and returns its error, if any (reported once).
func (c *Checkpoint) Sync() error {
	if err := checkOpen("Checkpoint.Sync", "checkpoint", c); err != nil {
		return err
	}
	err := cCheckpointSync(c.handle())
	runtime.KeepAlive(c)
	return err
}

// Restore restores values from the checkpoint file at path by matching its objects to live ones
// along the same edges. Values whose objects do not exist yet are restored the moment their edge
// is created: they wait on the live objects that will receive them, so closing the checkpoint and
// the status right away loses nothing. An empty path restores nothing
// (TensorFlow's restore(None), e.g. when CheckpointManager.Latest is ""); the status's asserts
// then fail.
//
// path may also be a TensorFlow checkpoint written by tf.train.Checkpoint (a prefix
// "<dir>/ckpt-5", its .index file, or a directory whose `checkpoint` state file names the latest
// one): its object graph is matched by the same rules, after Keras' edge names are mapped onto
// Cairn's layers and optimizers (docs/tf_checkpoints.md), so Checkpoint(model=<a Keras
// Sequential>, optimizer=<Adam>) restores into a Sequential of the same layers and an Adam
// optimizer; each value's CRC32C is checked as it is loaded. A TF1 name-based checkpoint
// (NOT_FOUND) or a safetensors file (INVALID_ARGUMENT) has no object graph: the error says to load
// it by name instead (Object.LoadWeights).
//
// Errors: NOT_FOUND for a missing file, DATA_LOSS for a damaged one, INVALID_ARGUMENT for a dtype
// or shape mismatch (the message names the key). A failed restore leaves the values it already
// assigned.
func (c *Checkpoint) Restore(path string) (*RestoreStatus, error) {
	if err := checkOpen("Checkpoint.Restore", "checkpoint", c); err != nil {
		return nil, err
	}
	var cpath *C.char
	if path != "" {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	var out *C.cairn_restore_status
	err := cCheckpointRestore(c.handle(), cpath, &out)
	runtime.KeepAlive(c)
	if err != nil {
		return nil, err
	}
	rs := &RestoreStatus{ptr: out}
	runtime.SetFinalizer(rs, (*RestoreStatus).Close)
	return rs, nil
}

// RestoreStatus is what Checkpoint.Restore returns: asserts on how well the checkpoint matched
// the live objects. Close it when done (deferred restores go on: they wait on the objects).
type RestoreStatus struct {
	ptr *C.cairn_restore_status
}

// Close frees the status. Unless ExpectPartial was called, the runtime logs a warning listing the
// checkpoint values never restored once the restore ends (the status and checkpoint closed and no
// object waiting for a value). Closing twice does nothing.
func (rs *RestoreStatus) Close() {
	if rs == nil || rs.ptr == nil {
		return
	}
	runtime.SetFinalizer(rs, nil)
	cRestoreStatusFree(rs.ptr)
	rs.ptr = nil
}

func (rs *RestoreStatus) handle() *C.cairn_restore_status {
	if rs == nil {
		return nil
	}
	return rs.ptr
}

// AssertConsumed is a FAILED_PRECONDITION error unless every checkpoint value was restored and
// every live object under the root was matched; the message names every unmatched path.
func (rs *RestoreStatus) AssertConsumed() error {
	if err := checkOpen("RestoreStatus.AssertConsumed", "restore status", rs); err != nil {
		return err
	}
	err := cRestoreStatusAssertConsumed(rs.handle())
	runtime.KeepAlive(rs)
	return err
}

// AssertExistingObjectsMatched is a FAILED_PRECONDITION error unless every live variable under
// the root was matched.
func (rs *RestoreStatus) AssertExistingObjectsMatched() error {
	if err := checkOpen("RestoreStatus.AssertExistingObjectsMatched", "restore status", rs); err != nil {
		return err
	}
	err := cRestoreStatusAssertExistingObjectsMatched(rs.handle())
	runtime.KeepAlive(rs)
	return err
}

// ExpectPartial silences the warning logged when checkpoint values were never restored.
func (rs *RestoreStatus) ExpectPartial() {
	cRestoreStatusExpectPartial(rs.handle())
	runtime.KeepAlive(rs)
}
