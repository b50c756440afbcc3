package cairn_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// ---- Input pipelines (tf.data) ----

// datasets is keep: keep(constructor(...)) checks the result of a dataset constructor and closes
// the dataset when the test ends.
func datasets(t testing.TB) (keep func(*cairn.Dataset, error) *cairn.Dataset) {
	return func(d *cairn.Dataset, err error) *cairn.Dataset {
		t.Helper()
		if err != nil {
			t.Fatalf("building the dataset: %v", err)
		}
		t.Cleanup(d.Close)
		return d
	}
}

func iterate(t testing.TB, d *cairn.Dataset) *cairn.Iterator {
	t.Helper()
	it, err := d.Iterate()
	ok(t, err)
	t.Cleanup(it.Close)
	return it
}

// drain reads component 0 of every element left (as E), failing on an error.
func drain[E cairn.Element](t testing.TB, it *cairn.Iterator) [][]E {
	t.Helper()
	var out [][]E
	for e, err := range it.All() {
		ok(t, err)
		out = append(out, must(cairn.Read[E](e.Tensors[0])))
		e.Close()
	}
	return out
}

// flat is the values of drain, each element's in turn.
func flat[E cairn.Element](t testing.TB, it *cairn.Iterator) []E {
	t.Helper()
	var out []E
	for _, v := range drain[E](t, it) {
		out = append(out, v...)
	}
	return out
}

// times multiplies component 0 by k: a compiled map body.
func times(k int64) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		factor := scalar(ctx, k)
		defer factor.Close()
		y, err := ops.Mul(ctx, in[0], factor)
		return []*cairn.Tensor{y}, err
	}
}

func TestDatasetRangeMapBatch(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 10, 1))
	doubled := keep(r.Map("double", times(2), cairn.WithParallelCalls(4), cairn.WithOutputNames("x")))
	batched := keep(doubled.Batch(3, false))

	if got := batched.Cardinality(); got != 4 {
		t.Errorf("Cardinality = %d, want 4", got)
	}
	spec, err := batched.Spec()
	ok(t, err)
	if len(spec) != 1 || spec[0].Name != "x" || spec[0].DType != cairn.Int64 || !slices.Equal(spec[0].Shape, []int64{-1}) {
		t.Errorf("Spec = %v, want [x: int64[-1]]", spec)
	}
	if d := batched.String(); !strings.Contains(d, "range(0, 10, 1)") || !strings.Contains(d, "double") {
		t.Errorf("Describe = %q", d)
	}
	got := drain[int64](t, iterate(t, batched))
	want := [][]int64{{0, 2, 4}, {6, 8, 10}, {12, 14, 16}, {18}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("elements %v, want %v", got, want)
	}
	// The input stays usable.
	if got := flat[int64](t, iterate(t, r)); !slices.Equal(got, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("range after Map: %v", got)
	}
}

// Shuffle, repeat and prefetch: each pass is a permutation of the input, the passes differ, and
// the same seed gives the same order.
func TestDatasetShuffleRepeatPrefetch(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 8, 1))
	pipeline := func(seed int64) *cairn.Dataset {
		s := keep(r.Shuffle(8, seed, true))
		rep := keep(s.Repeat(2))
		return keep(rep.Prefetch(cairn.Autotune))
	}
	a := flat[int64](t, iterate(t, pipeline(7)))
	if len(a) != 16 {
		t.Fatalf("%d elements, want 16", len(a))
	}
	for pass := 0; pass < 2; pass++ {
		sorted := slices.Clone(a[pass*8 : pass*8+8])
		slices.Sort(sorted)
		if !slices.Equal(sorted, []int64{0, 1, 2, 3, 4, 5, 6, 7}) {
			t.Errorf("pass %d is %v, not a permutation of 0..7", pass, a[pass*8:pass*8+8])
		}
	}
	if slices.Equal(a[:8], a[8:]) {
		t.Errorf("both passes are %v: reshuffle_each_iteration did not reshuffle", a[:8])
	}
	if b := flat[int64](t, iterate(t, pipeline(7))); !slices.Equal(a, b) {
		t.Errorf("seed 7 gave %v, then %v", a, b)
	}
}

