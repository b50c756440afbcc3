package cairn_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func newContext(t testing.TB, options ...cairn.ContextOption) *cairn.Context {
	t.Helper()
	ctx, err := cairn.NewContext(options...)
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

// wantCode fails unless err is a *cairn.Error with code and a message containing fragment.
func wantCode(t *testing.T, err error, code cairn.Code, sentinel error, fragment string) {
	t.Helper()
	var cerr *cairn.Error
	if !errors.As(err, &cerr) {
		t.Fatalf("got error %v (%T), want a *cairn.Error", err, err)
	}
	if cerr.Code != code || !errors.Is(err, sentinel) {
		t.Errorf("got code %v, want %v (error %q)", cerr.Code, code, err)
	}
	if !strings.Contains(cerr.Message, fragment) {
		t.Errorf("message %q does not contain %q", cerr.Message, fragment)
	}
}

// wantError checks the whole text of err: "<CODE>: <message>".
func wantError(t *testing.T, err error, text string) {
	t.Helper()
	if err == nil || err.Error() != text {
		t.Errorf("got error %v, want %q", err, text)
	}
}

func TestVersions(t *testing.T) {
	if cairn.ABIVersion() != cairn.HeaderABIVersion {
		t.Errorf("ABIVersion() = %d, HeaderABIVersion = %d", cairn.ABIVersion(), cairn.HeaderABIVersion)
	}
	v := cairn.Version()
	if parts := strings.Split(v, "."); len(parts) != 3 {
		t.Errorf("Version() = %q, want major.minor.patch", v)
	}
}

func TestContextOptions(t *testing.T) {
	var mu sync.Mutex
	var messages []string
	ctx := newContext(t,
		cairn.WithDevice("cpu"),
		cairn.WithNumThreads(2),
		cairn.WithSeed(42),
		cairn.WithLogLevel(cairn.LogDebug),
		cairn.WithLogFunc(func(level cairn.LogLevel, message string) {
			mu.Lock()
			defer mu.Unlock()
			messages = append(messages, level.String()+" "+message)
		}))
	if got := ctx.Device(); got != "cpu" {
		t.Errorf("Device() = %q, want cpu", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(messages, func(m string) bool {
		return strings.HasPrefix(m, "INFO ") && strings.Contains(m, "2 intra-op threads")
	}) {
		t.Errorf("log messages %q lack the INFO context-created message with 2 threads", messages)
	}
}

func TestContextOptionErrors(t *testing.T) {
	_, err := cairn.NewContext(cairn.WithDevice("tpu"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "tpu")
	_, err = cairn.NewContext(cairn.WithNumThreads(-1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "num_threads must be >= 0, got -1")
	_, err = cairn.NewContext(cairn.WithNumThreads(math.MaxInt32 + 1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "does not fit in an int32")
	_, err = cairn.NewContext(cairn.WithLogLevel(cairn.LogLevel(9)), cairn.WithLogFunc(func(cairn.LogLevel, string) {}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "unknown log_level 9")
}

func TestLogFuncPanicIsContained(t *testing.T) {
	ctx := newContext(t, cairn.WithLogLevel(cairn.LogInfo), cairn.WithLogFunc(func(cairn.LogLevel, string) {
		panic("boom")
	}))
	if ctx.Device() != "cpu" {
		t.Fatal("context unusable after its log function panicked")
	}
}

func roundTrip[E cairn.Element](t *testing.T, ctx *cairn.Context, dtype cairn.DType, data []E) {
	t.Helper()
	shape := []int64{2, int64(len(data) / 2)}
	x, err := cairn.NewTensor(ctx, shape, data)
	if err != nil {
		t.Fatalf("%v: NewTensor: %v", dtype, err)
	}
	defer x.Close()
	if x.DType() != dtype || !slices.Equal(x.Shape(), shape) || x.Rank() != 2 ||
		x.NumElements() != int64(len(data)) || x.NumBytes() != len(data)*dtype.Size() || x.Device() != "cpu" {
		t.Errorf("%v: got %v with %d elements, %d bytes", dtype, x, x.NumElements(), x.NumBytes())
	}
	got, err := cairn.Read[E](x)
	if err != nil {
		t.Fatalf("%v: Read: %v", dtype, err)
	}
	if !reflect.DeepEqual(got, data) {
		t.Errorf("%v: read %v, wrote %v", dtype, got, data)
	}
	dst := make([]E, len(data))
	if err := cairn.ReadInto(x, dst); err != nil || !reflect.DeepEqual(dst, data) {
		t.Errorf("%v: ReadInto: %v, %v", dtype, dst, err)
	}
	err = cairn.ReadInto(x, dst[1:])
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
	wantError(t, err, fmt.Sprintf("INVALID_ARGUMENT: ReadInto: dst holds %d values but the tensor has %d", len(data)-1, len(data)))
	// Too few elements for the shape: said in Go terms, values rather than bytes.
	_, err = cairn.NewTensor(ctx, shape, data[1:])
	wantError(t, err, fmt.Sprintf("INVALID_ARGUMENT: NewTensor: %d values for shape %v (needs %d)", len(data)-1, shape, len(data)))
}

func TestTensorRoundTripEveryDType(t *testing.T) {
	ctx := newContext(t)
	roundTrip(t, ctx, cairn.Float32, []float32{1.5, -2, float32(math.Inf(1)), 3e-38})
	roundTrip(t, ctx, cairn.Float64, []float64{1.5, -2, math.MaxFloat64, 5e-324})
	roundTrip(t, ctx, cairn.Int32, []int32{math.MinInt32, -1, 0, math.MaxInt32})
	roundTrip(t, ctx, cairn.Int64, []int64{math.MinInt64, -1, 0, math.MaxInt64})
	roundTrip(t, ctx, cairn.Int16, []int16{math.MinInt16, -1, 0, math.MaxInt16})
	roundTrip(t, ctx, cairn.Int8, []int8{math.MinInt8, -1, 0, math.MaxInt8})
	roundTrip(t, ctx, cairn.Uint8, []uint8{0, 1, 128, 255})
	roundTrip(t, ctx, cairn.Bool, []bool{true, false, false, true})
	roundTrip(t, ctx, cairn.Complex64, []complex64{1 + 2i, -3i, 4, 0})
}

func TestHalfPrecisionBits(t *testing.T) {
	ctx := newContext(t)
	half := []uint16{0x3c00, 0xc000, 0x7c00, 0x0001} // 1, -2, +inf, the smallest subnormal
	x, err := cairn.NewFloat16Tensor(ctx, []int64{4}, half)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got, err := x.Float16Bits(); err != nil || !slices.Equal(got, half) || x.DType() != cairn.Float16 {
		t.Errorf("Float16Bits() = %x, %v; dtype %v", got, err, x.DType())
	}
	if _, err := x.BFloat16Bits(); err == nil {
		t.Error("BFloat16Bits of a float16 tensor succeeded")
	}
	bf := []uint16{0x3f80, 0xc000, 0x7f80, 0x0001}
	y, err := cairn.NewBFloat16Tensor(ctx, []int64{2, 2}, bf)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if got, err := y.BFloat16Bits(); err != nil || !slices.Equal(got, bf) || y.DType() != cairn.BFloat16 {
		t.Errorf("BFloat16Bits() = %x, %v; dtype %v", got, err, y.DType())
	}
	_, err = cairn.NewFloat16Tensor(ctx, []int64{5}, half)
	wantError(t, err, "INVALID_ARGUMENT: NewFloat16Tensor: 4 values for shape [5] (needs 5)")
	_, err = cairn.NewTensorFromBytes(ctx, cairn.Int32, []int64{3}, make([]byte, 8))
	wantError(t, err, "INVALID_ARGUMENT: NewTensorFromBytes: 2 values for shape [3] (needs 3)")
	_, err = cairn.NewTensorFromBytes(ctx, cairn.Int32, []int64{3}, make([]byte, 7))
	wantError(t, err, "INVALID_ARGUMENT: NewTensorFromBytes: 7 bytes are not a whole number of 4-byte int32 values")
}

func TestTensorBytesAndScalars(t *testing.T) {
	ctx := newContext(t)
	s, err := cairn.NewTensor(ctx, nil, []int64{7})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Rank() != 0 || len(s.Shape()) != 0 || s.NumElements() != 1 {
		t.Errorf("scalar: %v", s)
	}
	raw, err := s.Bytes()
	if err != nil || len(raw) != 8 {
		t.Fatalf("Bytes() = %v, %v", raw, err)
	}
	back, err := cairn.NewTensorFromBytes(ctx, cairn.Int64, nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if v, err := cairn.Read[int64](back); err != nil || v[0] != 7 {
		t.Errorf("round trip through bytes: %v, %v", v, err)
	}
	empty, err := cairn.NewTensor[float32](ctx, []int64{0, 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	if v, err := cairn.Read[float32](empty); err != nil || len(v) != 0 || !slices.Equal(empty.Shape(), []int64{0, 3}) {
		t.Errorf("empty tensor: %v %v %v", v, err, empty.Shape())
	}
}

func TestTensorErrors(t *testing.T) {
	ctx := newContext(t)
	_, err := cairn.NewTensor(ctx, []int64{-1}, []float32{})
	wantError(t, err, "INVALID_ARGUMENT: NewTensor: shape [-1] has a negative dimension")
	_, err = cairn.NewTensor(ctx, []int64{1, 1, 1, 1, 1, 1, 1, 1, 1}, []float32{1})
	wantError(t, err, "INVALID_ARGUMENT: NewTensor: shape [1 1 1 1 1 1 1 1 1] has 9 dimensions (at most 8)")
	_, err = cairn.NewTensor(ctx, []int64{1 << 40, 1 << 40}, []float32{1})
	wantError(t, err, "INVALID_ARGUMENT: NewTensor: shape [1099511627776 1099511627776] has too many elements")
	_, err = cairn.NewTensorFromBytes(ctx, cairn.String, nil, nil)
	wantError(t, err, "INVALID_ARGUMENT: NewTensorFromBytes: string has no fixed size in bytes")
	_, err = cairn.NewTensorFromBytes(ctx, cairn.DType(99), nil, nil)
	wantError(t, err, "INVALID_ARGUMENT: NewTensorFromBytes: invalid has no fixed size in bytes")
	_, err = cairn.Read[float32](nil)
	wantError(t, err, "INVALID_ARGUMENT: Read: tensor is nil")

	x, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	y := tensor(t, ctx, []int64{2}, []float32{3, 4})
	_, err = cairn.Read[int32](x)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Read: the tensor is float32, not int32")
	x.Close()
	x.Close() // twice is fine
	_, err = cairn.Read[float32](x)
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "")
	wantError(t, err, "FAILED_PRECONDITION: Read: tensor is closed")
	_, err = x.Bytes()
	wantError(t, err, "FAILED_PRECONDITION: Tensor.Bytes: tensor is closed")
	_, err = x.CopyToDevice(ctx, "cpu")
	wantError(t, err, "FAILED_PRECONDITION: Tensor.CopyToDevice: tensor is closed")
	_, err = ops.Add(ctx, y, x)
	wantError(t, err, "FAILED_PRECONDITION: Add: input 1 is closed")
	_, err = ops.Add(ctx, nil, y)
	wantError(t, err, "INVALID_ARGUMENT: Add: input 0 is nil")
	if x.String() != "Tensor(closed)" || x.DType() != cairn.InvalidDType || x.Device() != "" {
		t.Errorf("closed tensor: %v %v %q", x, x.DType(), x.Device())
	}

	closed, err := cairn.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	closed.Close()
	_, err = cairn.NewTensor(closed, []int64{1}, []float32{1})
	wantError(t, err, "FAILED_PRECONDITION: NewTensor: context is closed")
	_, err = ops.Neg(closed, y)
	wantError(t, err, "FAILED_PRECONDITION: Neg: context is closed")
	_, err = cairn.NewTensor(nil, []int64{1}, []float32{1})
	wantError(t, err, "INVALID_ARGUMENT: NewTensor: context is nil")
}

func TestErrorMatching(t *testing.T) {
	err := error(&cairn.Error{Code: cairn.CodeNotFound, Message: "x: no such thing"})
	if !errors.Is(err, cairn.ErrNotFound) || errors.Is(err, cairn.ErrInvalidArgument) {
		t.Error("errors.Is does not match by code")
	}
	if err.Error() != "NOT_FOUND: x: no such thing" || cairn.CodeDataLoss.String() != "DATA_LOSS" ||
		cairn.Code(77).String() != "Code(77)" || cairn.Float32.String() != "float32" {
		t.Errorf("names: %q %q %q", err.Error(), cairn.CodeDataLoss, cairn.Code(77))
	}
}

func TestTensorsOutliveTheirContext(t *testing.T) {
	ctx, err := cairn.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	x, err := cairn.NewTensor(ctx, []int64{3}, []int32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx.Close()
	if v, err := cairn.Read[int32](x); err != nil || !slices.Equal(v, []int32{1, 2, 3}) {
		t.Errorf("after the context closed: %v, %v", v, err)
	}
	ctx2 := newContext(t)
	y, err := x.CopyToDevice(ctx2, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if v, err := cairn.Read[int32](y); err != nil || !slices.Equal(v, []int32{1, 2, 3}) {
		t.Errorf("copy: %v, %v", v, err)
	}
	_, err = x.CopyToDevice(ctx2, "tpu")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "tpu")
}

func TestOpRegistry(t *testing.T) {
	names := cairn.OpNames()
	if !slices.IsSorted(names) || !slices.Contains(names, "Add") || !slices.Contains(names, "MatMul") {
		t.Fatalf("OpNames() = %v", names)
	}
	defs, err := cairn.OpRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != len(names) {
		t.Fatalf("%d definitions for %d names", len(defs), len(names))
	}
	i := slices.IndexFunc(defs, func(d cairn.OpDef) bool { return d.Name == "MatMul" })
	m := defs[i]
	if len(m.Inputs) != 2 || len(m.Outputs) != 1 || m.Summary == "" {
		t.Errorf("MatMul: %+v", m)
	}
	j := slices.IndexFunc(m.Attrs, func(a cairn.AttrDef) bool { return a.Name == "transpose_a" })
	if j < 0 || m.Attrs[j].Kind != "BOOL" || string(m.Attrs[j].Default) != "false" {
		t.Errorf("MatMul attrs: %+v", m.Attrs)
	}
}

func TestRunOpErrors(t *testing.T) {
	ctx := newContext(t)
	x, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	_, err = cairn.RunOp(ctx, "NoSuchOp", []*cairn.Tensor{x}, nil, 1)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "NoSuchOp")
	_, err = cairn.RunOp(ctx, "Add", []*cairn.Tensor{x}, nil, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Add")
	_, err = cairn.RunOp(ctx, "Add", []*cairn.Tensor{x, x}, nil, 2)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Add")
	_, err = cairn.RunOp(ctx, "Add", []*cairn.Tensor{x, x}, []cairn.Attr{cairn.IntsAttr("bogus", []int64{1})}, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "bogus")
	_, err = cairn.RunOp(ctx, "Add", []*cairn.Tensor{x, nil}, nil, 1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Add")
	_, err = cairn.RunOp(ctx, "Add", []*cairn.Tensor{x, x}, nil, -2)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "numOutputs is -2")
	_, err = cairn.RunOp(ctx, "NoSuchOp", []*cairn.Tensor{x}, nil, cairn.InferOutputs)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "NoSuchOp")
	sum, err := cairn.RunOp(ctx, "Add", []*cairn.Tensor{x, x}, nil, cairn.InferOutputs)
	if err != nil || len(sum) != 1 {
		t.Fatalf("Add with InferOutputs: %d outputs, %v", len(sum), err)
	}
	sum[0].Close()
}

// RunOp1 answers as RunOp with one output, through its single-call path (at most 4 inputs) and
// through RunOp (more).
func TestRunOp1(t *testing.T) {
	ctx := newContext(t)
	x, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	_, err = cairn.RunOp1(ctx, "NoSuchOp", []*cairn.Tensor{x}, nil)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "NoSuchOp")
	_, err = cairn.RunOp1(ctx, "Add", []*cairn.Tensor{x}, nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Add")
	_, err = cairn.RunOp1(ctx, "Add", []*cairn.Tensor{x, x}, []cairn.Attr{cairn.IntsAttr("bogus", []int64{1})})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "bogus")
	_, err = cairn.RunOp1(ctx, "Add", []*cairn.Tensor{x, nil}, nil)
	wantError(t, err, "INVALID_ARGUMENT: Add: input 1 is nil")
	_, err = cairn.RunOp1(ctx, "Unpack", []*cairn.Tensor{x}, []cairn.Attr{cairn.IntAttr("num", 2)})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Unpack")
	closedCtx := newContext(t)
	closedCtx.Close()
	_, err = cairn.RunOp1(closedCtx, "Add", []*cairn.Tensor{x, x}, nil)
	wantError(t, err, "FAILED_PRECONDITION: Add: context is closed")
	for n := 1; n <= 6; n++ { // AddN: 1 to 4 inputs in one call, 5 and 6 through RunOp
		inputs := slices.Repeat([]*cairn.Tensor{x}, n)
		sum, err := cairn.RunOp1(ctx, "AddN", inputs, nil)
		if err != nil {
			t.Fatalf("AddN of %d: %v", n, err)
		}
		got, err := cairn.Read[float32](sum)
		sum.Close()
		if err != nil || !slices.Equal(got, []float32{float32(n), float32(2 * n)}) {
			t.Errorf("AddN of %d = %v, %v", n, got, err)
		}
	}
}

// Tensors share a finalizer in chunks of 64 (tensorChunk), but a closed Tensor's slot is never
// given to another tensor: it stays closed, and closing it again closes nothing else.
func TestClosedTensorStaysClosed(t *testing.T) {
	ctx := newContext(t)
	first, err := cairn.NewTensor(ctx, []int64{1}, []float32{7})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	var live []*cairn.Tensor
	for i := 0; i < 200; i++ {
		x, err := cairn.NewTensor(ctx, []int64{1}, []float32{float32(i)})
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, x)
	}
	first.Close()
	if first.String() != "Tensor(closed)" {
		t.Errorf("closed tensor: %v", first)
	}
	if _, err := cairn.Read[float32](first); err == nil {
		t.Error("Read of a closed tensor succeeded")
	}
	for i, x := range live {
		got, err := cairn.Read[float32](x)
		if err != nil || len(got) != 1 || got[0] != float32(i) {
			t.Fatalf("tensor %d after another's double Close: %v, %v", i, got, err)
		}
		x.Close()
		x.Close()
	}
}
