package cairn

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func TestCheckABI(t *testing.T) {
	h := HeaderABIVersion
	if err := checkABI(h, h, h); err != nil {
		t.Errorf("matching versions refused: %v", err)
	}
	err := checkABI(h+1, h, h)
	if err == nil || !strings.Contains(err.Error(), "loaded libcairn has ABI version 2 but this Go package needs 1") {
		t.Errorf("library mismatch: %v", err)
	}
	err = checkABI(h, h+1, h)
	if err == nil || !strings.Contains(err.Error(), "cairn.h declares ABI version 2 but this Go package was generated for 1") {
		t.Errorf("header mismatch: %v", err)
	}
}

// A library of another ABI is an error from the first call that needs it, not a panic when the
// package loads (which has happened by now): fakeLibraryABI stands in for a library of ABI 2.
func TestWrongABIIsAnError(t *testing.T) {
	fakeLibraryABI.Store(HeaderABIVersion + 1)
	defer fakeLibraryABI.Store(0)
	want := "FAILED_PRECONDITION: NewContext: the loaded libcairn has ABI version 2 but this Go package needs 1"
	ctx, err := NewContext()
	if ctx != nil || err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, ErrFailedPrecondition) {
		t.Errorf("NewContext = %v, %v; want nil and %q...", ctx, err, want)
	}
	if _, err := OpenCheckpointReader("x"); err == nil || !strings.HasPrefix(err.Error(), "FAILED_PRECONDITION: OpenCheckpointReader: the loaded libcairn") {
		t.Errorf("OpenCheckpointReader: %v", err)
	}
	if _, err := NewVulkanContext(VulkanOptions{}); err == nil || !strings.HasPrefix(err.Error(), "FAILED_PRECONDITION: NewVulkanContext: the loaded") {
		t.Errorf("NewVulkanContext: %v", err)
	}
	if _, err := VulkanDeviceCount(); err == nil {
		t.Error("VulkanDeviceCount: no error")
	}
	if VulkanAvailable() {
		t.Error("VulkanAvailable with a wrong ABI")
	}
	fakeLibraryABI.Store(0)
	ctx, err = NewContext()
	if err != nil {
		t.Fatalf("NewContext with the right ABI: %v", err)
	}
	ctx.Close()
}

// Every attribute kind survives packing into C memory; the registry has no op with a STRING or
// FLOATS attribute yet, so this is where those paths are checked. (The buffer is leaked: the
// test file cannot call C.free.)
func TestPackAttrs(t *testing.T) {
	in := []Attr{
		IntAttr("i", -5),
		FloatAttr("f", 2.5),
		BoolAttr("b", true),
		IntsAttr("is", []int64{3, -1, 7}),
		StringAttr("s", "SAME"),
		DTypeAttr("d", BFloat16),
		FloatsAttr("fs", []float64{0.5, -0.25}),
		IntsAttr("empty", nil),
	}
	p := packAttrs(in)
	out := unsafe.Slice(p, len(in))
	str := func(c *_Ctype_char) string {
		return unsafe.String((*byte)(unsafe.Pointer(c)), strings.IndexByte(unsafe.String((*byte)(unsafe.Pointer(c)), 64), 0))
	}
	for k, a := range in {
		if str(out[k].name) != a.name || AttrKind(out[k].kind) != a.kind {
			t.Errorf("attr %d: name %q kind %v", k, str(out[k].name), out[k].kind)
		}
	}
	ints := unsafe.Slice((*int64)(unsafe.Pointer(out[3].ints)), out[3].n_ints)
	floats := unsafe.Slice((*float64)(unsafe.Pointer(out[6].floats)), out[6].n_floats)
	if out[0].i != -5 || out[1].f != 2.5 || out[2].i != 1 || !slices.Equal(ints, []int64{3, -1, 7}) ||
		str(out[4].s) != "SAME" || DType(out[5].dtype) != BFloat16 || !slices.Equal(floats, []float64{0.5, -0.25}) ||
		out[7].n_ints != 0 || out[7].ints != nil || out[0].s != nil {
		t.Errorf("packed values differ: %+v", out)
	}
}