func TestDatasetTensorSlicesAndElements(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	x := tensor(t, ctx, []int64{3, 2}, []float32{1, 2, 3, 4, 5, 6})
	y := tensor(t, ctx, []int64{3}, []int32{7, 8, 9})
	d := keep(cairn.NewDatasetFromTensorSlices(ctx, []string{"x", "y"}, x, y))
	it := iterate(t, d)
	e, err := it.Next()
	ok(t, err)
	defer e.Close()
	if e.Len() != 2 || !slices.Equal(e.Names, []string{"x", "y"}) {
		t.Fatalf("element %v", e.Names)
	}
	if got := must(cairn.Read[float32](must(e.Get("x")))); !slices.Equal(got, []float32{1, 2}) {
		t.Errorf("x = %v", got)
	}
	if got := must(cairn.Read[int32](e.Tensors[1])); !slices.Equal(got, []int32{7}) {
		t.Errorf("y = %v", got)
	}
	_, err = e.Get("z")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, `"z"`)
	if it.Position() != 1 {
		t.Errorf("Position = %d, want 1", it.Position())
	}

	whole := keep(cairn.NewDatasetFromTensors(ctx, nil, x))
	if whole.Cardinality() != 1 || must(whole.Component(0)).Name != "0" {
		t.Errorf("from_tensors: cardinality %d, spec %v", whole.Cardinality(), must(whole.Spec()))
	}
	_, err = cairn.NewDatasetFromTensorSlices(ctx, []string{"x"}, x, y)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewDatasetFromTensorSlices: 1 names for 2 tensors")
}

// End of data is ErrEndOfData (also an OUT_OF_RANGE *Error), again on every later call.
func TestIteratorEndOfData(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	it := iterate(t, keep(cairn.NewDatasetRange(ctx, 0, 1, 1)))
	e, err := it.Next()
	ok(t, err)
	e.Close()
	for i := 0; i < 2; i++ {
		_, err = it.Next()
		if !errors.Is(err, cairn.ErrEndOfData) || !errors.Is(err, cairn.ErrOutOfRange) {
			t.Fatalf("Next at the end: %v", err)
		}
		wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "end of data")
	}
	it.Close()
	_, err = it.Next()
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "Iterator.Next: iterator is closed")
}

func TestDatasetCSV(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	path := filepath.Join(t.TempDir(), "rows.csv")
	ok(t, os.WriteFile(path, []byte("a,b,name\n1.5,2,one\n,4,\"t,wo\"\n3.25,6,three\n"), 0o644))
	d := keep(cairn.NewDatasetCSV(ctx, []string{path}, []cairn.DType{cairn.Float32, cairn.Int32, cairn.String},
		cairn.WithHeader(true), cairn.WithColumnDefaults(map[int]string{0: "-1"})))
	names := []string{}
	for _, s := range must(d.Spec()) {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a", "b", "name"}) {
		t.Errorf("names %v, want the header's", names)
	}
	var a []float32
	var b []int32
	var text []string
	for e, err := range iterate(t, d).All() {
		ok(t, err)
		a = append(a, must(cairn.Read[float32](e.Tensors[0]))...)
		b = append(b, must(cairn.Read[int32](e.Tensors[1]))...)
		text = append(text, string(must(e.Tensors[2].Bytes())))
		e.Close()
	}
	if !slices.Equal(a, []float32{1.5, -1, 3.25}) || !slices.Equal(b, []int32{2, 4, 6}) ||
		!slices.Equal(text, []string{"one", "t,wo", "three"}) {
		t.Errorf("columns %v %v %q", a, b, text)
	}

	// A missing required field names the file and the line, and the iterator goes on.
	bad := filepath.Join(t.TempDir(), "bad.csv")
	ok(t, os.WriteFile(bad, []byte("1,2\n3,\n5,6\n"), 0o644))
	it := iterate(t, keep(cairn.NewDatasetCSV(ctx, []string{bad}, []cairn.DType{cairn.Int64, cairn.Int64})))
	var got []int64
	var failures []error
	for e, err := range it.All() {
		if err != nil {
			failures = append(failures, err)
			continue
		}
		got = append(got, must(cairn.Read[int64](e.Tensors[0]))...)
		e.Close()
	}
	if !slices.Equal(got, []int64{1, 5}) || len(failures) != 1 || !strings.Contains(failures[0].Error(), bad+":2") {
		t.Errorf("got %v and errors %v, want [1 5] and one error naming %s:2", got, failures, bad)
	}
}

