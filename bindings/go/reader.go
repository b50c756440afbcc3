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

// CheckpointReader reads a checkpoint file without the program that wrote it
// (tf.train.list_variables / load_variable).
type CheckpointReader struct {
	ptr *C.cairn_checkpoint_reader
}

// CheckpointEntry is one key of a checkpoint: a variable's value, or the serialized object graph
// (the String entry "_CHECKPOINTABLE_OBJECT_GRAPH").
type CheckpointEntry struct {
	Key   string
	DType DType
	Shape []int64
}

// OpenCheckpointReader opens a checkpoint and verifies its header, footer and index. Errors:
// NOT_FOUND for a missing file, DATA_LOSS naming the damaged part.
func OpenCheckpointReader(path string) (*CheckpointReader, error) {
	if err := checkLibrary("OpenCheckpointReader"); err != nil {
		return nil, err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var out *C.cairn_checkpoint_reader
	if err := cCheckpointReaderOpen(cpath, &out); err != nil {
		return nil, err
	}
	r := &CheckpointReader{ptr: out}
	runtime.SetFinalizer(r, (*CheckpointReader).Close)
	return r, nil
}

// Close frees the reader. Closing twice does nothing.
func (r *CheckpointReader) Close() {
	if r == nil || r.ptr == nil {
		return
	}
	runtime.SetFinalizer(r, nil)
	cCheckpointReaderFree(r.ptr)
	r.ptr = nil
}

func (r *CheckpointReader) handle() *C.cairn_checkpoint_reader {
	if r == nil {
		return nil
	}
	return r.ptr
}

// Entries lists the checkpoint's keys in sorted order with their dtypes and shapes.
func (r *CheckpointReader) Entries() []CheckpointEntry {
	p := r.handle()
	entries := make([]CheckpointEntry, int(cCheckpointReaderCount(p)))
	for i := range entries {
		ci := C.size_t(i)
		shape := make([]int64, int(cCheckpointReaderRank(p, ci)))
		for axis := range shape {
			shape[axis] = int64(cCheckpointReaderDim(p, ci, C.size_t(axis)))
		}
		entries[i] = CheckpointEntry{
			Key:   C.GoString(cCheckpointReaderKey(p, ci)),
			DType: DType(cCheckpointReaderDType(p, ci)),
			Shape: shape,
		}
	}
	runtime.KeepAlive(r)
	return entries
}

// Load reads the value of key (checksums verified) into a new tensor on ctx's default device.
// Errors: NOT_FOUND for an unknown key, DATA_LOSS for a damaged payload, INVALID_ARGUMENT for the
// string entry (LoadString reads it).
func (r *CheckpointReader) Load(ctx *Context, key string) (*Tensor, error) {
	if err := checkOpen("CheckpointReader.Load", "reader", r, "context", ctx); err != nil {
		return nil, err
	}
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var out *C.cairn_tensor
	err := cCheckpointReaderLoad(r.handle(), ctx.handle(), ckey, &out)
	runtime.KeepAlive(r)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// LoadString reads the bytes of a string entry (the serialized object graph).
func (r *CheckpointReader) LoadString(key string) ([]byte, error) {
	if err := checkOpen("CheckpointReader.LoadString", "reader", r); err != nil {
		return nil, err
	}
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var buf *C.char
	var size C.size_t
	err := cCheckpointReaderLoadString(r.handle(), ckey, &buf, &size)
	runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	defer cFree(unsafe.Pointer(buf))
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(size))...), nil
}
