package cairn_test

import (
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cairn.dev/cairn"
)

// must returns v, or panics on err: a failed setup step stops the test run with its stack.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// tensor makes a tensor closed when the test ends.
func tensor[E cairn.Element](t testing.TB, ctx *cairn.Context, shape []int64, data []E) *cairn.Tensor {
	x := must(cairn.NewTensor(ctx, shape, data))
	t.Cleanup(x.Close)
	return x
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newVariable makes a variable from data (shape [len(data)], or a scalar for one element).
func newVariable[E cairn.Element](t testing.TB, ctx *cairn.Context, data []E, options ...cairn.VariableOption) *cairn.Variable {
	t.Helper()
	var shape []int64
	if len(data) != 1 {
		shape = []int64{int64(len(data))}
	}
	initial := must(cairn.NewTensor(ctx, shape, data))
	defer initial.Close()
	return must(cairn.NewVariable(ctx, initial, options...))
}

func wantValue[E cairn.Element](t *testing.T, v *cairn.Variable, values ...E) {
	t.Helper()
	got, err := cairn.ReadValue[E](v)
	if err != nil || !slices.Equal(got, values) {
		t.Errorf("%s reads %v (%v), want %v", v.Name(), got, err, values)
	}
}

func paths(found []cairn.PathObject) []string {
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.Path
		f.Object.Close()
	}
	return out
}