func TestDatasetTFRecord(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	dir := t.TempDir()
	records := someRecords(5)
	paths := []string{filepath.Join(dir, "a.tfrecord"), filepath.Join(dir, "b.tfrecord")}
	writeRecords(t, paths[0], records[:3])
	writeRecords(t, paths[1], records[3:])
	d := keep(cairn.NewDatasetTFRecord(ctx, paths))
	var got [][]byte
	for e, err := range iterate(t, d).All() {
		ok(t, err)
		got = append(got, must(must(e.Get("record")).Bytes()))
		e.Close()
	}
	if !slices.EqualFunc(got, records, slices.Equal) {
		t.Errorf("records %q, want %q", got, records)
	}
	// Two files read at once alternate, one record each.
	par := keep(cairn.NewDatasetTFRecord(ctx, paths, cairn.WithNumParallelReads(2), cairn.CompressionNone))
	var order [][]byte
	for _, r := range drain[uint8](t, iterate(t, par)) {
		order = append(order, r)
	}
	want := [][]byte{records[0], records[3], records[1], records[4], records[2]}
	if !slices.EqualFunc(order, want, slices.Equal) {
		t.Errorf("parallel reads %q, want %q", order, want)
	}
}

// A generator with a declared spec; ErrEndOfData ends it; a panic fails one element only.
func TestDatasetGenerator(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	spec := []cairn.ComponentSpec{{Name: "n", DType: cairn.Int64}}
	gen := func(ctx *cairn.Context, index int64) ([]*cairn.Tensor, error) {
		switch {
		case index == 5:
			return nil, cairn.ErrEndOfData
		case index == 2:
			panic("no element two")
		}
		return []*cairn.Tensor{scalar(ctx, 10*index)}, nil
	}
	d := keep(cairn.NewDatasetFromGenerator(ctx, spec, gen))
	it := iterate(t, d)
	var got []int64
	var failures []string
	for e, err := range it.All() {
		if err != nil {
			failures = append(failures, err.Error())
			continue
		}
		got = append(got, must(cairn.Read[int64](e.Tensors[0]))...)
		e.Close()
	}
	if !slices.Equal(got, []int64{0, 10, 30, 40}) {
		t.Errorf("generated %v, want [0 10 30 40]", got)
	}
	if len(failures) != 1 || !strings.Contains(failures[0], "panicked: no element two") {
		t.Errorf("failures %q, want the panic", failures)
	}

	// An element that does not match the spec is an error naming the component.
	wrong := keep(cairn.NewDatasetFromGenerator(ctx, spec, func(ctx *cairn.Context, index int64) ([]*cairn.Tensor, error) {
		if index > 0 {
			return nil, cairn.ErrEndOfData
		}
		return []*cairn.Tensor{scalar(ctx, float32(1))}, nil
	}))
	_, err := iterate(t, wrong).Next()
	if err == nil || !strings.Contains(err.Error(), "n") {
		t.Errorf("a float32 for an int64 component: %v", err)
	}
}

// TensorFlow's documented interleave example: range(1, 6).interleave(lambda x:
// from_tensors(x).repeat(6), cycle_length=2, block_length=4).
func TestDatasetInterleave(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 1, 6, 1))
	inner := func(ctx *cairn.Context, element []*cairn.Tensor) (*cairn.Dataset, error) {
		one, err := cairn.NewDatasetFromTensors(ctx, []string{"value"}, element[0])
		if err != nil {
			return nil, err
		}
		defer one.Close()
		return one.Repeat(6)
	}
	spec := []cairn.ComponentSpec{{Name: "value", DType: cairn.Int64}}
	for _, parallel := range []int{0, 4} {
		d := keep(r.Interleave(inner, spec, cairn.WithCycleLength(2), cairn.WithBlockLength(4), cairn.WithParallelCalls(parallel)))
		got := flat[int64](t, iterate(t, d))
		want := []int64{1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5}
		if !slices.Equal(got, want) {
			t.Errorf("parallel %d: %v, want %v", parallel, got, want)
		}
	}
}

