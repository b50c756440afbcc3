package cairn_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// ---- Export and load of compiled functions ----

// squarePlusVar is y = x*x + v, then v += x: a function that reads and writes a variable.
func squarePlusVar(v *cairn.Variable) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		sq, err := ops.Mul(ctx, in[0], in[0])
		if err != nil {
			return nil, err
		}
		defer sq.Close()
		value, err := v.Read()
		if err != nil {
			return nil, err
		}
		defer value.Close()
		y, err := ops.Add(ctx, sq, value)
		if err != nil {
			return nil, err
		}
		return []*cairn.Tensor{y}, v.AssignAdd(in[0])
	}
}

// loadFunction loads path into ctx and closes the function when the test ends.
func loadFunction(t *testing.T, ctx *cairn.Context, path string, options ...cairn.FunctionOption) *cairn.Function {
	t.Helper()
	f, err := cairn.LoadFunction(ctx, path, options...)
	if err != nil {
		t.Fatalf("LoadFunction: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// An exported function, loaded into another context, steps exactly like the original: it starts
// from the variable's value at export time and then owns its copy.
func TestFunctionExportLoadRoundTrip(t *testing.T) {
	ctx, ctx2 := newContext(t), newContext(t)
	v := newVariable(t, ctx, []float32{10, 20})
	defer v.Close()
	f := newFunction(t, ctx, "square_plus_var", squarePlusVar(v))
	path := filepath.Join(t.TempDir(), "square.cairnfn")
	wantCode(t, f.Export(path), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "no traces yet")
	x := tensor(t, ctx, []int64{2}, []float32{1, 2})
	callOne[float32](t, f, x) // v becomes [11, 22]
	ok(t, f.Export(path))

	loaded := loadFunction(t, ctx2, path)
	if n := loaded.NumTraces(); n != 0 {
		t.Errorf("a loaded function has %d traces before its first call", n)
	}
	x2 := tensor(t, ctx2, []int64{2}, []float32{1, 2})
	for i := 0; i < 3; i++ {
		want := []float32{1 + 11 + float32(i), 4 + 22 + 2*float32(i)}
		if got := callOne[float32](t, f, x); !slices.Equal(got, want) {
			t.Errorf("step %d: original gives %v, want %v", i, got, want)
		}
		if got := callOne[float32](t, loaded, x2); !slices.Equal(got, want) {
			t.Errorf("step %d: loaded gives %v, want %v", i, got, want)
		}
	}
	wantValue(t, v, float32(14), float32(28)) // the loaded copy never touched the original
	if loaded.NumTraces() != 1 {
		t.Errorf("loaded NumTraces %d, want 1", loaded.NumTraces())
	}
	if sig := must(loaded.Signature(0)); sig != "float32[2]" {
		t.Errorf("loaded signature %q", sig)
	}
	// A loaded function exports again.
	again := filepath.Join(t.TempDir(), "again.cairnfn")
	ok(t, loaded.Export(again))
	reloaded := loadFunction(t, ctx, again)
	if got := callOne[float32](t, reloaded, x); !slices.Equal(got, []float32{1 + 14, 4 + 28}) {
		t.Errorf("reloaded gives %v", got)
	}
}

// Inputs that fit no stored signature give NOT_FOUND listing the stored ones; damaged, missing
// and foreign files and a wrong option are refused.
func TestFunctionLoadErrors(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{0, 0})
	defer v.Close()
	f := newFunction(t, ctx, "square_plus_var", squarePlusVar(v))
	callOne[float32](t, f, tensor(t, ctx, []int64{2}, []float32{1, 2}))
	dir := t.TempDir()
	path := filepath.Join(dir, "f.cairnfn")
	ok(t, f.Export(path))
	loaded := loadFunction(t, ctx, path)
	_, err := loaded.Call(tensor(t, ctx, []int64{3}, []float32{1, 2, 3}))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "it has: (float32[2])")
	_, err = loaded.Call(tensor(t, ctx, []int64{2}, []float64{1, 2}))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "float64[2]")

	two := loadFunction(t, ctx, path, cairn.WithNumOutputs(2))
	_, err = two.Call(tensor(t, ctx, []int64{2}, []float32{1, 2}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "returns 1 output(s), not 2")

	_, err = cairn.LoadFunction(ctx, filepath.Join(dir, "missing.cairnfn"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing.cairnfn")
	_, err = cairn.LoadFunction(ctx, path, cairn.WithRetraceWarning(3))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "only WithNumOutputs")

	// A checkpoint is not an exported function.
	ckpt := filepath.Join(dir, "v.ckpt")
	saver := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"v": v}))
	defer saver.Close()
	ok(t, saver.Write(ckpt))
	_, err = cairn.LoadFunction(ctx, ckpt)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "not an exported function")
}

// GraphDef text: placeholders, the variable's handle and its read and assign, for TensorBoard.
func TestFunctionGraphDef(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{0, 0})
	defer v.Close()
	f := newFunction(t, ctx, "square_plus_var", squarePlusVar(v))
	_, err := f.GraphDef(0)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "square_plus_var")
	callOne[float32](t, f, tensor(t, ctx, []int64{2}, []float32{1, 2}))
	text := must(f.GraphDef(0))
	for _, want := range []string{"node {", `op: "Placeholder"`, `op: "VarHandleOp"`, `op: "ReadVariableOp"`,
		`op: "AssignVariableOp"`, `op: "Mul"`, `name: "output_0"`} {
		if !strings.Contains(text, want) {
			t.Errorf("GraphDef has no %s:\n%s", want, text)
		}
	}
	_, err = f.GraphDef(1)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "has 1 trace(s)")
}