func TestVariables(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []float32{1, 2, 3})
	defer v.Close()
	if v.Name() != "Variable:0" || !v.Trainable() || v.DType() != cairn.Float32 || v.Kind() != cairn.ObjectKindVariable {
		t.Errorf("defaults: %q trainable %v %v %v", v.Name(), v.Trainable(), v.DType(), v.Kind())
	}
	if shape, err := v.Shape(); err != nil || !slices.Equal(shape, []int64{3}) {
		t.Errorf("Shape() = %v, %v", shape, err)
	}
	snapshot := must(v.Read())
	defer snapshot.Close()
	delta := tensor(t, ctx, []int64{3}, []float32{10, 20, 30})
	ok(t, v.AssignAdd(delta))
	wantValue(t, v, float32(11), 22, 33)
	ok(t, v.AssignSub(delta))
	ok(t, v.AssignSub(delta))
	wantValue(t, v, float32(-9), -18, -27)
	ok(t, v.Assign(delta))
	wantValue(t, v, float32(10), 20, 30)
	if old, _ := cairn.Read[float32](snapshot); !slices.Equal(old, []float32{1, 2, 3}) {
		t.Errorf("a snapshot changed with the variable: %v", old)
	}

	err := v.Assign(tensor(t, ctx, []int64{2}, []float32{1, 2}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument,
		"cairn_variable_assign: shape [2] does not match variable 'Variable:0' of shape [3]")
	err = v.AssignAdd(tensor(t, ctx, []int64{3}, []int32{1, 2, 3}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_variable_assign_add")
	wantValue(t, v, float32(10), 20, 30)

	frozen := newVariable(t, ctx, []bool{true}, cairn.WithVariableName("frozen"), cairn.WithTrainable(false))
	defer frozen.Close()
	if frozen.Name() != "frozen:0" || frozen.Trainable() {
		t.Errorf("options: %q trainable %v", frozen.Name(), frozen.Trainable())
	}
	_, err = cairn.NewVariable(ctx, tensor(t, ctx, nil, []int32{1}), cairn.WithVariableName("a:b"))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_variable_create")
	_, err = cairn.NewVariable(ctx, nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "initial")

	v.Close()
	v.Close()
	if v.Name() != "" || v.DType() != cairn.InvalidDType || v.Kind() != cairn.ObjectKindInvalid || v.String() != "Object(closed)" {
		t.Errorf("closed variable: %q %v %v", v.Name(), v.DType(), v.Kind())
	}
	_, err = v.Read()
	wantError(t, err, "FAILED_PRECONDITION: Variable.Read: variable is closed")
	wantError(t, v.Assign(nil), "FAILED_PRECONDITION: Variable.Assign: variable is closed")
}

func TestModulesAndScopes(t *testing.T) {
	ctx := newContext(t)
	m1 := must(cairn.NewModule(ctx, "m1"))
	defer m1.Close()
	m2 := must(cairn.NewModule(ctx, "m2", cairn.WithParentScope(m1)))
	defer m2.Close()
	anon := must(cairn.NewModule(ctx, ""))
	defer anon.Close()
	if m2.Name() != "m2" || m2.Scope() != "m1/m2" || m1.Scope() != "m1" || anon.Name() != "module" {
		t.Errorf("names: %q %q %q %q", m2.Name(), m2.Scope(), m1.Scope(), anon.Name())
	}
	v := newVariable(t, ctx, []int32{1}, cairn.WithVariableName("w"), cairn.WithScope(m2))
	defer v.Close()
	if v.Name() != "m1/m2/w:0" {
		t.Errorf("variable in scope m1/m2: %q", v.Name())
	}
	frozen := newVariable(t, ctx, []int32{2}, cairn.WithVariableName("f"), cairn.WithTrainable(false))
	defer frozen.Close()
	ok(t, m1.Set("z", v))
	ok(t, m1.Set("a", frozen))
	ok(t, m1.Set("sub", m2)) // no cycle in the queries' results: m2 holds nothing yet
	all := must(m1.Variables(false))
	trainable := must(m1.Variables(true))
	names := func(vars []*cairn.Variable) []string {
		var out []string
		for _, x := range vars {
			out = append(out, x.Name())
			x.Close()
		}
		return out
	}
	if got := names(all); !slices.Equal(got, []string{"f:0", "m1/m2/w:0"}) {
		t.Errorf("Variables(false) = %v", got)
	}
	if got := names(trainable); !slices.Equal(got, []string{"m1/m2/w:0"}) {
		t.Errorf("Variables(true) = %v", got)
	}
	subs := must(m1.Submodules())
	if len(subs) != 1 || !subs[0].Same(m2) || subs[0].Scope() != "m1/m2" {
		t.Errorf("Submodules() = %v", subs)
	}
	subs[0].Close()
	if m2.Kind() != cairn.ObjectKindModule {
		t.Error("closing a query result closed the module's own handle")
	}

	_, err := cairn.NewModule(ctx, "a/b")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_module_create")
	_, err = frozen.AsModule()
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "AsModule: the object is a VARIABLE, not a MODULE")
	asModule := must(m1.Object.AsModule())
	if asModule.Name() != "m1" {
		t.Errorf("AsModule().Name() = %q", asModule.Name())
	}
}

func TestObjectEdges(t *testing.T) {
	ctx := newContext(t)
	root := must(cairn.NewTrackable(ctx))
	defer root.Close()
	child := must(cairn.NewTrackable(ctx))
	defer child.Close()
	v := newVariable(t, ctx, []int64{7})
	defer v.Close()
	if root.Kind() != cairn.ObjectKindTrackable || root.String() != "Object(TRACKABLE)" {
		t.Errorf("kind %v, %v", root.Kind(), root)
	}
	ok(t, root.Set("b", child))
	ok(t, root.Set("a", v))
	ok(t, child.Set("loop", root)) // a cycle is allowed
	ok(t, root.SetUntracked("hidden/x", v))
	if root.NumChildren() != 2 {
		t.Errorf("NumChildren() = %d", root.NumChildren())
	}
	got := must(root.Get("a"))
	if !got.Same(v) || got.Same(root) || got.Kind() != cairn.ObjectKindVariable {
		t.Error("Get(a) is not the variable")
	}
	gotVar := must(got.AsVariable())
	wantValue(t, gotVar, int64(7))
	gotVar.Close() // closes got: a view shares its handle
	if got.Kind() != cairn.ObjectKindInvalid {
		t.Error("closing the view left its Object open")
	}
	hidden := must(root.Get("hidden/x"))
	if !hidden.Same(v) {
		t.Error("untracked child not found")
	}
	hidden.Close()
	if got := paths(must(root.Children())); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("Children() = %v", got)
	}
	if got := paths(must(root.Walk())); !slices.Equal(got, []string{"", "b", "a"}) {
		t.Errorf("Walk() = %v", got)
	}
	shared := must(root.Share())
	if !shared.Same(root) {
		t.Error("Share() is another object")
	}
	shared.Close()

	_, err := root.Get("w")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, `cairn_object_get: no child named "w" in trackable`)
	err = v.Set("x", root)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_object_set")
	err = root.Set("a/b", v)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_object_set")
	err = root.Set("nil", (*cairn.Variable)(nil))
	wantError(t, err, "INVALID_ARGUMENT: Object.Set: child is nil")
	wantError(t, root.Set("nil", nil), "INVALID_ARGUMENT: Object.Set: child is nil")
	ok(t, root.Delete("b"))
	err = root.Delete("b")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "b")
	_, err = root.AsList()
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "AsList: the object is a TRACKABLE, not a LIST")
}