// A log message that arrives after its context was closed finds the handle deleted; it is dropped
// instead of panicking in a C thread.
func TestLogAfterCloseIsDropped(t *testing.T) {
	h := cgo.NewHandle(LogFunc(func(LogLevel, string) { t.Error("called after delete") }))
	if logFuncOf(h) == nil {
		t.Fatal("live handle not found")
	}
	h.Delete()
	if logFuncOf(h) != nil {
		t.Error("deleted handle still resolves")
	}
}

// handleLive says whether h still resolves (Value panics on a deleted handle).
func handleLive(h cgo.Handle) (live bool) {
	defer func() { live = recover() == nil }()
	h.Value()
	return
}

// A Function's body handle lives until Close, when the runtime's release deletes it; a closed
// function refuses calls.
func TestFunctionReleasesItsBody(t *testing.T) {
	ctx, err := NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	body := func(*Context, []*Tensor) ([]*Tensor, error) { return nil, nil }
	f, err := NewFunction(ctx, "empty", body, WithNumOutputs(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Call(); err != nil {
		t.Fatal(err)
	}
	h := f.body
	if !handleLive(h) {
		t.Fatal("the body's handle was deleted while the function lives")
	}
	f.Close()
	if handleLive(h) {
		t.Error("Close left the body's handle alive")
	}
	f.Close() // twice: nothing
	if _, err := f.Call(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Call after Close: %v", err)
	}
	if n := f.NumTraces(); n != 0 {
		t.Errorf("NumTraces after Close: %d", n)
	}

}

// A failed body's status carries the Go error's message, and its code when it wraps a Cairn
// error, so callers of the raw layer see the real failure.
func TestHostStatusCarriesTheError(t *testing.T) {
	inner := newError(CodeOutOfRange, "index 7 of 3")
	err := takeStatus(hostStatus(fmt.Errorf("step: %w", inner)))
	var cerr *Error
	if !errors.As(err, &cerr) || cerr.Code != CodeOutOfRange || cerr.Message != "step: OUT_OF_RANGE: index 7 of 3" {
		t.Errorf("got %#v", err)
	}
	err = takeStatus(hostStatus(errors.New("disk on fire")))
	if !errors.As(err, &cerr) || cerr.Code != CodeUnknown || cerr.Message != "disk on fire" {
		t.Errorf("got %#v", err)
	}
}

// A chunk's finalizer frees the tensors still open and leaves the closed ones alone (freeing one
// twice would crash the test).
func TestTensorChunkFreesOpenSlotsOnly(t *testing.T) {
	ctx, err := NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	c := new(tensorChunk) // not in tensorChunks, so newTensor cannot give out its slots
	for i := 0; i < 10; i++ {
		x, err := NewTensor(ctx, []int64{1}, []float32{float32(i)})
		if err != nil {
			t.Fatal(err)
		}
		c.slots[i].ptr, x.ptr = x.ptr, nil // move the C tensor into c
		c.next++
	}
	for i := 0; i < 10; i += 2 {
		c.slots[i].Close()
	}
	c.free()
	for i := range c.slots {
		if c.slots[i].ptr != nil {
			t.Errorf("slot %d still holds a tensor after free", i)
		}
	}
}

// memoryInUse is the bytes held by tensors on ctx's default device.
func memoryInUse(t *testing.T, ctx *Context) uint64 {
	t.Helper()
	info, err := ctx.MemoryInfo(ctx.Device())
	if err != nil {
		t.Fatal(err)
	}
	return info.Current
}

// tinyTensors makes n tensors of 4 float32s (16 bytes, under tinyTensorBytes).
func tinyTensors(t *testing.T, ctx *Context, n int) []*Tensor {
	t.Helper()
	ts := make([]*Tensor, n)
	for i := range ts {
		var err error
		if ts[i], err = NewTensor(ctx, []int64{4}, []float32{1, 2, 3, 4}); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// onePAndNoGC runs the rest of the test on one P with the collector off and the chunks of
// tensorChunks set aside, so that every Close and op of the test uses one fresh chunk (a
// collection drops chunks from the pool; a full one leaves it), and gives it a Context.
func onePAndNoGC(t *testing.T) *Context {
	procs := runtime.GOMAXPROCS(1)
	gc := debug.SetGCPercent(-1)
	var aside []any
	for c := tensorChunks.Get(); c != nil; c = tensorChunks.Get() {
		aside = append(aside, c)
	}
	t.Cleanup(func() {
		for _, c := range aside {
			tensorChunks.Put(c)
		}
		debug.SetGCPercent(gc)
		runtime.GOMAXPROCS(procs)
	})
	ctx, err := NewContext()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

// Close of a tiny tensor leaves the free to the next cgo call that makes a tensor, or frees
// closedBatch of them at once; a big tensor is freed at once.
func TestCloseOfTinyTensorsFreesWithTheNextTensor(t *testing.T) {
	ctx := onePAndNoGC(t)
	x := tinyTensors(t, ctx, 1)[0]
	defer x.Close()
	base := memoryInUse(t, ctx)
	held := tinyTensors(t, ctx, closedBatch-1)
	size := (memoryInUse(t, ctx) - base) / uint64(len(held))
	for _, h := range held {
		h.Close()
	}
	if got, want := memoryInUse(t, ctx), base+uint64(len(held))*size; got != want {
		t.Errorf("after closing %d tiny tensors: %d bytes in use, want %d (their frees held back)", len(held), got, want)
	}
	y, err := RunOp1(ctx, "Neg", []*Tensor{x}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := memoryInUse(t, ctx), base+size; got != want {
		t.Errorf("after the next op: %d bytes in use, want %d (the held-back frees done)", got, want)
	}
	y.Close()
	for _, h := range tinyTensors(t, ctx, closedBatch) { // the first frees y
		h.Close() // the last frees all closedBatch
	}
	if got := memoryInUse(t, ctx); got != base {
		t.Errorf("after %d Closes: %d bytes in use, want %d", closedBatch, got, base)
	}
	big, err := NewTensor(ctx, []int64{tinyTensorBytes}, make([]float32, tinyTensorBytes))
	if err != nil {
		t.Fatal(err)
	}
	big.Close()
	if got := memoryInUse(t, ctx); got != base {
		t.Errorf("after closing a %d-byte tensor: %d bytes in use, want %d", 4*tinyTensorBytes, got, base)
	}
}

// A chunk's finalizer also frees what Close held back in it.
func TestTensorChunkFreesHeldBackCloses(t *testing.T) {
	ctx := onePAndNoGC(t)
	base := memoryInUse(t, ctx)
	c := new(tensorChunk) // not in tensorChunks
	for _, x := range tinyTensors(t, ctx, 3) {
		c.closed[c.nClosed], x.ptr = cHandle(unsafe.Pointer(x.ptr)), nil // as freeLater would
		c.nClosed++
	}
	if memoryInUse(t, ctx) == base {
		t.Fatal("three tensors hold no memory")
	}
	c.free()
	if got := memoryInUse(t, ctx); got != base {
		t.Errorf("after the chunk's finalizer: %d bytes in use, want %d", got, base)
	}
	if c.nClosed != 0 {
		t.Errorf("nClosed = %d after free", c.nClosed)
	}
}

// opNameCache keys on the address of a name's bytes and its length: a prefix of a cached name
// starts at the same address and must still find its own registry name.
func TestLookupOpNameByAddressAndLength(t *testing.T) {
	addN := strings.Clone("AddN")
	for _, c := range []struct{ op, want string }{
		{addN, "AddN"}, {addN, "AddN"}, {addN[:3], "Add"}, {addN[:3], "Add"}, {addN, "AddN"},
		{strings.Clone("Add"), "Add"}, {"Add", "Add"},
	} {
		name, ok := lookupOpName(c.op)
		if want := registeredOpNames()[c.want]; !ok || name != want {
			t.Errorf("lookupOpName(%q) = %v, %v; want %q", c.op, ok, name, c.want)
		}
	}
	if _, ok := lookupOpName(strings.Clone("NoSuchOp")); ok {
		t.Error("lookupOpName found NoSuchOp")
	}
}
