package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

extern __thread uintptr_t gocairn_scope; // scope.go

// What the binding records of a tensor it takes: its data size and the Scope it goes into.
typedef struct gocairn_adopted {
  size_t nbytes;
  uintptr_t scope;
} gocairn_adopted;

// cairn_tensor_free of a handle passed as an integer, which spares Close cgo's check of a pointer
// argument for Go pointers.
static void gocairn_tensor_free(uintptr_t t) { cairn_tensor_free((cairn_tensor *)t); }

// Frees the handles of tiny tensors whose Close left the free to the next cgo call (a
// tensorChunk's closed); op.go's gocairn_run1 calls it too.
void gocairn_free_closed(const uintptr_t *closed, size_t n) {
  for (size_t i = 0; i < n; i++) cairn_tensor_free((cairn_tensor *)closed[i]);
}

// One cgo call for both facts about a new tensor, and for the frees that Close held back.
static gocairn_adopted gocairn_adopt(uintptr_t t, const uintptr_t *closed, size_t n_closed) {
  gocairn_free_closed(closed, n_closed);
  gocairn_adopted a = {cairn_tensor_nbytes((const cairn_tensor *)t), gocairn_scope};
  return a;
}
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Tensor is an immutable value: a dtype, a shape (rank <= 8) and a buffer on a device. It may be
// read from several goroutines at once. It stays valid after its Context is closed.
//
// Close frees it at once, and so does the Scope it was made in (NewScope, Scoped) when that
// closes. A Tensor never closed is freed by the garbage collector, once it and the tensors made
// around the same time on the same thread (up to 63 others sharing its backstop, see
// tensorChunk) are all unreachable; the binding runs the collector when the data of open Tensors
// grew enough (SetNativeGCPercent). A tensor kept for long keeps the forgotten tensors of its
// chunk in memory as long: close what you keep, or use a Scope.
type Tensor struct {
	ptr    *C.cairn_tensor
	nbytes int64 // its data size, counted in NativeBytes; ^size (negative) once its Scope freed it
}

// dataBytes is the tensor's data size, closed or not.
func (t *Tensor) dataBytes() int64 {
	if t.nbytes < 0 {
		return ^t.nbytes
	}
	return t.nbytes
}

// tinyTensorBytes: a tensor of less data than this leaves NativeBytes when its chunk is collected,
// not when it is closed, which spares Close an atomic add (measured: Add16 217 -> 205 ns/op).
// Closed tiny tensors then wait for a collection to leave the count: at 255 bytes each, the
// trigger's 64 MiB minimum is 260,000 of them per collection, so the collections they cause cost
// about a nanosecond per op.
const tinyTensorBytes = 256

// tensorChunkSize is how many Tensors share one finalizer.
const tensorChunkSize = 64

// tensorChunk holds Tensors side by side under one finalizer, the backstop that frees those never
// closed. A finalizer per Tensor (runtime.SetFinalizer to set and clear it) costs ~100 ns per
// tensor, more than the op it wraps; runtime.AddCleanup and Stop cost more still. Each Tensor of
// a chunk is an interior pointer that keeps the whole chunk reachable, so the finalizer runs only
// when none of them is reachable, and then frees the C tensors of the slots still open. Slots are
// never reused, so a closed Tensor stays closed (Close twice, use after Close) while anyone holds
// it. The cost: a forgotten tensor waits for its chunk's other tensors to become unreachable.
type tensorChunk struct {
	slots   [tensorChunkSize]Tensor
	next    int   // the next free slot; only the goroutine that took the chunk from tensorChunks touches it
	pending int64 // data bytes of its new tensors not yet in NativeBytes; touched as next is
	// The C handles of tiny tensors closed while this chunk was in tensorChunks, not yet freed:
	// the next cgo call that makes a tensor into this chunk frees them (gocairn_free_closed), so
	// that Close makes no cgo call of its own (~250 instructions). Touched as next is.
	closed  [closedBatch]C.uintptr_t
	nClosed int
}

// closedBatch is how many Closes of tiny tensors a chunk holds back at most: the 16th frees them
// in one cgo call. A chunk holds back 16 x 255 bytes of data at most, and only until the next
// tensor made on its P (or its finalizer, if the collector took it out of tensorChunks first).
const closedBatch = 16

// pendingNativeBytes is how many bytes of new tensors a chunk counts before adding them to
// NativeBytes: one atomic add per 64 KiB of small tensors rather than one per tensor. What chunks
// hold back is far below the trigger's minimum growth.
const pendingNativeBytes = 64 << 10

// tensorChunks holds the chunks with free slots. A pool gives a chunk to one goroutine at a time
// without a lock, and lets go of it in garbage collections, so that a chunk whose slots all became
// unreachable is finalized even when no tensor is made after them.
var tensorChunks sync.Pool

