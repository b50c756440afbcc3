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

// ---- tf.train.Example and SequenceExample ----

// Example is a tf.train.Example (features) or tf.train.SequenceExample (context features and
// feature lists of steps) being built or read. Serialize gives protobuf's deterministic bytes
// (keys sorted). It may be read from several goroutines at once; a Set or Append needs it to
// itself. Close it (a finalizer frees a forgotten one).
type Example struct {
	ptr *C.cairn_example
}

// Feature is the values of one feature (or one step of a feature list): the list its Kind names
// is set, the others are nil. A Feature with no list set (FeatureKindNone) is an empty list.
type Feature struct {
	Kind   FeatureKind
	Int64s []int64
	Floats []float32
	Bytes  [][]byte
}

// NewExample is an empty tf.train.Example.
func NewExample() (*Example, error) { return newExample("NewExample", ExampleKindExample) }

// NewSequenceExample is an empty tf.train.SequenceExample.
func NewSequenceExample() (*Example, error) {
	return newExample("NewSequenceExample", ExampleKindSequenceExample)
}

func newExample(fn string, kind ExampleKind) (*Example, error) {
	if err := checkLibrary(fn); err != nil {
		return nil, err
	}
	var out *C.cairn_example
	if err := cExampleCreate(C.cairn_example_kind(kind), &out); err != nil {
		return nil, err
	}
	return wrapExample(out), nil
}

func wrapExample(p *C.cairn_example) *Example {
	e := &Example{ptr: p}
	runtime.SetFinalizer(e, (*Example).Close)
	return e
}

// ParseExample parses a serialized tf.train.Example. Errors: DATA_LOSS for malformed bytes,
// naming the byte offset.
func ParseExample(data []byte) (*Example, error) {
	return parseExample("ParseExample", ExampleKindExample, data)
}

// ParseSequenceExample parses a serialized tf.train.SequenceExample, as ParseExample does.
func ParseSequenceExample(data []byte) (*Example, error) {
	return parseExample("ParseSequenceExample", ExampleKindSequenceExample, data)
}

func parseExample(fn string, kind ExampleKind, data []byte) (*Example, error) {
	if err := checkLibrary(fn); err != nil {
		return nil, err
	}
	var out *C.cairn_example
	err := cExampleParse(C.cairn_example_kind(kind), unsafe.Pointer(unsafe.SliceData(data)), C.size_t(len(data)), &out)
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return wrapExample(out), nil
}

// Close frees the example. Closing twice does nothing.
func (e *Example) Close() {
	if e == nil || e.ptr == nil {
		return
	}
	runtime.SetFinalizer(e, nil)
	cExampleFree(e.ptr)
	e.ptr = nil
}

func (e *Example) handle() *C.cairn_example {
	if e == nil {
		return nil
	}
	return e.ptr
}

// Kind is ExampleKindExample or ExampleKindSequenceExample; 0 after Close.
func (e *Example) Kind() ExampleKind {
	k := ExampleKind(cExampleGetKind(e.handle()))
	runtime.KeepAlive(e)
	return k
}

// withKey runs call with the C key after checking the example, naming fn in the errors.
func (e *Example) withKey(fn, key string, call func(*C.cairn_example, *C.char) error) error {
	if err := checkOpen(fn, "example", e); err != nil {
		return err
	}
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	err := call(e.ptr, ckey)
	runtime.KeepAlive(e)
	return err
}

// SetInt64s sets feature key (a context feature of a SequenceExample) to values, replacing what
// it held.
func (e *Example) SetInt64s(key string, values []int64) error {
	return e.int64s("Example.SetInt64s", key, values, cExampleSetInt64s)
}

// SetFloats sets feature key to values, as SetInt64s does.
func (e *Example) SetFloats(key string, values []float32) error {
	return e.floats("Example.SetFloats", key, values, cExampleSetFloats)
}

// SetBytes sets feature key to byte strings (any bytes), as SetInt64s does.
func (e *Example) SetBytes(key string, values [][]byte) error {
	return e.bytes("Example.SetBytes", key, values, cExampleSetBytes)
}

