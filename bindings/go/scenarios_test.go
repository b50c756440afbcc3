package cairn_test

// The conformance scenarios S1-S8 of SCENARIOS.md (shared/design), ported from
// tests/capi/scenarios_test.c with the exact listings. Each round builds fresh objects, as a new
// run of a program would.

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cairn.dev/cairn"
)

// scenario holds one context for a scenario and the helpers that build objects from it.
type scenario struct {
	t   *testing.T
	ctx *cairn.Context
}

func newScenario(t *testing.T) *scenario {
	return &scenario{t: t, ctx: newContext(t)}
}

// variable makes a variable named name holding a scalar.
func variable[E cairn.Element](s *scenario, value E, name string, options ...cairn.VariableOption) *cairn.Variable {
	return newVariable(s.t, s.ctx, []E{value}, append([]cairn.VariableOption{cairn.WithVariableName(name)}, options...)...)
}

func (s *scenario) trackable() *cairn.Object { return must(cairn.NewTrackable(s.ctx)) }

// setChild sets parent.name = child and closes the caller's handle to child.
func (s *scenario) setChild(parent interface {
	Set(string, cairn.Tracked) error
}, name string, child interface {
	cairn.Tracked
	Close()
}) {
	s.t.Helper()
	ok(s.t, parent.Set(name, child))
	child.Close()
}

// get follows "a/b/c" one edge at a time and returns the variable at the end.
func (s *scenario) get(root *cairn.Object, path string) *cairn.Variable {
	s.t.Helper()
	cur := root
	for i, part := range strings.Split(path, "/") {
		next, err := cur.Get(part)
		if i > 0 {
			cur.Close()
		}
		ok(s.t, err)
		cur = next
	}
	return must(cur.AsVariable())
}

// read is the scalar value of the variable at path, as a float64.
func (s *scenario) read(root *cairn.Object, path string) float64 {
	s.t.Helper()
	v := s.get(root, path)
	defer v.Close()
	return s.value(v)
}

func (s *scenario) value(v *cairn.Variable) float64 {
	s.t.Helper()
	switch v.DType() {
	case cairn.Int32:
		return float64(must(cairn.ReadValue[int32](v))[0])
	case cairn.Float32:
		return float64(must(cairn.ReadValue[float32](v))[0])
	}
	s.t.Fatalf("%s is %v", v.Name(), v.DType())
	return 0
}

// add adds delta to the int32 variable at path.
func (s *scenario) add(root *cairn.Object, path string, delta int32) {
	s.t.Helper()
	v := s.get(root, path)
	defer v.Close()
	d := must(cairn.NewTensor(s.ctx, nil, []int32{delta}))
	defer d.Close()
	ok(s.t, v.AssignAdd(d))
}

func (s *scenario) checkpoint(name string, root cairn.Tracked) *cairn.Checkpoint {
	return must(cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{name: root}))
}

// restoreLatest restores the manager's latest checkpoint ("" restores nothing).
func (s *scenario) restoreLatest(c *cairn.Checkpoint, m *cairn.CheckpointManager) {
	s.t.Helper()
	rs := must(c.Restore(m.Latest()))
	rs.Close()
}

func basenames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// row is a listing row: a key, its dtype (which a Cairn file names as the library does) and its
// shape.
func row(key string, dtype cairn.DType, shape ...int64) cairn.CheckpointEntry {
	if shape == nil {
		shape = []int64{}
	}
	return cairn.CheckpointEntry{Key: key, DType: dtype, TypeName: dtype.String(), Shape: shape}
}

// wantListing checks the checkpoint at path holds exactly rows: sorted keys, dtypes, shapes.
func wantListing(t *testing.T, path string, rows ...cairn.CheckpointEntry) {
	t.Helper()
	r := must(cairn.OpenCheckpointReader(path))
	defer r.Close()
	if got := r.Entries(); !reflect.DeepEqual(got, rows) {
		t.Errorf("listing of %s:\n got  %v\n want %v", filepath.Base(path), got, rows)
	}
}

const graphKey = "_CHECKPOINTABLE_OBJECT_GRAPH"