// free is the chunk's finalizer: it frees the tensors that were never closed and those whose free
// Close held back, and takes off NativeBytes what its slots still count (the open ones, and the
// tiny ones closed or not), less what was never added (pending).
func (c *tensorChunk) free() {
	C.gocairn_free_closed(c.takeClosed())
	counted := -c.pending
	for i := range c.slots[:c.next] {
		t := &c.slots[i]
		if size := t.dataBytes(); t.ptr != nil || size < tinyTensorBytes {
			counted += size
		}
		if p := t.ptr; p != nil {
			t.ptr = nil
			C.gocairn_tensor_free(cHandle(unsafe.Pointer(p)))
		}
	}
	if counted >= 0 {
		untrackNative(counted)
	} else {
		native.live.Add(-counted) // never a collection from the finalizer goroutine
	}
}

// takeClosed hands the frees the chunk held back to the cgo call about to be made, which must
// free them (gocairn_free_closed); the array stays valid through the call.
func (c *tensorChunk) takeClosed() (*C.uintptr_t, C.size_t) {
	n := c.nClosed
	c.nClosed = 0
	return &c.closed[0], C.size_t(n)
}

// takeChunk is a chunk with a free slot, for this goroutine alone until adopt or release.
func takeChunk() *tensorChunk {
	c, _ := tensorChunks.Get().(*tensorChunk)
	if c == nil {
		c = new(tensorChunk)
		runtime.SetFinalizer(c, (*tensorChunk).free)
	}
	return c
}

// release gives back a chunk taken for a tensor that was not made.
func (c *tensorChunk) release() { tensorChunks.Put(c) }

// newTensor takes ownership of a C tensor.
func newTensor(p *C.cairn_tensor) *Tensor {
	c := takeChunk()
	closed, nClosed := c.takeClosed()
	a := C.gocairn_adopt(cHandle(unsafe.Pointer(p)), closed, nClosed)
	return c.adopt(p, int64(a.nbytes), uintptr(a.scope))
}

// adopt takes ownership of a C tensor of nbytes bytes of data, made on this thread while scope (a
// gocairn_scope value) was its innermost Scope, into the chunk, and releases the chunk unless it
// is full. The cgo call that made the tensor freed what the chunk held back (takeClosed), so a
// full chunk holds nothing back.
func (c *tensorChunk) adopt(p *C.cairn_tensor, nbytes int64, scope uintptr) *Tensor {
	t := &c.slots[c.next]
	t.ptr = p
	t.nbytes = nbytes
	c.next++
	c.pending += nbytes
	if c.pending >= pendingNativeBytes || c.next == tensorChunkSize {
		n := c.pending
		c.pending = 0
		trackNative(n)
	}
	if c.next < tensorChunkSize {
		c.release()
	}
	if scope != 0 {
		scopeOf(scope).add(t)
	}
	return t
}

// Close frees the tensor handle. Closing twice does nothing. A tensor of less than 256 bytes of
// data is freed in the cgo call of the next tensor made on the same P (Go's per-thread scheduler
// slot), or with 15 others closed there, which spares Close a cgo call (~30 ns); the rest are
// freed at once.
func (t *Tensor) Close() {
	if t == nil || t.ptr == nil {
		return
	}
	p := t.ptr
	t.ptr = nil
	if t.nbytes < tinyTensorBytes {
		freeLater(p)
		return
	}
	C.gocairn_tensor_free(cHandle(unsafe.Pointer(p)))
	untrackNative(t.nbytes)
}

// freeLater holds a tiny tensor's free back in a chunk of tensorChunks, for the next cgo call
// that makes a tensor into that chunk; the closedBatch'th frees them all at once.
func freeLater(p *C.cairn_tensor) {
	c, _ := tensorChunks.Get().(*tensorChunk)
	if c == nil {
		C.gocairn_tensor_free(cHandle(unsafe.Pointer(p)))
		return
	}
	c.closed[c.nClosed] = cHandle(unsafe.Pointer(p))
	c.nClosed++
	if c.nClosed == closedBatch {
		C.gocairn_free_closed(c.takeClosed())
	}
	c.release()
}

// freeInScope is Close by the Tensor's Scope, which marks it for the error of a later use.
func (t *Tensor) freeInScope() {
	if t != nil && t.ptr != nil {
		t.Close()
		t.nbytes = ^t.nbytes
	}
}

// handle is the C tensor, NULL for a nil or closed Tensor.
func (t *Tensor) handle() *C.cairn_tensor {
	if t == nil {
		return nil
	}
	return t.ptr
}

// use is the C tensor for a call of fn, or the binding's error for a nil or closed Tensor; what
// names the argument in that error ("tensor", "input 1").
func (t *Tensor) use(fn, what string) (*C.cairn_tensor, error) {
	if t == nil || t.ptr == nil {
		return nil, t.closedError(fn, what)
	}
	return t.ptr, nil
}