// An eager map runs on Cairn's worker threads, four at once: the results come in order, the
// same every run, and a failing or panicking call fails only its element.
func TestDatasetEagerMapConcurrentCallsAndErrors(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 40, 1))
	var calls, running, most atomic.Int64
	runtime.LockOSThread() // the test's thread, which no callback may run on
	defer runtime.UnlockOSThread()
	caller := int64(syscall.Gettid())
	var onCaller atomic.Bool
	square := func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		calls.Add(1)
		onCaller.Store(onCaller.Load() || int64(syscall.Gettid()) == caller)
		now := running.Add(1)
		defer running.Add(-1)
		for old := most.Load(); now > old && !most.CompareAndSwap(old, now); old = most.Load() {
		}
		// The first calls wait (briefly) for a second one to run at the same time.
		for deadline := time.Now().Add(2 * time.Second); calls.Load() <= 4 && most.Load() < 2 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		v := must(cairn.Read[int64](in[0]))[0]
		switch v {
		case 13:
			return nil, fmt.Errorf("thirteen is unlucky")
		case 17:
			panic("seventeen")
		}
		y, err := ops.Mul(ctx, in[0], in[0])
		return []*cairn.Tensor{y}, err
	}
	d := keep(r.Map("square", square, cairn.WithEager(), cairn.WithParallelCalls(4),
		cairn.WithOutputSpecs(cairn.ComponentSpec{Name: "sq", DType: cairn.Int64})))
	for run := 0; run < 2; run++ {
		var got []int64
		var failures []string
		for e, err := range iterate(t, d).All() {
			if err != nil {
				failures = append(failures, err.Error())
				continue
			}
			got = append(got, must(cairn.Read[int64](e.Tensors[0]))[0])
			e.Close()
		}
		var want []int64
		for i := int64(0); i < 40; i++ {
			if i != 13 && i != 17 {
				want = append(want, i*i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("run %d: %v, want %v", run, got, want)
		}
		if len(failures) != 2 || !strings.Contains(failures[0], "map 'square'") || !strings.Contains(failures[0], "element 13") ||
			!strings.Contains(failures[0], "thirteen is unlucky") || !strings.Contains(failures[1], "element 17") ||
			!strings.Contains(failures[1], "panicked: seventeen") {
			t.Errorf("run %d: failures %q", run, failures)
		}
	}
	if calls.Load() < 80 || most.Load() < 2 || onCaller.Load() {
		t.Errorf("%d calls for two runs of 40 elements, at most %d at once (want 2 or more), on the caller's thread: %v",
			calls.Load(), most.Load(), onCaller.Load())
	}
}

// Several goroutines pull from one iterator: each element goes to exactly one of them.
func TestIteratorConcurrentNext(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 200, 1))
	m := keep(r.Map("plus", times(1), cairn.WithParallelCalls(4)))
	it := iterate(t, m)
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, err := it.Next()
				if errors.Is(err, cairn.ErrEndOfData) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				v := must(cairn.Read[int64](e.Tensors[0]))[0]
				e.Close()
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(got)
	for i, v := range got {
		if v != int64(i) {
			t.Fatalf("element %d is %d (got %d elements)", i, v, len(got))
		}
	}
	if len(got) != 200 {
		t.Errorf("%d elements, want 200", len(got))
	}
}

// shuffledPipeline is range(0, 20).map.shuffle.batch(3).repeat(2).prefetch(2).
func shuffledPipeline(t *testing.T, ctx *cairn.Context) *cairn.Dataset {
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 20, 1))
	m := keep(r.Map("times3", times(3), cairn.WithParallelCalls(4)))
	s := keep(m.Shuffle(20, 5, true))
	b := keep(s.Batch(3, false))
	rep := keep(b.Repeat(2))
	return keep(rep.Prefetch(2))
}