func TestListsAndDicts(t *testing.T) {
	ctx := newContext(t)
	list := must(cairn.NewList(ctx))
	defer list.Close()
	a := newVariable(t, ctx, []int32{1})
	defer a.Close()
	b := newVariable(t, ctx, []int32{2})
	defer b.Close()
	ok(t, list.Append(a))
	ok(t, list.Append(b))
	ok(t, list.Append(a))
	if list.Len() != 3 || list.Kind() != cairn.ObjectKindList {
		t.Fatalf("Len() = %d, kind %v", list.Len(), list.Kind())
	}
	second := must(list.At(1))
	byName := must(list.Get("1"))
	if !second.Same(b) || !byName.Same(b) {
		t.Error("At(1) / Get(\"1\") is not the second element")
	}
	second.Close()
	byName.Close()
	ok(t, list.Replace(2, b))
	last := must(list.At(2))
	if !last.Same(b) {
		t.Error("Replace did not replace")
	}
	last.Close()
	_, err := list.At(3)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "cairn_list_get")
	_, err = list.At(-1)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "negative")
	err = list.SetUntracked("x", a)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_object_set_untracked")
	ok(t, list.Delete("0"))
	first := must(list.At(0))
	if list.Len() != 2 || !first.Same(b) {
		t.Error("deleting element 0 did not move the others down")
	}
	first.Close()

	dict := must(cairn.NewDict(ctx))
	defer dict.Close()
	ok(t, dict.Set("zeta", a))
	ok(t, dict.Set("alpha", b))
	ok(t, dict.Set("list", list))
	if got := paths(must(dict.Children())); !slices.Equal(got, []string{"zeta", "alpha", "list"}) {
		t.Errorf("dict keys in insertion order: %v", got)
	}
	got := must(dict.Get("alpha"))
	if !got.Same(b) {
		t.Error("dict[alpha] is not b")
	}
	got.Close()
	ok(t, dict.Delete("zeta"))
	_, err = dict.Get("zeta")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "zeta")
	if dict.NumChildren() != 2 || dict.Kind() != cairn.ObjectKindDict {
		t.Errorf("dict size %d", dict.NumChildren())
	}
	asDict := must(dict.Object.AsDict())
	if !asDict.Same(dict) {
		t.Error("AsDict is another object")
	}
}

// Objects and checkpoints keep their context alive: its LogFunc still gets messages after
// Context.Close, and is released (log_release deletes its handle, so the closure can be
// collected) only once the last of them is closed.
func TestLogFuncLivesAsLongAsTheObjects(t *testing.T) {
	collected := make(chan struct{})
	var mu sync.Mutex
	var warnings []string
	ctx := func() *cairn.Context { // the closure is reachable only through the context's handle
		marker := new(int)
		runtime.SetFinalizer(marker, func(*int) { close(collected) })
		return must(cairn.NewContext(cairn.WithLogFunc(func(level cairn.LogLevel, message string) {
			mu.Lock()
			defer mu.Unlock()
			_ = *marker
			warnings = append(warnings, level.String()+" "+message)
		})))
	}()
	saved := must(cairn.NewTrackable(ctx))
	v := newVariable(t, ctx, []int32{1}, cairn.WithVariableName("v"))
	ok(t, saved.Set("v", v))
	c := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"tr": saved}))
	path := filepath.Join(t.TempDir(), "ckpt")
	ok(t, c.Write(path))
	c.Close()
	saved.Close()
	v.Close()

	empty := must(cairn.NewTrackable(ctx))
	partial := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"other": empty})) // "tr" waits on the root
	ctx.Close()
	rs := must(partial.Restore(path))
	rs.Close()
	partial.Close() // the restore goes with it: "tr/v" was never restored, which it logs
	mu.Lock()
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "WARNING ") || !strings.Contains(warnings[0], "tr/v") {
		t.Errorf("warnings after Context.Close: %q", warnings)
	}
	mu.Unlock()
	for i := 0; i < 2; i++ {
		runtime.GC()
	}
	select {
	case <-collected:
		t.Fatal("the LogFunc was released while an object still kept the context")
	case <-time.After(50 * time.Millisecond):
	}
	empty.Close() // the last object: the context goes, and log_release with it
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-collected:
			return
		case <-deadline:
			t.Fatal("the LogFunc was never released")
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Variables may be updated from several goroutines at once; AssignAdd is atomic.
func TestConcurrentAssignAdd(t *testing.T) {
	ctx := newContext(t)
	v := newVariable(t, ctx, []int64{0, 0})
	defer v.Close()
	one := tensor(t, ctx, []int64{2}, []int64{1, 1})
	root := must(cairn.NewTrackable(ctx))
	defer root.Close()
	const goroutines, rounds = 8, 200
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				if err := v.AssignAdd(one); err != nil {
					t.Error(err)
					return
				}
				name := string(rune('a' + g))
				if err := root.Set(name, v); err != nil {
					t.Error(err)
					return
				}
				if got, err := root.Get(name); err != nil {
					t.Error(err)
					return
				} else {
					got.Close()
				}
			}
		}(g)
	}
	wg.Wait()
	wantValue(t, v, int64(goroutines*rounds), goroutines*rounds)
	if root.NumChildren() != goroutines {
		t.Errorf("%d children, want %d", root.NumChildren(), goroutines)
	}
}