// closedError is the error of using a nil or closed Tensor as what in a call of fn.
func (t *Tensor) closedError(fn, what string) error {
	if t != nil && t.ptr == nil && t.nbytes < 0 {
		return newError(CodeFailedPrecondition, fn+": "+what+" is closed (freed by its Scope: Keep it, "+
			"or return it from Scoped, to use it after the Scope closes)")
	}
	return handleError(fn, what, t == nil)
}

// NewTensor creates a tensor on ctx's default device by copying data, row-major. len(data) must
// equal the product of shape (an empty shape is a scalar), and no dimension may be negative.
func NewTensor[E Element](ctx *Context, shape []int64, data []E) (*Tensor, error) {
	var zero E
	return newTensorFrom("NewTensor", ctx, DTypeOf[E](), shape, unsafe.Pointer(unsafe.SliceData(data)),
		len(data), unsafe.Sizeof(zero))
}

// NewFloat16Tensor creates a float16 tensor from the elements' IEEE binary16 bits.
func NewFloat16Tensor(ctx *Context, shape []int64, bits []uint16) (*Tensor, error) {
	return newTensorFrom("NewFloat16Tensor", ctx, Float16, shape, unsafe.Pointer(unsafe.SliceData(bits)), len(bits), 2)
}

// NewBFloat16Tensor creates a bfloat16 tensor from the elements' bits (the top half of a float32).
func NewBFloat16Tensor(ctx *Context, shape []int64, bits []uint16) (*Tensor, error) {
	return newTensorFrom("NewBFloat16Tensor", ctx, BFloat16, shape, unsafe.Pointer(unsafe.SliceData(bits)), len(bits), 2)
}

// NewTensorFromBytes creates a tensor of any fixed-size dtype from its raw bytes (native byte order).
func NewTensorFromBytes(ctx *Context, dtype DType, shape []int64, data []byte) (*Tensor, error) {
	size := dtype.Size()
	if size == 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("NewTensorFromBytes: %v has no fixed size in bytes", dtype))
	}
	if len(data)%size != 0 {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("NewTensorFromBytes: %d bytes are not a whole number of %d-byte %v values",
			len(data), size, dtype))
	}
	return newTensorFrom("NewTensorFromBytes", ctx, dtype, shape, unsafe.Pointer(unsafe.SliceData(data)), len(data)/size, uintptr(size))
}

// MaxRank is the most dimensions a tensor may have.
const MaxRank = 8

// newTensorFrom checks, in Go terms and naming fn, what the C API would refuse (a closed context,
// a bad shape, the wrong number of values), then copies n values of elemSize bytes from data.
func newTensorFrom(fn string, ctx *Context, dtype DType, shape []int64, data unsafe.Pointer, n int, elemSize uintptr) (*Tensor, error) {
	cctx, err := ctx.use(fn)
	if err != nil {
		return nil, err
	}
	if len(shape) > MaxRank {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: shape %v has %d dimensions (at most %d)", fn, shape, len(shape), MaxRank))
	}
	need := int64(1)
	for _, d := range shape {
		if d < 0 {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: shape %v has a negative dimension", fn, shape))
		}
		if d != 0 && need > math.MaxInt64/d {
			return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: shape %v has too many elements", fn, shape))
		}
		need *= d
	}
	if int64(n) != need {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("%s: %d values for shape %v (needs %d)", fn, n, shape, need))
	}
	var out *C.cairn_tensor
	err = cTensorCreate(cctx, C.cairn_dtype(dtype), (*C.int64_t)(unsafe.SliceData(shape)),
		C.size_t(len(shape)), data, C.size_t(uintptr(n)*elemSize), &out)
	runtime.KeepAlive(ctx)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// DType is the tensor's element type; InvalidDType after Close.
func (t *Tensor) DType() DType {
	d := DType(cTensorDType(t.handle()))
	runtime.KeepAlive(t)
	return d
}

// Rank is the number of dimensions.
func (t *Tensor) Rank() int {
	r := int(cTensorRank(t.handle()))
	runtime.KeepAlive(t)
	return r
}

// Shape is the tensor's dimensions; empty for a scalar.
func (t *Tensor) Shape() []int64 {
	p := t.handle()
	shape := make([]int64, int(cTensorRank(p)))
	for i := range shape {
		shape[i] = int64(cTensorDim(p, C.size_t(i)))
	}
	runtime.KeepAlive(t)
	return shape
}

// NumElements is the number of elements (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	n := int64(cTensorNumElements(t.handle()))
	runtime.KeepAlive(t)
	return n
}

