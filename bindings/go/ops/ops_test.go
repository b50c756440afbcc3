package ops_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/internal/cbench"
	"cairn.dev/cairn/ops"
)

func newContext(t testing.TB) *cairn.Context {
	t.Helper()
	ctx, err := cairn.NewContext()
	if err != nil {
		t.Fatalf("NewContext: %v", err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

func tensor[E cairn.Element](t testing.TB, ctx *cairn.Context, shape []int64, data []E) *cairn.Tensor {
	t.Helper()
	x, err := cairn.NewTensor(ctx, shape, data)
	if err != nil {
		t.Fatalf("NewTensor: %v", err)
	}
	t.Cleanup(x.Close)
	return x
}

// want checks an op result's shape and values and closes it.
func want[E cairn.Element](t *testing.T, got *cairn.Tensor, err error, shape []int64, values []E) {
	t.Helper()
	if err != nil {
		t.Fatalf("op failed: %v", err)
	}
	defer got.Close()
	v, err := cairn.Read[E](got)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !slices.Equal(got.Shape(), shape) || !slices.Equal(v, values) {
		t.Errorf("got %v %v, want %v %v", got.Shape(), v, shape, values)
	}
}

func TestAddBroadcasts(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	y := tensor(t, ctx, []int64{3}, []float32{10, 20, 30})
	z, err := ops.Add(ctx, x, y)
	want(t, z, err, []int64{2, 3}, []float32{11, 22, 33, 14, 25, 36})
	s := tensor(t, ctx, nil, []int32{5})
	i := tensor(t, ctx, []int64{2, 1}, []int32{1, 2})
	z, err = ops.Add(ctx, i, s)
	want(t, z, err, []int64{2, 1}, []int32{6, 7})
}

func TestAddBadShapesMapToInvalidArgument(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2, 3}, make([]float32, 6))
	y := tensor(t, ctx, []int64{4}, make([]float32, 4))
	_, err := ops.Add(ctx, x, y)
	var cerr *cairn.Error
	if !errors.As(err, &cerr) || cerr.Code != cairn.CodeInvalidArgument || !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Fatalf("got %v, want an INVALID_ARGUMENT *cairn.Error", err)
	}
	if cerr.Message != "Add: incompatible shapes [2,3] and [4]" {
		t.Errorf("message %q is not the C API's", cerr.Message)
	}
	i := tensor(t, ctx, []int64{4}, make([]int32, 4))
	_, err = ops.Add(ctx, y, i)
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "Add") {
		t.Errorf("mixed dtypes: %v", err)
	}
}

func TestMatMulTransposeOptions(t *testing.T) {
	ctx := newContext(t)
	a := tensor(t, ctx, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	b := tensor(t, ctx, []int64{2, 2}, []float64{1, 0, 0, 1})
	// a is [2,3]; transpose_a makes it [3,2], so [3,2] x [2,2].
	p, err := ops.MatMul(ctx, a, b, ops.MatMulTransposeA(true))
	want(t, p, err, []int64{3, 2}, []float64{1, 4, 2, 5, 3, 6})
	// Defaults: no transposes, so [2,3] x [2,2] does not fit.
	_, err = ops.MatMul(ctx, a, b)
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "MatMul") {
		t.Errorf("MatMul without transpose: %v", err)
	}
	// Both transposes: a^T is [3,2], b^T is [2,2].
	c := tensor(t, ctx, []int64{2, 2}, []float64{1, 2, 3, 4})
	p, err = ops.MatMul(ctx, a, c, ops.MatMulTransposeA(true), ops.MatMulTransposeB(true))
	want(t, p, err, []int64{3, 2}, []float64{1*1 + 4*2, 1*3 + 4*4, 2*1 + 5*2, 2*3 + 5*4, 3*1 + 6*2, 3*3 + 6*4})
	// One attribute given twice: the last option wins (one attribute is sent).
	p, err = ops.MatMul(ctx, a, b, ops.MatMulTransposeA(false), ops.MatMulTransposeA(true))
	want(t, p, err, []int64{3, 2}, []float64{1, 4, 2, 5, 3, 6})
	// An option is the attribute it sends.
	if attr := cairn.Attr(ops.MatMulTransposeB(true)); attr.Name() != "transpose_b" || attr.Kind() != cairn.AttrBool {
		t.Errorf("MatMulTransposeB(true) is %v %v", attr.Name(), attr.Kind())
	}
}