// AppendStepInt64s appends one step of values to feature list key of a SequenceExample (creating
// the list). Errors: INVALID_ARGUMENT for an Example, which has no feature lists.
func (e *Example) AppendStepInt64s(key string, values []int64) error {
	return e.int64s("Example.AppendStepInt64s", key, values, cExampleAppendStepInt64s)
}

// AppendStepFloats appends one step of floats to feature list key, as AppendStepInt64s does.
func (e *Example) AppendStepFloats(key string, values []float32) error {
	return e.floats("Example.AppendStepFloats", key, values, cExampleAppendStepFloats)
}

// AppendStepBytes appends one step of byte strings to feature list key, as AppendStepInt64s does.
func (e *Example) AppendStepBytes(key string, values [][]byte) error {
	return e.bytes("Example.AppendStepBytes", key, values, cExampleAppendStepBytes)
}

func (e *Example) int64s(fn, key string, values []int64, set func(*C.cairn_example, *C.char, *C.int64_t, C.size_t) error) error {
	return e.withKey(fn, key, func(p *C.cairn_example, k *C.char) error {
		return set(p, k, (*C.int64_t)(unsafe.SliceData(values)), C.size_t(len(values)))
	})
}

func (e *Example) floats(fn, key string, values []float32, set func(*C.cairn_example, *C.char, *C.float, C.size_t) error) error {
	return e.withKey(fn, key, func(p *C.cairn_example, k *C.char) error {
		return set(p, k, (*C.float)(unsafe.SliceData(values)), C.size_t(len(values)))
	})
}

func (e *Example) bytes(fn, key string, values [][]byte,
	set func(*C.cairn_example, *C.char, *unsafe.Pointer, *C.size_t, C.size_t) error) error {
	return e.withKey(fn, key, func(p *C.cairn_example, k *C.char) error {
		return withByteStrings(values, func(ptrs *unsafe.Pointer, lens *C.size_t, n C.size_t) error {
			return set(p, k, ptrs, lens, n)
		})
	})
}

// withByteStrings passes byte strings to C as arrays of pointers and lengths: the strings are
// pinned for the call (cgo lets Go memory holding pinned Go pointers reach C), not copied.
func withByteStrings(values [][]byte, call func(ptrs *unsafe.Pointer, lens *C.size_t, n C.size_t) error) error {
	var pinner runtime.Pinner
	defer pinner.Unpin()
	ptrs := make([]unsafe.Pointer, len(values)+1) // never empty, so SliceData is never nil
	lens := make([]C.size_t, len(values)+1)
	for i, v := range values {
		if len(v) > 0 {
			ptrs[i] = unsafe.Pointer(unsafe.SliceData(v))
			pinner.Pin(ptrs[i])
		}
		lens[i] = C.size_t(len(v))
	}
	return call(unsafe.SliceData(ptrs), unsafe.SliceData(lens), C.size_t(len(values)))
}

// Serialize is the protobuf encoding: map entries sorted by key, lists packed, the bytes of
// protobuf's deterministic serialization.
func (e *Example) Serialize() ([]byte, error) {
	if err := checkOpen("Example.Serialize", "example", e); err != nil {
		return nil, err
	}
	var out *C.char
	var n C.size_t
	err := cExampleSerialize(e.ptr, &out, &n)
	runtime.KeepAlive(e)
	if err != nil {
		return nil, err
	}
	defer cFree(unsafe.Pointer(out))
	return copyBytes(unsafe.Pointer(out), n), nil
}

// Keys are the feature keys (the context features' of a SequenceExample), sorted bytewise.
func (e *Example) Keys() []string {
	return e.keys(cExampleFeatureCount, cExampleFeatureKey)
}

// FeatureListKeys are the feature list keys of a SequenceExample, sorted; none for an Example.
func (e *Example) FeatureListKeys() []string {
	return e.keys(cExampleFeatureListCount, cExampleFeatureListKey)
}

func (e *Example) keys(count func(*C.cairn_example) C.size_t, key func(*C.cairn_example, C.size_t) *C.char) []string {
	p := e.handle()
	n := int(count(p))
	keys := make([]string, n)
	for i := range keys {
		keys[i] = C.GoString(key(p, C.size_t(i)))
	}
	runtime.KeepAlive(e)
	return keys
}

