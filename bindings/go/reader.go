package cairn

/*
#include <stdlib.h>
#include "cairn/cairn.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// CheckpointReader reads a file of weights by key without the program that wrote it
// (tf.train.list_variables / load_variable, safetensors' safe_open). It reads the three formats
// (Format says which): Cairn checkpoint files; TensorFlow checkpoints (tensor_bundle V2, and TF1
// name-based ones) given by their prefix ("<dir>/ckpt-5"), their .index file, or a directory whose
// `checkpoint` state file names the latest one; and safetensors, given by a .safetensors file, a
// sharded model's index .json, or a directory holding model.safetensors.index.json or
// model.safetensors. A reader may be used from several goroutines at once.
type CheckpointReader struct {
	ptr *C.cairn_checkpoint_reader
}

// CheckpointEntry is one key of a checkpoint: a variable's value, or the serialized object graph
// (the String entry "_CHECKPOINTABLE_OBJECT_GRAPH"; TensorFlow's string tensors are String too).
// DType is what Load returns: safetensors' F8 types load as Float32, and a dtype Cairn lacks
// (uint16, complex128, U32, ...) is InvalidDType, whose Load fails with UNIMPLEMENTED naming the
// key. TypeName is the
// dtype as the file names it: "float32" in Cairn and TensorFlow files, "F32" or "F8_E4M3" in
// safetensors.
type CheckpointEntry struct {
	Key      string
	DType    DType
	TypeName string
	Shape    []int64
}

// OpenCheckpointReader opens a Cairn checkpoint, a TensorFlow checkpoint or a safetensors file
// (see CheckpointReader for the paths each takes; the format is told from the file's bytes and the
// files beside it) and verifies its header and index. Errors: NOT_FOUND for a missing file,
// DATA_LOSS naming the damaged part.
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

// Format is the format of the file the reader reads; WeightsFormatAuto after Close.
func (r *CheckpointReader) Format() WeightsFormat {
	f := WeightsFormat(cCheckpointReaderFormat(r.handle()))
	runtime.KeepAlive(r)
	return f
}

// Entries lists the checkpoint's keys in byte order with their dtypes and shapes; nothing after
// Close.
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
			Key:      C.GoString(cCheckpointReaderKey(p, ci)),
			DType:    DType(cCheckpointReaderDType(p, ci)),
			TypeName: C.GoString(cCheckpointReaderTypeName(p, ci)),
			Shape:    shape,
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

// LoadString reads the bytes of a string entry: the serialized object graph, or element 0 of a
// TensorFlow string tensor (LoadStringElement reads the others).
func (r *CheckpointReader) LoadString(key string) ([]byte, error) {
	return r.loadString("CheckpointReader.LoadString", key, func(p *C.cairn_checkpoint_reader, ckey *C.char, buf **C.char, size *C.size_t) error {
		return cCheckpointReaderLoadString(p, ckey, buf, size)
	})
}

// LoadStringElement reads element index (row-major) of a string value: a TensorFlow string
// tensor, or the object graph of a Cairn file (one element). Errors: NOT_FOUND for an unknown
// key, INVALID_ARGUMENT for a value that is not a string or an index past its elements (or
// negative), DATA_LOSS for a damaged value.
func (r *CheckpointReader) LoadStringElement(key string, index int) ([]byte, error) {
	const fn = "CheckpointReader.LoadStringElement"
	if index < 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: index %d of '%s' is negative", fn, index, key))
	}
	return r.loadString(fn, key, func(p *C.cairn_checkpoint_reader, ckey *C.char, buf **C.char, size *C.size_t) error {
		return cCheckpointReaderLoadStringElement(p, ckey, C.size_t(index), buf, size)
	})
}

// loadString runs load, one of the C calls handing over a string buffer, and copies the buffer.
func (r *CheckpointReader) loadString(fn, key string,
	load func(*C.cairn_checkpoint_reader, *C.char, **C.char, *C.size_t) error) ([]byte, error) {
	if err := checkOpen(fn, "reader", r); err != nil {
		return nil, err
	}
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var buf *C.char
	var size C.size_t
	err := load(r.handle(), ckey, &buf, &size)
	runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	defer cFree(unsafe.Pointer(buf))
	return copyBytes(unsafe.Pointer(buf), size), nil
}

// Verify checks the stored checksum of key without keeping its value (Load checks it too).
// checked is false when the file keeps no checksum for the key: a safetensors tensor written
// without Cairn's opt-in checksum (WithChecksums). Errors: NOT_FOUND for an unknown key,
// DATA_LOSS naming the key when the bytes do not match.
func (r *CheckpointReader) Verify(key string) (checked bool, err error) {
	if err := checkOpen("CheckpointReader.Verify", "reader", r); err != nil {
		return false, err
	}
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	var got C.cairn_bool
	err = cCheckpointReaderVerify(r.handle(), ckey, &got)
	runtime.KeepAlive(r)
	return err == nil && got != 0, err
}

// Metadata is a safetensors file's "__metadata__" (the first shard's for a sharded model), Cairn's
// checksum keys ("cairn.checksum.<name>") included; empty for the other formats and after Close.
func (r *CheckpointReader) Metadata() map[string]string {
	p := r.handle()
	n := int(cCheckpointReaderMetadataCount(p))
	meta := make(map[string]string, n)
	for i := 0; i < n; i++ {
		ci := C.size_t(i)
		meta[C.GoString(cCheckpointReaderMetadataKey(p, ci))] = C.GoString(cCheckpointReaderMetadataValue(p, ci))
	}
	runtime.KeepAlive(r)
	return meta
}