func TestRequiredAttrVariadicInputAndBoolOption(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{4}, []float32{1.5, -1.5, 0, 300})
	y, err := ops.Cast(ctx, x, cairn.Int32)
	want(t, y, err, []int64{4}, []int32{1, -1, 0, 300})
	y, err = ops.Cast(ctx, x, cairn.Uint8)
	want(t, y, err, []int64{4}, []uint8{1, 0, 0, 255})

	sum, err := ops.AddN(ctx, []*cairn.Tensor{x, x, x})
	want(t, sum, err, []int64{4}, []float32{4.5, -4.5, 0, 900})

	a := tensor(t, ctx, []int64{2}, []int32{1, 2})
	b := tensor(t, ctx, []int64{3}, []int32{1, 2, 3})
	_, err = ops.Equal(ctx, a, b) // incompatible_shape_error defaults to true
	if !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Errorf("Equal with incompatible shapes: %v", err)
	}
	eq, err := ops.Equal(ctx, a, b, ops.EqualIncompatibleShapeError(false))
	want(t, eq, err, nil, []bool{false})
}

func TestFixedDTypeInputs(t *testing.T) {
	ctx := newContext(t)
	c := tensor(t, ctx, []int64{3}, []bool{true, false, true})
	a := tensor(t, ctx, []int64{3}, []int64{1, 2, 3})
	b := tensor(t, ctx, []int64{3}, []int64{-1, -2, -3})
	s, err := ops.SelectV2(ctx, c, a, b)
	want(t, s, err, []int64{3}, []int64{1, -2, 3})
	n, err := ops.LogicalNot(ctx, c)
	want(t, n, err, []int64{3}, []bool{false, true, false})
}

// INTS attributes: Reshape's required shape and Sum's optional axis.
func TestIntsAttr(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2, 3}, []int16{1, 2, 3, 4, 5, 6})
	r, err := ops.Reshape(ctx, x, []int64{3, -1})
	want(t, r, err, []int64{3, 2}, []int16{1, 2, 3, 4, 5, 6})
	s, err := ops.Sum(ctx, x, ops.SumAxis([]int64{1}))
	want(t, s, err, []int64{2}, []int16{6, 15})
	s, err = ops.Sum(ctx, x, ops.SumAxis([]int64{0}), ops.SumKeepDims(true))
	want(t, s, err, []int64{1, 3}, []int16{5, 7, 9})
	s, err = ops.Sum(ctx, x) // axis defaults to all axes
	want(t, s, err, nil, []int16{21})
	_, err = ops.Reshape(ctx, x, []int64{4, -1})
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "Reshape") {
		t.Errorf("Reshape [2,3] to [4,-1]: %v", err)
	}
	_, err = ops.Sum(ctx, x, ops.SumAxis([]int64{2}))
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "Sum") {
		t.Errorf("Sum over axis 2 of a matrix: %v", err)
	}
}

// Variadic outputs: the library counts them from the attributes (cairn_op_num_outputs).
func TestVariadicOutputs(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{2, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	parts, err := ops.Split(ctx, x, 2, ops.SplitAxis(1))
	if err != nil || len(parts) != 2 {
		t.Fatalf("Split: %d parts, %v", len(parts), err)
	}
	want(t, parts[0], nil, []int64{2, 2}, []float32{1, 2, 5, 6})
	want(t, parts[1], nil, []int64{2, 2}, []float32{3, 4, 7, 8})
	rows, err := ops.Unpack(ctx, x, 2)
	if err != nil || len(rows) != 2 {
		t.Fatalf("Unpack: %d rows, %v", len(rows), err)
	}
	want(t, rows[0], nil, []int64{4}, []float32{1, 2, 3, 4})
	want(t, rows[1], nil, []int64{4}, []float32{5, 6, 7, 8})
	_, err = ops.Split(ctx, x, 3, ops.SplitAxis(1))
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "Split") {
		t.Errorf("Split 4 columns in 3: %v", err)
	}
	for op, attrs := range map[string][]cairn.Attr{
		"Add":    nil,
		"Split":  {cairn.IntAttr("num_split", 5)},
		"Unpack": {cairn.IntAttr("num", 3)},
	} {
		n, err := cairn.NumOutputs(op, attrs)
		if wantN := map[string]int{"Add": 1, "Split": 5, "Unpack": 3}[op]; err != nil || n != wantN {
			t.Errorf("NumOutputs(%s) = %d, %v; want %d", op, n, err, wantN)
		}
	}
	_, err = cairn.NumOutputs("Split", nil)
	if !errors.Is(err, cairn.ErrInvalidArgument) || !strings.Contains(err.Error(), "num_split") {
		t.Errorf("NumOutputs(Split) without num_split: %v", err)
	}
	_, err = cairn.NumOutputs("NoSuchOp", nil)
	if !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("NumOutputs(NoSuchOp): %v", err)
	}
}