// Steps is how many steps feature list key has. Errors: NOT_FOUND naming the key.
func (e *Example) Steps(key string) (int, error) {
	var n C.size_t
	err := e.withKey("Example.Steps", key, func(p *C.cairn_example, k *C.char) error {
		return cExampleFeatureListSteps(p, k, &n)
	})
	return int(n), err
}

// Feature is the values of feature key (a context feature of a SequenceExample). Errors:
// NOT_FOUND naming the key.
func (e *Example) Feature(key string) (Feature, error) {
	return e.values("Example.Feature", key, C.CAIRN_EXAMPLE_NO_STEP)
}

// Step is the values of step step of feature list key of a SequenceExample. Errors: NOT_FOUND
// naming the key; OUT_OF_RANGE for a step past the list's end.
func (e *Example) Step(key string, step int) (Feature, error) {
	if step < 0 {
		return Feature{}, newError(CodeOutOfRange, fmt.Sprintf("Example.Step: step %d of feature list '%s' (steps count from 0)", step, key))
	}
	return e.values("Example.Step", key, C.int64_t(step))
}

func (e *Example) values(fn, key string, step C.int64_t) (Feature, error) {
	var f Feature
	err := e.withKey(fn, key, func(p *C.cairn_example, k *C.char) error {
		var v C.cairn_feature_values
		if err := cFeatureValuesInit(&v, C.uint32_t(unsafe.Sizeof(v))); err != nil {
			return err
		}
		if err := cExampleValues(p, k, step, &v); err != nil {
			return err
		}
		f.Kind = FeatureKind(v.kind)
		n := int(v.count)
		switch f.Kind {
		case FeatureKindInt64:
			f.Int64s = append([]int64{}, unsafe.Slice((*int64)(unsafe.Pointer(v.int64s)), n)...)
		case FeatureKindFloat:
			f.Floats = append([]float32{}, unsafe.Slice((*float32)(unsafe.Pointer(v.floats)), n)...)
		case FeatureKindBytes:
			f.Bytes = make([][]byte, n)
			for i := range f.Bytes {
				var data unsafe.Pointer
				var size C.size_t
				if err := cExampleBytes(p, k, step, C.size_t(i), &data, &size); err != nil {
					return err
				}
				f.Bytes[i] = copyBytes(data, size)
			}
		}
		return nil
	})
	return f, err
}

// FeatureSpec says how ParseExamples turns one feature of each record into tensors
// (tf.io.FixedLenFeature, VarLenFeature, FixedLenSequenceFeature and a ragged sequence feature).
// DType Float32 reads float lists, Int64 int64 lists and Uint8 byte lists (the bytes of the
// feature's strings concatenated: FixedLen Uint8 of shape [784] reads one 784-byte string).
type FeatureSpec struct {
	Key   string          // the feature's key; required
	Kind  FeatureSpecKind // 0 means FeatureSpecKindFixedLen
	DType DType           // Float32 (also for 0), Int64 or Uint8
	Shape []int64         // FixedLen: per record; FixedLenSequence: per step; nil: one value
	// Default is, for FixedLen, the value of a missing feature (nil: missing is INVALID_ARGUMENT);
	// for FixedLenSequence, the padding after a record's last step (nil: zeros). The spec's
	// dtype, with one element (repeated) or the shape's element count.
	Default *Tensor
}

// ParseExamples parses serialized tf.train.Examples into CPU tensors, as tf.io.parse_example does,
// on the context's thread pool. specs are FixedLen or VarLen with distinct keys. The result has
// one slice per spec, in spec order: FixedLen gives [values [n, shape...]]; VarLen gives [values
// [total], row_lengths int64 [n]]. Close the tensors. Errors: DATA_LOSS for a malformed record;
// INVALID_ARGUMENT for a bad spec, a missing feature without default, a wrong value count or a
// dtype mismatch; messages name the record index and the key.
func ParseExamples(ctx *Context, records [][]byte, specs []FeatureSpec) ([][]*Tensor, error) {
	return parseBatch("ParseExamples", ctx, records, specs, cParseExamples)
}