// Save, a fresh iterator, Restore: the remainder is the one the first iterator gives.
func TestIteratorSaveRestore(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	d := shuffledPipeline(t, ctx)
	for _, cut := range []int{0, 3, 7, 9} {
		first := iterate(t, d)
		for i := 0; i < cut; i++ {
			e, err := first.Next()
			ok(t, err)
			e.Close()
		}
		state, err := first.Save()
		ok(t, err)
		if first.Position() != int64(cut) {
			t.Errorf("Position %d, want %d", first.Position(), cut)
		}
		want := drain[int64](t, first)
		second := iterate(t, d)
		ok(t, second.Restore(state))
		if second.Position() != int64(cut) {
			t.Errorf("restored Position %d, want %d", second.Position(), cut)
		}
		if got := drain[int64](t, second); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("cut %d: restored %v, want %v", cut, got, want)
		}
	}
	// Another pipeline's state is refused, naming both.
	other := iterate(t, keep(cairn.NewDatasetRange(ctx, 0, 5, 1)))
	state, err := iterate(t, d).Save()
	ok(t, err)
	err = other.Restore(state)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "range(0, 5, 1)")
}

// An iterator in a checkpoint with a variable, restored into a new iterator through a new
// checkpoint object.
func TestIteratorInCheckpoint(t *testing.T) {
	ctx := newContext(t)
	d := shuffledPipeline(t, ctx)
	dir := t.TempDir()

	it := iterate(t, d)
	v := newVariable(t, ctx, []float32{1, 2})
	defer v.Close()
	ckpt := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"data": it, "v": v}))
	defer ckpt.Close()
	for i := 0; i < 4; i++ {
		e, err := it.Next()
		ok(t, err)
		e.Close()
	}
	path := must(ckpt.Save(filepath.Join(dir, "ckpt")))
	ok(t, v.Assign(tensor(t, ctx, []int64{2}, []float32{5, 6})))
	want := drain[int64](t, it)

	it2 := iterate(t, d)
	v2 := newVariable(t, ctx, []float32{0, 0})
	defer v2.Close()
	ckpt2 := must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"data": it2, "v": v2}))
	defer ckpt2.Close()
	status := must(ckpt2.Restore(path))
	ok(t, status.AssertConsumed())
	status.Close()
	if it2.Position() != 4 {
		t.Errorf("restored Position %d, want 4", it2.Position())
	}
	if it2.Kind() != cairn.ObjectKindIterator {
		t.Errorf("Kind %v", it2.Kind())
	}
	wantValue[float32](t, v2, 1, 2)
	if got := drain[int64](t, it2); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("restored %v, want %v", got, want)
	}
}

// Misuse the binding sees itself is said in Go terms.
func TestDatasetMisuse(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 3, 1))
	_, err := r.Filter("f", times(1), cairn.WithParallelCalls(2))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Dataset.Filter: WithParallelCalls does not apply here")
	_, err = r.Map("m", nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Dataset.Map: function is nil")
	_, err = r.Batch(0, false)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "batch")
	closed := must(cairn.NewDatasetRange(ctx, 0, 1, 1))
	closed.Close()
	_, err = closed.Take(1)
	wantError(t, err, "FAILED_PRECONDITION: Dataset.Take: dataset is closed")
	_, err = r.Concatenate(closed)
	wantError(t, err, "FAILED_PRECONDITION: Dataset.Concatenate: other is closed")
	if closed.Cardinality() != cairn.UnknownCardinality || closed.String() != "Dataset(closed)" {
		t.Errorf("closed dataset: %d %q", closed.Cardinality(), closed.String())
	}
	// A compiled map whose body fails fails when it is built.
	_, err = r.Map("broken", func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) {
		return nil, errors.New("cannot trace")
	})
	if err == nil || !strings.Contains(err.Error(), "cannot trace") {
		t.Errorf("a body that fails while tracing: %v", err)
	}
}

