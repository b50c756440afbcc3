package cairn

/*
#include <stdint.h>
#include <stdlib.h>
#include "cairn/cairn.h"

extern __thread uintptr_t gocairn_scope; // scope.go
void gocairn_free_closed(const uintptr_t *closed, size_t n); // tensor.go

// What gocairn_run1 gives back: the status, and when it is NULL the output, its data size and the
// thread's innermost Scope (what newTensor's gocairn_adopt would fetch in a second cgo call).
typedef struct gocairn_run1_result {
  cairn_status *status;
  cairn_tensor *out;
  size_t nbytes;
  uintptr_t scope;
} gocairn_run1_result;

// cairn_op_run of an op with one output and at most 4 inputs, which come by value, as the result
// goes back, after freeing the n_closed handles that Close held back in the output's tensorChunk
// (first, so that the output may reuse their memory). The context, the
// inputs and attrs (C memory, from packAttrs) come as integers: cgo checks each pointer argument
// for Go pointers, ~50 instructions apiece (a quarter of the binding's cost per Add), and these
// never are.
static gocairn_run1_result gocairn_run1(uintptr_t ctx, const char *op, uintptr_t in0, uintptr_t in1,
                                        uintptr_t in2, uintptr_t in3, size_t n_inputs,
                                        uintptr_t attrs, size_t n_attrs,
                                        const uintptr_t *closed, size_t n_closed) {
  gocairn_free_closed(closed, n_closed);
  cairn_tensor *in[4] = {(cairn_tensor *)in0, (cairn_tensor *)in1, (cairn_tensor *)in2,
                         (cairn_tensor *)in3};
  gocairn_run1_result r = {NULL, NULL};
  r.status = cairn_op_run((cairn_context *)ctx, op, in, n_inputs, (const cairn_attr *)attrs,
                          n_attrs, &r.out, 1);
  if (r.status == NULL) {
    r.nbytes = cairn_tensor_nbytes(r.out);
    r.scope = gocairn_scope;
  }
  return r;
}
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Attr is one attribute of an op call. Make one with IntAttr, FloatAttr, BoolAttr, IntsAttr,
// StringAttr, DTypeAttr or FloatsAttr.
type Attr struct {
	name   string
	kind   AttrKind
	i      int64
	f      float64
	ints   []int64
	s      string
	dtype  DType
	floats []float64
}

// IntAttr is an INT attribute.
func IntAttr(name string, v int64) Attr { return Attr{name: name, kind: AttrInt, i: v} }

// FloatAttr is a FLOAT attribute.
func FloatAttr(name string, v float64) Attr { return Attr{name: name, kind: AttrFloat, f: v} }

// IntsAttr is an INTS attribute (a list of integers).
func IntsAttr(name string, v []int64) Attr { return Attr{name: name, kind: AttrInts, ints: v} }

// StringAttr is a STRING attribute.
func StringAttr(name string, v string) Attr { return Attr{name: name, kind: AttrString, s: v} }

// DTypeAttr is a DTYPE attribute.
func DTypeAttr(name string, v DType) Attr { return Attr{name: name, kind: AttrDType, dtype: v} }

// FloatsAttr is a FLOATS attribute (a list of floats).
func FloatsAttr(name string, v []float64) Attr { return Attr{name: name, kind: AttrFloats, floats: v} }

// BoolAttr is a BOOL attribute.
func BoolAttr(name string, v bool) Attr {
	a := Attr{name: name, kind: AttrBool}
	if v {
		a.i = 1
	}
	return a
}

// Name is the attribute's name.
func (a Attr) Name() string { return a.name }

// Kind is the attribute's kind.
func (a Attr) Kind() AttrKind { return a.kind }

// InferOutputs as RunOp's numOutputs asks the library for the op's output count
// (cairn_op_num_outputs): fixed for most ops, taken from the count attribute (num_split, num)
// for ops with a variadic output.
const InferOutputs = -1

// RunOp runs an op eagerly by its registry name ("Add", "MatMul", ...). The generated package
// cairn.dev/cairn/ops wraps it with one typed function per op; call RunOp directly for ops newer
// than that package. numOutputs is the op's output count, or InferOutputs to have the library
// work it out from op and attrs. The caller owns the outputs.
func RunOp(ctx *Context, op string, inputs []*Tensor, attrs []Attr, numOutputs int) ([]*Tensor, error) {
	if numOutputs < InferOutputs {
		return nil, newError(CodeInvalidArgument, fmt.Sprintf("RunOp: %s: numOutputs is %d", op, numOutputs))
	}
	call, err := prepareOp(ctx, op, inputs, attrs)
	if err != nil {
		return nil, err
	}
	defer call.free()
	cctx, name, cattrs := call.ctx, call.name, call.attrs
	if numOutputs == InferOutputs {
		if numOutputs, err = countOutputs(name, cattrs, len(attrs)); err != nil {
			return nil, err
		}
	}
	handles := make([]*C.cairn_tensor, len(inputs)+numOutputs) // one allocation for both arrays
	in, out := handles[:len(inputs):len(inputs)], handles[len(inputs):]
	for i, t := range inputs {
		in[i] = t.handle()
	}
	err = cOpRun(cctx, name, unsafe.SliceData(in), C.size_t(len(in)), cattrs, C.size_t(len(attrs)),
		unsafe.SliceData(out), C.size_t(numOutputs))
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	tensors := make([]*Tensor, numOutputs)
	for i, p := range out {
		tensors[i] = newTensor(p)
	}
	return tensors, nil
}

// opCall is what RunOp and RunOp1 hand to C for one op call.
type opCall struct {
	ctx      *C.cairn_context
	name     *C.char
	attrs    *C.cairn_attr
	ownsName bool // name is a C.CString of its own rather than the registry's
}

// prepareOp checks ctx and inputs in Go terms, naming op in the error, and makes the op name and
// attributes C's. Free the result with free.
func prepareOp(ctx *Context, op string, inputs []*Tensor, attrs []Attr) (opCall, error) {
	cctx, err := ctx.use(op)
	if err != nil {
		return opCall{}, err
	}
	if !allOpen(inputs) {
		return opCall{}, checkEach(op, "input", inputs)
	}
	call := opCall{ctx: cctx}
	var known bool
	if call.name, known = lookupOpName(op); !known { // let the library report the unknown name
		call.name, call.ownsName = C.CString(op), true
	}
	if len(attrs) > 0 {
		call.attrs = packAttrs(attrs)
	}
	return call, nil
}

func (c opCall) free() {
	if c.ownsName {
		C.free(unsafe.Pointer(c.name))
	}
	if c.attrs != nil {
		C.free(unsafe.Pointer(c.attrs))
	}
}

// runOp1Inputs is the most inputs RunOp1 passes in its single cgo call (gocairn_run1).
const runOp1Inputs = 4

// RunOp1 is RunOp for an op with exactly one output, returned without a slice around it; the
// generated package cairn.dev/cairn/ops calls it. With at most 4 inputs it makes one cgo call and
// no allocation besides the result's.
func RunOp1(ctx *Context, op string, inputs []*Tensor, attrs []Attr) (*Tensor, error) {
	if len(inputs) > runOp1Inputs {
		outs, err := RunOp(ctx, op, inputs, attrs, 1)
		if err != nil {
			return nil, err
		}
		return outs[0], nil
	}
	call, err := prepareOp(ctx, op, inputs, attrs)
	if err != nil {
		return nil, err
	}
	var in [runOp1Inputs]C.uintptr_t
	for i, t := range inputs {
		in[i] = cHandle(unsafe.Pointer(t.ptr))
	}
	c := takeChunk()
	closed, nClosed := c.takeClosed()
	r := C.gocairn_run1(cHandle(unsafe.Pointer(call.ctx)), call.name, in[0], in[1], in[2], in[3],
		C.size_t(len(inputs)), cHandle(unsafe.Pointer(call.attrs)), C.size_t(len(attrs)), closed, nClosed)
	call.free() // not deferred: nothing between prepareOp and here returns or panics (a defer costs ~50 instructions)
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(inputs)
	if err := takeStatus(r.status); err != nil {
		c.release()
		return nil, err
	}
	return c.adopt(r.out, int64(r.nbytes), uintptr(r.scope)), nil
}

// cHandle passes C memory to a C helper of this package as an integer, which cgo does not check
// for Go pointers.
func cHandle(p unsafe.Pointer) C.uintptr_t { return C.uintptr_t(uintptr(p)) }

// NumOutputs is how many outputs op produces when called with attrs (cairn_op_num_outputs);
// attributes not given take their defaults.
func NumOutputs(op string, attrs []Attr) (int, error) {
	name := C.CString(op)
	defer C.free(unsafe.Pointer(name))
	var cattrs *C.cairn_attr
	if len(attrs) > 0 {
		cattrs = packAttrs(attrs)
		defer C.free(unsafe.Pointer(cattrs))
	}
	return countOutputs(name, cattrs, len(attrs))
}

func countOutputs(op *C.char, attrs *C.cairn_attr, nAttrs int) (int, error) {
	var n C.size_t
	if err := cOpNumOutputs(op, attrs, C.size_t(nAttrs), &n); err != nil {
		return 0, err
	}
	return int(n), nil
}

// opNameEntry is one entry of opNameCache.
type opNameEntry struct {
	op   string  // holds the bytes, so their address is not reused for another string while cached
	name *C.char // registeredOpNames()[op]
}

// opNameCache remembers the registry names of recent op names by the address of their bytes: the
// generated ops pass string constants, so a repeated op finds its C name with one atomic load and
// two compares instead of hashing the string into registeredOpNames. Two strings with the same
// bytes at the same address and the same length are the same string.
var opNameCache [256]atomic.Pointer[opNameEntry]

// lookupOpName is the library's static copy of op's name, or false for an unregistered op.
func lookupOpName(op string) (*C.char, bool) {
	p := unsafe.StringData(op)
	slot := &opNameCache[(uint64(uintptr(unsafe.Pointer(p)))*0x9e3779b97f4a7c15)>>56]
	if e := slot.Load(); e != nil && unsafe.StringData(e.op) == p && len(e.op) == len(op) {
		return e.name, true
	}
	name, ok := registeredOpNames()[op]
	if ok {
		slot.Store(&opNameEntry{op: op, name: name})
	}
	return name, ok
}

// registeredOpNames maps each registered op name to the library's static copy of it, so running
// a known op needs no C string of its own.
var registeredOpNames = sync.OnceValue(func() map[string]*C.char {
	n := int(cOpCount())
	names := make(map[string]*C.char, n)
	for i := 0; i < n; i++ {
		p := cOpName(C.size_t(i))
		names[C.GoString(p)] = p
	}
	return names
})

// packAttrs lays attrs out as C cairn_attr structs followed by their arrays and strings, all in
// one C allocation (cgo forbids C from holding pointers into Go memory). Free it with C.free.
func packAttrs(attrs []Attr) *C.cairn_attr {
	head := uintptr(len(attrs)) * unsafe.Sizeof(C.cairn_attr{})
	arrays, strs := uintptr(0), uintptr(0)
	for _, a := range attrs {
		arrays += uintptr(len(a.ints))*8 + uintptr(len(a.floats))*8
		strs += uintptr(len(a.name)) + 1
		if a.kind == AttrString {
			strs += uintptr(len(a.s)) + 1
		}
	}
	buf := C.malloc(C.size_t(head + arrays + strs))
	arrayAt, strAt := head, head+arrays // arrays first: head is a multiple of 8
	take := func(at *uintptr, n uintptr) unsafe.Pointer {
		p := unsafe.Add(buf, *at)
		*at += n
		return p
	}
	cstring := func(s string) *C.char {
		p := take(&strAt, uintptr(len(s))+1)
		b := unsafe.Slice((*byte)(p), len(s)+1)
		b[copy(b, s)] = 0
		return (*C.char)(p)
	}
	out := unsafe.Slice((*C.cairn_attr)(buf), len(attrs))
	for i, a := range attrs {
		c := C.cairn_attr{
			name:  cstring(a.name),
			kind:  C.cairn_attr_kind(a.kind),
			i:     C.int64_t(a.i),
			f:     C.double(a.f),
			dtype: C.cairn_dtype(a.dtype),
		}
		if len(a.ints) > 0 {
			p := take(&arrayAt, uintptr(len(a.ints))*8)
			copy(unsafe.Slice((*int64)(p), len(a.ints)), a.ints)
			c.ints, c.n_ints = (*C.int64_t)(p), C.size_t(len(a.ints))
		}
		if len(a.floats) > 0 {
			p := take(&arrayAt, uintptr(len(a.floats))*8)
			copy(unsafe.Slice((*float64)(p), len(a.floats)), a.floats)
			c.floats, c.n_floats = (*C.double)(p), C.size_t(len(a.floats))
		}
		if a.kind == AttrString {
			c.s = cstring(a.s)
		}
		out[i] = c
	}
	return (*C.cairn_attr)(buf)
}

// OpNames lists the registered ops in name order.
func OpNames() []string {
	n := int(cOpCount())
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoString(cOpName(C.size_t(i)))
	}
	return names
}

// OpRegistryJSON is the whole op registry as JSON (see cairn_op_registry_json).
func OpRegistryJSON() (string, error) {
	var p *C.char
	if err := cOpRegistryJSON(&p); err != nil {
		return "", err
	}
	defer cFree(unsafe.Pointer(p))
	return C.GoString(p), nil
}

// OpDef describes a registered op, as OpRegistryJSON lists it.
type OpDef struct {
	Name    string    `json:"name"`
	Summary string    `json:"summary"`
	Inputs  []ArgDef  `json:"inputs"`
	Outputs []ArgDef  `json:"outputs"`
	Attrs   []AttrDef `json:"attrs"`
}

// ArgDef is an input or output of an op: its dtype is fixed (DType) or an attribute (TypeAttr).
type ArgDef struct {
	Name       string `json:"name"`
	TypeAttr   string `json:"type_attr,omitempty"`
	DType      string `json:"dtype,omitempty"`
	Variadic   bool   `json:"variadic,omitempty"`
	NumberAttr string `json:"number_attr,omitempty"`
}

// AttrDef is an attribute of an op. One without a Default is required; an Inferred DTYPE
// attribute is taken from the inputs.
type AttrDef struct {
	Name          string          `json:"name"`
	Kind          string          `json:"kind"`
	Default       json.RawMessage `json:"default,omitempty"`
	Inferred      bool            `json:"inferred,omitempty"`
	AllowedDTypes []string        `json:"allowed_dtypes,omitempty"`
	AllowedValues []string        `json:"allowed_values,omitempty"`
}

// OpRegistry is the op registry, parsed.
func OpRegistry() ([]OpDef, error) {
	text, err := OpRegistryJSON()
	if err != nil {
		return nil, err
	}
	var defs []OpDef
	if err := json.Unmarshal([]byte(text), &defs); err != nil {
		return nil, newError(CodeInternal, "OpRegistry: "+err.Error())
	}
	return defs, nil
}