// ParseSequenceExamples parses serialized tf.train.SequenceExamples, as
// tf.io.parse_sequence_example does: FixedLen and VarLen specs read context features,
// FixedLenSequence and VarLenSequence specs feature lists (a missing one has 0 steps). Per spec:
// FixedLenSequence gives [values [n, max_steps, shape...] padded with the default, lengths int64
// [n]]; VarLenSequence gives [values [total], step_lengths int64 [total_steps], steps int64 [n]];
// the context specs as ParseExamples. Errors as ParseExamples; messages also name the step.
func ParseSequenceExamples(ctx *Context, records [][]byte, specs []FeatureSpec) ([][]*Tensor, error) {
	return parseBatch("ParseSequenceExamples", ctx, records, specs, cParseSequenceExamples)
}

type parseFunc func(*C.cairn_context, *unsafe.Pointer, *C.size_t, C.size_t, *C.cairn_feature_spec, C.size_t,
	**C.cairn_tensor, C.size_t) error

// outputsPerSpec is how many tensors each kind of spec gives (cairn_parse_num_outputs).
func outputsPerSpec(kind FeatureSpecKind) int {
	switch kind {
	case FeatureSpecKindVarLen, FeatureSpecKindFixedLenSequence:
		return 2
	case FeatureSpecKindVarLenSequence:
		return 3
	}
	return 1
}

func parseBatch(fn string, ctx *Context, records [][]byte, specs []FeatureSpec, parse parseFunc) ([][]*Tensor, error) {
	cctx, err := ctx.use(fn)
	if err != nil {
		return nil, err
	}
	cspecs, free, err := cFeatureSpecs(fn, specs)
	if err != nil {
		return nil, err
	}
	defer free()
	var total C.size_t
	if err := cParseNumOutputs(unsafe.SliceData(cspecs), C.size_t(len(specs)), &total); err != nil {
		return nil, err
	}
	outs := make([]*C.cairn_tensor, int(total)+1) // Go memory holding only C pointers; never empty
	err = withByteStrings(records, func(ptrs *unsafe.Pointer, lens *C.size_t, n C.size_t) error {
		return parse(cctx, ptrs, lens, n, unsafe.SliceData(cspecs), C.size_t(len(specs)), unsafe.SliceData(outs), total)
	})
	runtime.KeepAlive(ctx)
	runtime.KeepAlive(specs)
	if err != nil {
		return nil, err
	}
	result := make([][]*Tensor, len(specs))
	next := 0
	for i, s := range specs {
		k := outputsPerSpec(s.Kind)
		for _, p := range outs[next : next+k] {
			result[i] = append(result[i], newTensor(p))
		}
		next += k
	}
	return result, nil
}

// cFeatureSpecs is specs as C structs in C memory (keys and shapes too), and what frees them.
func cFeatureSpecs(fn string, specs []FeatureSpec) ([]C.cairn_feature_spec, func(), error) {
	cspecs := unsafe.Slice((*C.cairn_feature_spec)(C.calloc(C.size_t(len(specs)+1), C.sizeof_cairn_feature_spec)), len(specs)+1)
	var blocks []unsafe.Pointer
	free := func() {
		for _, b := range blocks {
			C.free(b)
		}
		C.free(unsafe.Pointer(unsafe.SliceData(cspecs)))
	}
	for i, s := range specs {
		c := &cspecs[i]
		if err := cFeatureSpecInit(c, C.uint32_t(C.sizeof_cairn_feature_spec)); err != nil {
			free()
			return nil, nil, err
		}
		if s.Default != nil {
			d, err := s.Default.use(fn, fmt.Sprintf("default of spec %q", s.Key))
			if err != nil {
				free()
				return nil, nil, err
			}
			c.default_value = d
		}
		c.key = C.CString(s.Key)
		blocks = append(blocks, unsafe.Pointer(c.key))
		if s.Kind != 0 {
			c.kind = C.cairn_feature_spec_kind(s.Kind)
		}
		if s.DType != InvalidDType {
			c.dtype = C.cairn_dtype(s.DType)
		}
		if len(s.Shape) > 0 {
			shape := C.malloc(C.size_t(8 * len(s.Shape)))
			blocks = append(blocks, shape)
			copy(unsafe.Slice((*int64)(shape), len(s.Shape)), s.Shape)
			c.shape = (*C.int64_t)(shape)
			c.rank = C.size_t(len(s.Shape))
		}
	}
	return cspecs[:len(specs)], free, nil
}