// Filter, take, skip, shard, zip, concatenate, enumerate and select, with values worked by hand.
func TestDatasetTransformations(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	r := keep(cairn.NewDatasetRange(ctx, 0, 10, 1))
	even := keep(r.Filter("even", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		two, zero := scalar(ctx, int64(2)), scalar(ctx, int64(0))
		defer two.Close()
		defer zero.Close()
		m, err := ops.FloorMod(ctx, in[0], two)
		if err != nil {
			return nil, err
		}
		defer m.Close()
		eq, err := ops.Equal(ctx, m, zero)
		return []*cairn.Tensor{eq}, err
	}))
	if even.Cardinality() != cairn.UnknownCardinality {
		t.Errorf("filter cardinality %d", even.Cardinality())
	}
	check := func(name string, d *cairn.Dataset, err error, want ...int64) {
		t.Helper()
		if got := flat[int64](t, iterate(t, keep(d, err))); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	check("filter", even, nil, 0, 2, 4, 6, 8)
	d, err := r.Skip(2)
	ok(t, err)
	d = keep(d, err)
	check("skip.take", must(d.Take(3)), nil, 2, 3, 4)
	check("shard", must(r.Shard(3, 1)), nil, 1, 4, 7)
	check("concatenate", must(must(r.Take(2)).Concatenate(must(r.Skip(8)))), nil, 0, 1, 8, 9)
	check("unbatch", must(must(r.Batch(4, true)).Unbatch()), nil, 0, 1, 2, 3, 4, 5, 6, 7)

	en := keep(r.Enumerate(100))
	renamed := keep(en.Select([]string{"value", "index"}, []string{"v", "i"}))
	zipped := keep(cairn.ZipDatasets(renamed, keep(r.Select([]string{"value"}, []string{"w"}))))
	names := []string{}
	for _, s := range must(zipped.Spec()) {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"v", "i", "w"}) {
		t.Errorf("zip names %v", names)
	}
	e, err := iterate(t, must(zipped.Skip(3))).Next()
	ok(t, err)
	defer e.Close()
	if v, i := must(cairn.Read[int64](e.Tensors[0]))[0], must(cairn.Read[int64](e.Tensors[1]))[0]; v != 3 || i != 103 {
		t.Errorf("enumerate: value %d index %d, want 3 103", v, i)
	}
}

// padded_batch as TensorFlow documents it: elements [1], [2,2], [3,3,3], [4,4,4,4] in batches of 2.
func TestDatasetPaddedBatch(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	gen := keep(cairn.NewDatasetFromGenerator(ctx, []cairn.ComponentSpec{{Name: "x", DType: cairn.Int64, Shape: []int64{-1}}},
		func(ctx *cairn.Context, index int64) ([]*cairn.Tensor, error) {
			if index >= 4 {
				return nil, cairn.ErrEndOfData
			}
			n := index + 1
			values := make([]int64, n)
			for i := range values {
				values[i] = n
			}
			return []*cairn.Tensor{must(cairn.NewTensor(ctx, []int64{n}, values))}, nil
		}))
	got := drain[int64](t, iterate(t, keep(gen.PaddedBatch(2, false, nil, nil))))
	want := [][]int64{{1, 0, 2, 2}, {3, 3, 3, 0, 4, 4, 4, 4}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("padded_batch %v, want %v", got, want)
	}
	pad := tensor(t, ctx, nil, []int64{-1})
	got = drain[int64](t, iterate(t, keep(gen.PaddedBatch(2, true, [][]int64{{5}}, []*cairn.Tensor{pad}))))
	want = [][]int64{{1, -1, -1, -1, -1, 2, 2, -1, -1, -1}, {3, 3, 3, -1, -1, 4, 4, 4, 4, -1}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("padded_batch to 5 with -1: %v, want %v", got, want)
	}
}