// One context shared by several goroutines, each running its own ops.
func TestConcurrentOpsOnOneContext(t *testing.T) {
	ctx := newContext(t)
	const goroutines, rounds = 8, 300
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			base := float32(g)
			x, err := cairn.NewTensor(ctx, []int64{4}, []float32{base, base, base, base})
			if err != nil {
				errs <- err
				return
			}
			defer x.Close()
			for r := 0; r < rounds; r++ {
				y, err := ops.Add(ctx, x, x)
				if err != nil {
					errs <- err
					return
				}
				z, err := ops.MatMul(ctx, x, x, ops.MatMulTransposeA(r%2 == 0))
				if err == nil {
					z.Close() // [4] is not a matrix: every call must fail, concurrently too
					errs <- errors.New("MatMul of a vector succeeded")
					return
				}
				v, err := cairn.Read[float32](y)
				y.Close()
				if err != nil {
					errs <- err
					return
				}
				if !slices.Equal(v, []float32{2 * base, 2 * base, 2 * base, 2 * base}) {
					errs <- errors.New("wrong sum from a concurrent Add")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// BenchmarkAdd16 measures the per-call overhead of a 16-element float32 Add through the binding
// (the C API's own figure is about 115 ns/op); the result is closed each time. Besides wall time
// (ns/op) it reports the process's CPU time per op (cpu-ns/op, GC and finalizer work included),
// which is the figure to compare on a loaded machine.
func BenchmarkAdd16(b *testing.B) {
	ctx := newContext(b)
	data := make([]float32, 16)
	x := tensor(b, ctx, []int64{16}, data)
	y := tensor(b, ctx, []int64{16}, data)
	b.ReportAllocs()
	b.ResetTimer()
	cpuStart := processCPU(b)
	for i := 0; i < b.N; i++ {
		z, err := ops.Add(ctx, x, y)
		if err != nil {
			b.Fatal(err)
		}
		z.Close()
	}
	b.ReportMetric(float64(processCPU(b)-cpuStart)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system CPU time the process has used, in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// An op and its Close allocate only the result's Tensor, and that in chunks of 64 (the handle
// arrays stay on the stack): at most one allocation per call on average.
func TestAdd16Allocations(t *testing.T) {
	ctx := newContext(t)
	data := make([]float32, 16)
	x := tensor(t, ctx, []int64{16}, data)
	y := tensor(t, ctx, []int64{16}, data)
	allocs := testing.AllocsPerRun(1000, func() {
		z, err := ops.Add(ctx, x, y)
		if err != nil {
			t.Fatal(err)
		}
		z.Close()
	})
	if allocs > 1 {
		t.Errorf("ops.Add and Close: %v allocations per call, want at most 1", allocs)
	}
}

// BenchmarkAdd16C is BenchmarkAdd16's op through the C API in the same process: the loop in C
// (the C figure "over C" is measured against), and one cgo call per op from Go (that figure plus
// the cost of one crossing).
func BenchmarkAdd16C(b *testing.B) {
	a, err := cbench.NewAdd16()
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.Run("loop-in-C", func(b *testing.B) {
		if err := a.LoopInC(b.N); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("cgo-per-op", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := a.Once(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