// NumBytes is the size of the tensor's data in bytes.
func (t *Tensor) NumBytes() int {
	n := int(cTensorNbytes(t.handle()))
	runtime.KeepAlive(t)
	return n
}

// Device is the name of the device holding the tensor, e.g. "cpu"; "" after Close.
func (t *Tensor) Device() string {
	name := C.GoString(cTensorDevice(t.handle()))
	runtime.KeepAlive(t)
	return name
}

// String is "Tensor(<dtype><shape> on <device>)", e.g. "Tensor(float32[2 2] on cpu)", or
// "Tensor(closed)".
func (t *Tensor) String() string {
	if t.handle() == nil {
		return "Tensor(closed)"
	}
	return fmt.Sprintf("Tensor(%v%v on %s)", t.DType(), t.Shape(), t.Device())
}

// CopyToDevice returns a tensor with the same value on device ("cpu", "vulkan", "vulkan:N"); on
// the device the tensor is already on, the two share one buffer.
func (t *Tensor) CopyToDevice(ctx *Context, device string) (*Tensor, error) {
	cctx, err := ctx.use("Tensor.CopyToDevice")
	if err != nil {
		return nil, err
	}
	ct, err := t.use("Tensor.CopyToDevice", "tensor")
	if err != nil {
		return nil, err
	}
	name := C.CString(device)
	defer C.free(unsafe.Pointer(name))
	var out *C.cairn_tensor
	err = cTensorCopyToDevice(cctx, ct, name, &out)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Read copies the tensor's elements into a new slice. E must match the dtype (float32 for
// Float32, bool for Bool, ...).
func Read[E Element](t *Tensor) ([]E, error) {
	if err := t.expect("Read", DTypeOf[E]()); err != nil {
		return nil, err
	}
	out := make([]E, t.NumElements())
	if err := readElements(t, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadInto copies the tensor's elements into dst, which must hold exactly NumElements of the
// tensor's dtype.
func ReadInto[E Element](t *Tensor, dst []E) error {
	if err := t.expect("ReadInto", DTypeOf[E]()); err != nil {
		return err
	}
	if n := t.NumElements(); int64(len(dst)) != n {
		return newError(CodeInvalidArgument, fmt.Sprintf("ReadInto: dst holds %d values but the tensor has %d", len(dst), n))
	}
	return readElements(t, dst)
}

func readElements[E Element](t *Tensor, dst []E) error {
	var zero E
	data := unsafe.Pointer(unsafe.SliceData(dst))
	if err := t.readRaw(data, uintptr(len(dst))*unsafe.Sizeof(zero)); err != nil {
		return err
	}
	if _, isBool := any(zero).(bool); isBool {
		// A Go bool must be 0 or 1; the library stores a bool in a byte, so make sure.
		for i, b := range unsafe.Slice((*uint8)(data), len(dst)) {
			if b > 1 {
				*(*uint8)(unsafe.Add(data, i)) = 1
			}
		}
	}
	return nil
}

// Float16Bits returns a float16 tensor's elements as IEEE binary16 bits.
func (t *Tensor) Float16Bits() ([]uint16, error) { return t.halfBits("Tensor.Float16Bits", Float16) }

// BFloat16Bits returns a bfloat16 tensor's elements as their bits.
func (t *Tensor) BFloat16Bits() ([]uint16, error) { return t.halfBits("Tensor.BFloat16Bits", BFloat16) }

func (t *Tensor) halfBits(fn string, dtype DType) ([]uint16, error) {
	if err := t.expect(fn, dtype); err != nil {
		return nil, err
	}
	out := make([]uint16, t.NumElements())
	if err := t.readRaw(unsafe.Pointer(unsafe.SliceData(out)), uintptr(len(out))*2); err != nil {
		return nil, err
	}
	return out, nil
}

// Bytes copies the tensor's data, whatever its dtype, as raw bytes in native byte order.
func (t *Tensor) Bytes() ([]byte, error) {
	if err := t.expect("Tensor.Bytes", InvalidDType); err != nil {
		return nil, err
	}
	out := make([]byte, t.NumBytes())
	if err := t.readRaw(unsafe.Pointer(unsafe.SliceData(out)), uintptr(len(out))); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tensor) readRaw(dst unsafe.Pointer, nbytes uintptr) error {
	err := cTensorRead(t.handle(), dst, C.size_t(nbytes))
	runtime.KeepAlive(t)
	return err
}

// expect checks that t is open and, unless dtype is InvalidDType, has that dtype.
func (t *Tensor) expect(fn string, dtype DType) error {
	if _, err := t.use(fn, "tensor"); err != nil {
		return err
	}
	if have := t.DType(); dtype != InvalidDType && have != dtype {
		return newError(CodeInvalidArgument, fmt.Sprintf("%s: the tensor is %v, not %v", fn, have, dtype))
	}
	return nil
}