// The binding holds a dataset's Go callbacks until the last dataset (or iterator) using them is
// freed, then lets them go: what they capture becomes garbage.
func TestDatasetReleasesCallbacks(t *testing.T) {
	ctx := newContext(t)
	var released atomic.Int32
	captured := func() *[64]byte {
		held := new([64]byte)
		runtime.SetFinalizer(held, func(*[64]byte) { released.Add(1) })
		return held
	}
	func() {
		g, m, i := captured(), captured(), captured()
		gen := must(cairn.NewDatasetFromGenerator(ctx, []cairn.ComponentSpec{{Name: "value", DType: cairn.Int64}},
			func(ctx *cairn.Context, index int64) ([]*cairn.Tensor, error) {
				if index >= 2+int64(g[0]) {
					return nil, cairn.ErrEndOfData
				}
				return []*cairn.Tensor{scalar(ctx, index)}, nil
			}))
		defer gen.Close()
		mapped := must(gen.Map("m", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return []*cairn.Tensor{scalar(ctx, int64(m[0]))}, nil
		}, cairn.WithEager(), cairn.WithOutputSpecs(cairn.ComponentSpec{Name: "value", DType: cairn.Int64})))
		defer mapped.Close()
		inter := must(mapped.Interleave(func(ctx *cairn.Context, e []*cairn.Tensor) (*cairn.Dataset, error) {
			return cairn.NewDatasetRange(ctx, 0, 1+int64(i[0]), 1)
		}, []cairn.ComponentSpec{{Name: "value", DType: cairn.Int64}}))
		defer inter.Close()
		it := must(inter.Iterate())
		defer it.Close()
		if got := flat[int64](t, it); !slices.Equal(got, []int64{0, 0}) {
			t.Errorf("elements %v, want [0 0]", got)
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); released.Load() < 3 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if n := released.Load(); n != 3 {
		t.Errorf("%d of the 3 callbacks' captures were let go after the datasets were closed", n)
	}
}

// Text lines, file lists, caches (memory and file), Example parsing and a prefetch to the CPU.
func TestDatasetFilesCacheAndExamples(t *testing.T) {
	ctx := newContext(t)
	keep := datasets(t)
	dir := t.TempDir()
	for i, text := range []string{"b1\nb2\n", "a1\n"} {
		ok(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%c.txt", 'b'-i)), []byte(text), 0o644))
	}
	files := keep(cairn.NewDatasetListFiles(ctx, []string{filepath.Join(dir, "*.txt")}, false, 0))
	var names []string
	for _, f := range drain[uint8](t, iterate(t, files)) {
		names = append(names, filepath.Base(string(f)))
	}
	if !slices.Equal(names, []string{"a.txt", "b.txt"}) {
		t.Errorf("list_files %v", names)
	}
	lines := keep(cairn.NewDatasetTextLines(ctx, filepath.Join(dir, "b.txt"), filepath.Join(dir, "a.txt")))
	for _, cache := range []string{"", filepath.Join(dir, "lines.cache")} {
		cached := keep(lines.Cache(cache))
		for pass := 0; pass < 2; pass++ {
			var got []string
			for _, l := range drain[uint8](t, iterate(t, cached)) {
				got = append(got, string(l))
			}
			if !slices.Equal(got, []string{"b1", "b2", "a1"}) {
				t.Errorf("cache %q pass %d: %q", cache, pass, got)
			}
		}
	}

	path := filepath.Join(dir, "examples.tfrecord")
	w := must(cairn.OpenRecordWriter(path))
	for i := int64(0); i < 3; i++ {
		e := must(cairn.NewExample())
		ok(t, e.SetInt64s("id", []int64{i}))
		ok(t, e.SetFloats("xy", []float32{float32(i), float32(-i)}))
		ok(t, w.Write(must(e.Serialize())))
		e.Close()
	}
	ok(t, w.Close())
	records := keep(cairn.NewDatasetTFRecord(ctx, []string{path}))
	parsed := keep(records.ParseExample("record", []cairn.FeatureSpec{
		{Key: "id", DType: cairn.Int64}, {Key: "xy", DType: cairn.Float32, Shape: []int64{2}}}))
	onCPU := keep(parsed.PrefetchToDevice("cpu", 2))
	var ids []int64
	var xy []float32
	for e, err := range iterate(t, onCPU).All() {
		ok(t, err)
		ids = append(ids, must(cairn.Read[int64](must(e.Get("id"))))...)
		xy = append(xy, must(cairn.Read[float32](must(e.Get("xy"))))...)
		e.Close()
	}
	if !slices.Equal(ids, []int64{0, 1, 2}) || !slices.Equal(xy, []float32{0, 0, 1, -1, 2, -2}) {
		t.Errorf("parsed ids %v xy %v", ids, xy)
	}
}