var (
	counterRow = row("save_counter/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int64)
	s2Listing  = []cairn.CheckpointEntry{
		row(graphKey, cairn.String),
		counterRow,
		row("tr2/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
	}
	s4Listing = []cairn.CheckpointEntry{
		row(graphKey, cairn.String),
		counterRow,
		row("tr3/br_dict/br3/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
		row("tr3/br_list/0/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
		row("tr3/br_list/1/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
	}
)

// S1: a plain trackable and a manager with max_to_keep=2, over three rounds.
func TestS1ManagerMaxToKeep(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	before := map[int][]string{1: {}, 2: {"ckpt-1"}, 3: {"ckpt-1", "ckpt-2"}}
	for round := 1; round <= 3; round++ {
		tr1 := s.trackable()
		s.setChild(tr1, "tr1_v", variable(s, int32(1), "tr1_v"))
		c := s.checkpoint("tr1", tr1)
		m := must(cairn.NewCheckpointManager(c, dir, cairn.WithMaxToKeep(2)))
		if got := basenames(m.Checkpoints()); !slices.Equal(got, before[round]) {
			t.Errorf("round %d: the manager lists %v before saving, want %v", round, got, before[round])
		}
		s.restoreLatest(c, m)
		if got := s.read(tr1, "tr1_v"); got != float64(round) { // prints 1, 2, 3
			t.Errorf("round %d: tr1_v = %v", round, got)
		}
		s.add(tr1, "tr1_v", 1)
		path := must(m.Save())
		if path != m.Latest() || filepath.Base(path) != "ckpt-"+string(rune('0'+round)) {
			t.Errorf("round %d: saved %s, latest %s", round, path, m.Latest())
		}
		if round == 3 {
			if got := basenames(m.Checkpoints()); !slices.Equal(got, []string{"ckpt-2", "ckpt-3"}) {
				t.Errorf("after round 3 the manager lists %v", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "ckpt-1")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("ckpt-1 is still on disk: %v", err)
			}
		}
		m.Close()
		c.Close()
		tr1.Close()
	}
}

func (s *scenario) makeTr2() *cairn.Object {
	tr2 := s.trackable()
	s.setChild(tr2, "v", variable(s, int32(1000), "v"))
	untracked := variable(s, int32(0), "untracked")
	ok(s.t, tr2.SetUntracked("untracked", untracked))
	untracked.Close()
	return tr2
}

// S2 (auto-tracking and untracked attributes) and S3 (deleting an edge).
func TestS2S3UntrackedAndDelete(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	for round := 1; round <= 2; round++ {
		tr2 := s.makeTr2()
		c := s.checkpoint("tr2", tr2)
		m := must(cairn.NewCheckpointManager(c, dir))
		s.restoreLatest(c, m)
		if v, u := s.read(tr2, "v"), s.read(tr2, "untracked"); v != float64(1000*round) || u != 0 {
			t.Errorf("round %d: v = %v, untracked = %v", round, v, u)
		}
		s.add(tr2, "v", 1000)
		must(m.Save())
		wantListing(t, m.Latest(), s2Listing...)
		if round == 2 {
			r := must(cairn.OpenCheckpointReader(m.Latest()))
			v := must(r.Load(s.ctx, "tr2/v/.ATTRIBUTES/VARIABLE_VALUE"))
			if got := must(cairn.Read[int32](v)); !slices.Equal(got, []int32{3000}) {
				t.Errorf("tr2/v in the file = %v, want 3000", got)
			}
			v.Close()
			_, err := r.Load(s.ctx, "tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE")
			wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "no key named 'tr2/untracked/.ATTRIBUTES/VARIABLE_VALUE'")
			graph := must(r.LoadString(graphKey))
			if len(graph) == 0 {
				t.Error("the object graph entry is empty")
			}
			_, err = r.Load(s.ctx, graphKey)
			wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
			r.Close()

			// S3: an edge added, saved, deleted, saved again.
			s.setChild(tr2, "deleted", variable(s, int32(-1), "deleted"))
			must(m.Save())
			wantListing(t, m.Latest(),
				row(graphKey, cairn.String),
				counterRow,
				row("tr2/deleted/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
				row("tr2/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32))
			ok(t, tr2.Delete("deleted"))
			wantCode(t, tr2.Delete("deleted"), cairn.CodeNotFound, cairn.ErrNotFound, "deleted")
			must(m.Save())
			wantListing(t, m.Latest(), s2Listing...)
		}
		m.Close()
		c.Close()
		tr2.Close()
	}
}

func (s *scenario) branch() *cairn.Object {
	br := s.trackable()
	s.setChild(br, "v", variable(s, int32(5), "v"))
	return br
}

// S4 (containers) and S5 (sharing).
func TestS4S5ContainersAndSharing(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	tr3, br1, br2, br3 := s.trackable(), s.branch(), s.branch(), s.branch()
	defer tr3.Close()
	defer br1.Close()
	defer br2.Close()
	defer br3.Close()

	list := must(cairn.NewList(s.ctx))
	ok(t, list.Append(br1))
	ok(t, list.Append(br2))
	s.setChild(tr3, "br_list", list)
	dict := must(cairn.NewDict(s.ctx))
	ok(t, dict.Set("br3", br3))
	s.setChild(tr3, "br_dict", dict)
	c := s.checkpoint("tr3", tr3)
	defer c.Close()
	m := must(cairn.NewCheckpointManager(c, dir))
	defer m.Close()
	must(m.Save())
	wantListing(t, m.Latest(), s4Listing...)

	// S5: a dict that shares br1 and br2 with the list.
	dict = must(cairn.NewDict(s.ctx))
	ok(t, dict.Set("br1", br1))
	ok(t, dict.Set("br2", br2))
	ok(t, dict.Set("br3", br3))
	s.setChild(tr3, "br_dict", dict)
	rs := must(c.Restore(m.Latest()))
	ok(t, rs.AssertConsumed())
	rs.Close()
	for _, br := range []*cairn.Object{br1, br2, br3} {
		s.add(br, "v", 5)
	}
	must(m.Save())
	wantListing(t, m.Latest(), s4Listing...)
	for _, br := range []*cairn.Object{br1, br2, br3} {
		s.add(br, "v", -10)
	}
	paths := []string{"br_list/0/v", "br_list/1/v", "br_dict/br3/v", "br_dict/br1/v", "br_dict/br2/v"}
	for _, p := range paths {
		if got := s.read(tr3, p); got != 0 {
			t.Errorf("%s = %v after adding -10, want 0", p, got)
		}
	}
	c2 := s.checkpoint("tr3", tr3)
	defer c2.Close()
	rs = must(c2.Restore(m.Latest()))
	rs.Close()
	for _, p := range paths {
		if got := s.read(tr3, p); got != 10 {
			t.Errorf("%s = %v after restoring, want 10", p, got)
		}
	}
}

func (s *scenario) moduleWithVar(name string) *cairn.Module {
	mod := must(cairn.NewModule(s.ctx, name))
	s.setChild(mod, "v", variable(s, int32(7), "m_v", cairn.WithScope(mod)))
	return mod
}

// S6: modules and name scopes.
func TestS6Modules(t *testing.T) {
	s := newScenario(t)
	m1, m2, m3 := s.moduleWithVar("m1"), s.moduleWithVar("m2"), s.moduleWithVar("m3")
	defer m1.Close()
	defer m2.Close()
	defer m3.Close()
	ok(t, m1.Set("sub", m2))
	ok(t, m2.Set("sub", m3))

	var names []string
	for _, v := range must(m1.Variables(false)) {
		names = append(names, v.Name())
		v.Close()
	}
	if !slices.Equal(names, []string{"m1/m_v:0", "m2/m_v:0", "m3/m_v:0"}) {
		t.Errorf("variables of m1: %v", names)
	}
	var subs []string
	for _, sub := range must(m1.Submodules()) {
		subs = append(subs, sub.Name())
		sub.Close()
	}
	if !slices.Equal(subs, []string{"m2", "m3"}) {
		t.Errorf("submodules of m1: %v", subs)
	}

	c := s.checkpoint("module", m1)
	defer c.Close()
	path := filepath.Join(t.TempDir(), "modules")
	ok(t, c.Write(path))
	wantListing(t, path,
		row(graphKey, cairn.String),
		row("module/sub/sub/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
		row("module/sub/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
		row("module/v/.ATTRIBUTES/VARIABLE_VALUE", cairn.Int32),
		counterRow)
	s.add(m1.Object, "v", 1)
	s.add(m1.Object, "sub/v", 2)
	s.add(m1.Object, "sub/sub/v", 3)
	rs := must(c.Restore(path))
	ok(t, rs.AssertConsumed())
	rs.Close()
	for _, p := range []string{"v", "sub/v", "sub/sub/v"} {
		if got := s.read(m1.Object, p); got != 7 {
			t.Errorf("%s = %v after restoring, want 7", p, got)
		}
	}
}

// S7: deferred restore (restore-on-create).
func TestS7DeferredRestore(t *testing.T) {
	s := newScenario(t)
	path := filepath.Join(t.TempDir(), "deferred")

	c := must(cairn.NewCheckpoint(s.ctx, nil))
	root := c.Root()
	l0, l1 := variable(s, float32(1), "l0"), variable(s, float32(2), "l1")
	listed := must(cairn.NewList(s.ctx))
	ok(t, listed.Append(l0))
	ok(t, listed.Append(l1))
	mapped := must(cairn.NewDict(s.ctx))
	ok(t, mapped.Set("one", l0))
	ok(t, mapped.Set("two", l1))
	s.setChild(root, "listed", listed)
	s.setChild(root, "mapped", mapped)
	layer := s.trackable()
	s.setChild(layer, "kernel", variable(s, float32(3), "kernel"))
	s.setChild(root, "layer", layer)
	ok(t, c.Write(path))
	l0.Close()
	l1.Close()
	c.Close()

	// A new program state with only mapped = {"two": v2} and an empty layer.
	c2 := must(cairn.NewCheckpoint(s.ctx, nil))
	defer c2.Close()
	root = c2.Root()
	v2 := variable(s, float32(0), "v2")
	defer v2.Close()
	newMapped := must(cairn.NewDict(s.ctx))
	ok(t, newMapped.Set("two", v2))
	s.setChild(root, "mapped", newMapped)
	fakeLayer := s.trackable()
	defer fakeLayer.Close()
	ok(t, root.Set("layer", fakeLayer))
	rs := must(c2.Restore(path))
	if got := s.value(v2); got != 2 {
		t.Errorf("v2 = %v, want 2", got)
	}
	// assert_consumed fails while values are still waiting for their objects.
	wantCode(t, rs.AssertConsumed(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition,
		"listed/0/.ATTRIBUTES/VARIABLE_VALUE")
	ok(t, rs.AssertExistingObjectsMatched())
	rs.Close() // deferred restores live on with the checkpoint

	s.setChild(root, "listed", must(cairn.NewList(s.ctx)))
	newList := must(must(root.Get("listed")).AsList())
	defer newList.Close()
	v1 := variable(s, float32(0), "v1")
	defer v1.Close()
	ok(t, newList.Append(v1))
	if got := s.value(v1); got != 1 { // restored the moment it was appended
		t.Errorf("v1 = %v, want 1", got)
	}
	kernel := variable(s, float32(0), "kernel")
	defer kernel.Close()
	ok(t, fakeLayer.Set("kernel", kernel))
	if got := s.value(kernel); got != 3 {
		t.Errorf("kernel = %v, want 3", got)
	}
}

func (s *scenario) matrixVar(name string, shape []int64, fill float32) *cairn.Variable {
	v := make([]float32, 5)
	for i := range v {
		v[i] = fill + float32(i)
	}
	initial := must(cairn.NewTensor(s.ctx, shape, v))
	defer initial.Close()
	return must(cairn.NewVariable(s.ctx, initial, cairn.WithVariableName(name)))
}

// S8: partial restore through a subgraph.
func TestS8PartialRestore(t *testing.T) {
	s := newScenario(t)
	path := filepath.Join(t.TempDir(), "net")
	net, l1, fakeNet, fakeLayer := s.trackable(), s.trackable(), s.trackable(), s.trackable()
	defer net.Close()
	defer fakeNet.Close()
	s.setChild(l1, "kernel", s.matrixVar("kernel", []int64{1, 5}, 10))
	s.setChild(l1, "bias", s.matrixVar("bias", []int64{5}, 20))
	s.setChild(net, "l1", l1)
	c := s.checkpoint("net", net)
	defer c.Close()
	ok(t, c.Write(path))

	toRestore := s.matrixVar("bias", []int64{5}, 0)
	defer toRestore.Close()
	ok(t, fakeLayer.Set("bias", toRestore))
	s.setChild(fakeNet, "l1", fakeLayer)
	c2 := s.checkpoint("net", fakeNet)
	defer c2.Close()
	rs := must(c2.Restore(path))
	defer rs.Close()
	wantValue(t, toRestore, float32(20), 21, 22, 23, 24)
	ok(t, rs.AssertExistingObjectsMatched())
	wantCode(t, rs.AssertConsumed(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition,
		"net/l1/kernel/.ATTRIBUTES/VARIABLE_VALUE")
	rs.ExpectPartial()
}

// Bad input maps to errors with the C API's codes and messages.
func TestCheckpointErrors(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	tr, other := s.trackable(), s.trackable()
	defer tr.Close()
	defer other.Close()
	_, err := cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{"a": tr, "save_counter": other})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "reserved")
	_, err = cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{"a/b": tr})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cairn_checkpoint_create")
	s.setChild(tr, "v", variable(s, int32(1), "v"))
	s.setChild(other, "v", variable(s, float32(1), "v"))
	c := s.checkpoint("tr", tr)
	defer c.Close()
	path := filepath.Join(dir, "int")
	ok(t, c.Write(path))

	// A dtype mismatch names the key.
	c2 := s.checkpoint("tr", other)
	defer c2.Close()
	rs, err := c2.Restore(path)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument,
		"'tr/v/.ATTRIBUTES/VARIABLE_VALUE' is int32[] in the checkpoint")
	if rs != nil {
		t.Error("a failed restore returned a status")
	}
	// Restore("") restores nothing; the asserts fail.
	rs = must(c2.Restore(""))
	wantCode(t, rs.AssertConsumed(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "no checkpoint was restored")
	rs.Close()
	rs.Close()
	wantError(t, rs.AssertConsumed(), "FAILED_PRECONDITION: RestoreStatus.AssertConsumed: restore status is closed")

	missing := filepath.Join(dir, "missing")
	_, err = c2.Restore(missing)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing")
	_, err = cairn.OpenCheckpointReader(missing)
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "missing")
	garbage := filepath.Join(dir, "garbage")
	ok(t, os.WriteFile(garbage, []byte("this is not a checkpoint, but it is long enough to have a header and a footer......"), 0o644))
	_, err = c2.Restore(garbage)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "garbage")
	_, err = cairn.OpenCheckpointReader(garbage)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "garbage")
	// A damaged payload: flip a bit of a stored value.
	const marker = 0x13572468
	marked := s.trackable()
	defer marked.Close()
	s.setChild(marked, "v", variable(s, int32(marker), "v"))
	c4 := s.checkpoint("tr", marked)
	damaged := filepath.Join(dir, "damaged")
	ok(t, c4.Write(damaged))
	c4.Close()
	data := must(os.ReadFile(damaged))
	i := findInt32(data, marker)
	if i < 0 {
		t.Fatal("the stored value is not in the file")
	}
	data[i] ^= 0x40
	ok(t, os.WriteFile(damaged, data, 0o644))
	r := must(cairn.OpenCheckpointReader(damaged)) // the index is intact
	_, err = r.Load(s.ctx, "tr/v/.ATTRIBUTES/VARIABLE_VALUE")
	r.Close()
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "tr/v/.ATTRIBUTES/VARIABLE_VALUE")
	fresh := s.trackable()
	defer fresh.Close()
	s.setChild(fresh, "v", variable(s, int32(0), "v"))
	c5 := s.checkpoint("tr", fresh)
	defer c5.Close()
	_, err = c5.Restore(damaged)
	wantCode(t, err, cairn.CodeDataLoss, cairn.ErrDataLoss, "tr/v/.ATTRIBUTES/VARIABLE_VALUE")

	_, err = cairn.NewCheckpointManager(c, dir, cairn.WithMaxToKeep(0))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "max_to_keep")
	m := must(cairn.NewCheckpointManager(c, filepath.Join(dir, "managed"), cairn.WithCheckpointName("model"),
		cairn.WithMaxToKeep(-1), cairn.WithKeepCheckpointEveryNHours(0)))
	p7 := must(m.SaveNumber(7))
	if filepath.Base(p7) != "model-7" || m.Latest() != p7 {
		t.Errorf("SaveNumber(7) wrote %s", p7)
	}
	_, err = m.SaveNumber(-1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "negative")
	m.Close()
	m.Close()
	_, err = m.Save()
	wantError(t, err, "FAILED_PRECONDITION: CheckpointManager.Save: manager is closed")
	if m.Latest() != "" || m.Checkpoints() == nil || len(m.Checkpoints()) != 0 {
		t.Errorf("closed manager: %q %v", m.Latest(), m.Checkpoints())
	}

	// A closed checkpoint and its root.
	c3 := s.checkpoint("tr", tr)
	root := c3.Root()
	root.Close() // borrowed: does nothing
	if root.Kind() != cairn.ObjectKindTrackable || root.NumChildren() != 1 {
		t.Errorf("root: %v with %d children", root.Kind(), root.NumChildren())
	}
	c3.Close()
	c3.Close()
	wantError(t, root.Set("x", tr), "FAILED_PRECONDITION: Object.Set: object is closed")
	wantError(t, c3.Write(filepath.Join(dir, "x")), "FAILED_PRECONDITION: Checkpoint.Write: checkpoint is closed")
	_, err = cairn.NewCheckpoint(s.ctx, map[string]cairn.Tracked{"gone": root})
	wantError(t, err, "FAILED_PRECONDITION: NewCheckpoint: child \"gone\" is closed")
}

// findInt32 finds the little-endian int32 v in data; -1 when absent.
func findInt32(data []byte, v int32) int {
	return bytes.Index(data, []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
}

// Save, save_counter, async saves and compression.
func TestCheckpointSaveAndAsync(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	tr := s.trackable()
	defer tr.Close()
	s.setChild(tr, "v", variable(s, int32(41), "v"))
	c := s.checkpoint("tr", tr)
	defer c.Close()
	prefix := filepath.Join(dir, "model")
	if n := must(c.SaveCounter()); n != 0 {
		t.Errorf("SaveCounter() = %d before saving", n)
	}
	if path := must(c.Save(prefix)); filepath.Base(path) != "model-1" || must(c.SaveCounter()) != 1 {
		t.Errorf("Save wrote %s, counter %d", path, must(c.SaveCounter()))
	}
	ok(t, c.SetOptions(cairn.WithAsync(true), cairn.WithCompression(true)))
	s.add(tr, "v", 1)
	path := must(c.Save(prefix)) // model-2, written in the background
	s.add(tr, "v", 100)          // does not leak into the snapshot
	ok(t, c.Sync())
	rs := must(c.Restore(path))
	rs.Close()
	if got := s.read(tr, "v"); got != 42 || must(c.SaveCounter()) != 2 {
		t.Errorf("restored %v, counter %d", got, must(c.SaveCounter()))
	}
	// A background failure shows up on the next call, once.
	ok(t, c.Write(filepath.Join(dir, "no/such/dir/x")))
	wantCode(t, c.Sync(), cairn.CodeNotFound, cairn.ErrNotFound, "no/such/dir")
	ok(t, c.Sync())
	ok(t, c.SetOptions()) // back to the defaults: synchronous
	err := c.Write(filepath.Join(dir, "no/such/dir/y"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "no/such/dir")
	ok(t, c.SetOptions(cairn.WithFsync(false)))
	ok(t, c.Write(filepath.Join(dir, "nofsync")))
}
