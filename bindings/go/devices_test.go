package cairn_test

// Device configuration (tf.config) from Go: physical devices and heaps, a CPU split into two
// logical devices with a memory limit, memory counts and the limit refusing an allocation,
// configuration closed after the first tensor, and the errors of bad input.

import (
	"strings"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func TestPhysicalDevices(t *testing.T) {
	ctx := newContext(t)
	devices, err := ctx.PhysicalDevices()
	ok(t, err)
	if len(devices) < 1 {
		t.Fatal("PhysicalDevices is empty; the CPU is always listed")
	}
	for _, d := range devices {
		t.Logf("%s %s %q (%s): %d bytes, %d queue(s), heaps %+v", d.Name, d.Type, d.Description, d.DeviceType, d.Memory, d.Queues, d.Heaps)
	}
	cpu := devices[0]
	if cpu.Name != "cpu:0" || cpu.Type != "CPU" || cpu.DeviceType != "cpu" || cpu.Memory == 0 || cpu.Queues != 1 {
		t.Errorf("the CPU: %+v", cpu)
	}
	if len(cpu.Heaps) != 1 || cpu.Heaps[0].Size != cpu.Memory || cpu.Heaps[0].Budget != cpu.Memory || !cpu.Heaps[0].DeviceLocal {
		t.Errorf("the CPU's heaps: %+v (memory %d)", cpu.Heaps, cpu.Memory)
	}
	// A Vulkan device appears where a driver is installed (lavapipe on the test machines); none is required.
	for i, d := range devices[1:] {
		if d.Type != "VULKAN" || !strings.HasPrefix(d.Name, "vulkan:") || d.Queues < 1 || len(d.Heaps) < 1 {
			t.Errorf("device %d: %+v", i+1, d)
		}
		for h, heap := range d.Heaps {
			if heap.Size == 0 || heap.Budget > heap.Size || heap.Usage > heap.Budget {
				t.Errorf("%s heap %d: %+v", d.Name, h, heap)
			}
		}
	}
	visible, err := ctx.VisibleDevices()
	ok(t, err)
	if len(visible) != len(devices) || visible[0] != "cpu:0" {
		t.Errorf("VisibleDevices = %q, want every physical device %d", visible, len(devices))
	}
	grow, err := ctx.MemoryGrowth("cpu:0")
	ok(t, err)
	if !grow {
		t.Error("MemoryGrowth(cpu:0) = false, want true")
	}
	// Listing physical devices does not initialize the logical ones.
	if initialized, err := ctx.DevicesInitialized(); err != nil || initialized {
		t.Errorf("DevicesInitialized = %v, %v; want false", initialized, err)
	}
}

func TestSplitCPU(t *testing.T) {
	ctx := newContext(t)
	ok(t, ctx.SetLogicalDevices("cpu:0", cairn.LogicalDeviceConfig{}, cairn.LogicalDeviceConfig{MemoryLimit: 4096}))
	err := ctx.SetLogicalDevices("cpu:0", cairn.LogicalDeviceConfig{}, cairn.LogicalDeviceConfig{})
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "already configured as 2 logical device(s)")

	logical, err := ctx.LogicalDevices() // initializes
	ok(t, err)
	if len(logical) < 2 || logical[0].Name != "cpu:0" ||
		logical[1] != (cairn.LogicalDevice{Name: "cpu:1", Physical: "cpu:0", MemoryLimit: 4096}) {
		t.Fatalf("LogicalDevices = %+v", logical)
	}
	if initialized, err := ctx.DevicesInitialized(); err != nil || !initialized {
		t.Errorf("DevicesInitialized after LogicalDevices = %v, %v; want true", initialized, err)
	}

	a := tensor(t, ctx, []int64{256}, make([]float32, 256)) // 1 KiB
	if a.Device() != "cpu:0" {
		t.Errorf("a new tensor is on %q, want cpu:0", a.Device())
	}
	b := must(a.CopyToDevice(ctx, "cpu:1"))
	t.Cleanup(b.Close)
	if b.Device() != "cpu:1" {
		t.Fatalf("copied to %q, want cpu:1", b.Device())
	}
	info, err := ctx.MemoryInfo("cpu:1")
	ok(t, err)
	if info.Current != 1024 || info.Peak != 1024 || info.Limit != 4096 || info.Budget == 0 {
		t.Errorf("MemoryInfo(cpu:1) after 1 KiB = %+v", info)
	}
	// Three more KiB fit under the 4 KiB limit; a fifth is refused.
	var sums []*cairn.Tensor
	for range 3 {
		s := must(ops.Add(ctx, b, b))
		if s.Device() != "cpu:1" {
			t.Errorf("Add of cpu:1 tensors ran on %q", s.Device())
		}
		sums = append(sums, s)
	}
	_, err = ops.Add(ctx, b, b)
	wantCode(t, err, cairn.CodeResourceExhausted, cairn.ErrResourceExhausted,
		"cpu:1: allocating 1024 bytes would pass the device's memory limit of 4096")
	for _, s := range sums {
		s.Close()
	}
	info, err = ctx.MemoryInfo("cpu:1")
	ok(t, err)
	if info.Current != 1024 || info.Peak != 4096 {
		t.Errorf("MemoryInfo(cpu:1) after freeing = %+v, want current 1024, peak 4096", info)
	}
	ok(t, ctx.ResetMemoryStats("cpu:1"))
	info, err = ctx.MemoryInfo("cpu:1")
	ok(t, err)
	if info.Peak != 1024 {
		t.Errorf("peak after ResetMemoryStats = %d, want 1024", info.Peak)
	}
	_, err = ctx.MemoryInfo("cpu:2")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "cpu:0, cpu:1")
	wantCode(t, ctx.ResetMemoryStats("tpu"), cairn.CodeNotFound, cairn.ErrNotFound, "tpu")
}

func TestDeviceConfigClosedAfterFirstTensor(t *testing.T) {
	ctx := newContext(t)
	ok(t, ctx.SetThreads(1, 3))
	intra, inter, err := ctx.Threads()
	if err != nil || intra != 1 || inter != 3 {
		t.Errorf("Threads = %d, %d, %v; want 1, 3", intra, inter, err)
	}
	ok(t, ctx.SetVisibleDevices()) // the CPU only
	visible, err := ctx.VisibleDevices()
	ok(t, err)
	if strings.Join(visible, ",") != "cpu:0" {
		t.Errorf("VisibleDevices after hiding Vulkan = %q", visible)
	}
	tensor(t, ctx, []int64{1}, []float32{1})
	if initialized, err := ctx.DevicesInitialized(); err != nil || !initialized {
		t.Errorf("DevicesInitialized after the first tensor = %v, %v; want true", initialized, err)
	}
	wantCode(t, ctx.SetLogicalDevices("cpu:0", cairn.LogicalDeviceConfig{}), cairn.CodeFailedPrecondition,
		cairn.ErrFailedPrecondition, "cannot be modified after")
	wantCode(t, ctx.SetVisibleDevices(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "already initialized")
	wantCode(t, ctx.SetThreads(2, 2), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "cairn_context_set_threads")
	logical, err := ctx.LogicalDevices()
	ok(t, err)
	if len(logical) != 1 || logical[0].Name != "cpu" {
		t.Errorf("LogicalDevices with Vulkan hidden = %+v, want the CPU alone", logical)
	}
}

func TestDeviceConfigErrors(t *testing.T) {
	ctx := newContext(t)
	wantCode(t, ctx.SetLogicalDevices("cpu:0", cairn.LogicalDeviceConfig{MemoryLimit: 1 << 62}),
		cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "is more than")
	wantCode(t, ctx.SetLogicalDevices("cpu:0"), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "give 1 to 64")
	wantCode(t, ctx.SetLogicalDevices("gpu:0", cairn.LogicalDeviceConfig{}), cairn.CodeNotFound, cairn.ErrNotFound, "gpu:0")
	wantCode(t, ctx.SetVisibleDevices("cpu:0", "npu:0"), cairn.CodeNotFound, cairn.ErrNotFound, "npu:0")
	wantCode(t, ctx.SetMemoryGrowth("cpu:0", false), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument,
		"applies to Vulkan devices")
	wantCode(t, ctx.SetThreads(-2, 0), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "thread counts")
	wantCode(t, ctx.SetThreads(1<<40, 0), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "does not fit in an int32")
	// None of these initialized the devices; a closed context is the binding's own error.
	if initialized, err := ctx.DevicesInitialized(); err != nil || initialized {
		t.Errorf("DevicesInitialized after refused settings = %v, %v; want false", initialized, err)
	}
	closed := newContext(t)
	closed.Close()
	_, err := closed.PhysicalDevices()
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "Context.PhysicalDevices: context is closed")
}

// Splitting a Vulkan device where one is installed (lavapipe on the test machines; skipped
// without one): two logical devices with their own limits, a tensor copied between them and
// counted on the one holding it, and memory growth read back.
func TestSplitVulkan(t *testing.T) {
	ctx := newContext(t)
	physical, err := ctx.PhysicalDevices()
	ok(t, err)
	if len(physical) < 2 {
		t.Skip("no Vulkan device")
	}
	ok(t, ctx.SetVisibleDevices("vulkan:0"))
	ok(t, ctx.SetMemoryGrowth("vulkan:0", true))
	ok(t, ctx.SetLogicalDevices("vulkan:0", cairn.LogicalDeviceConfig{MemoryLimit: 1 << 20}, cairn.LogicalDeviceConfig{MemoryLimit: 2 << 20}))
	if grow, err := ctx.MemoryGrowth("vulkan:0"); err != nil || !grow {
		t.Errorf("MemoryGrowth(vulkan:0) = %v, %v; want true", grow, err)
	}
	logical, err := ctx.LogicalDevices()
	ok(t, err)
	want := []cairn.LogicalDevice{
		{Name: "cpu", Physical: "cpu:0"},
		{Name: "vulkan:0", Physical: "vulkan:0", MemoryLimit: 1 << 20},
		{Name: "vulkan:1", Physical: "vulkan:0", MemoryLimit: 2 << 20},
	}
	if len(logical) != len(want) || logical[0] != want[0] || logical[1] != want[1] || logical[2] != want[2] {
		t.Fatalf("LogicalDevices = %+v, want %+v", logical, want)
	}
	x := tensor(t, ctx, []int64{256}, make([]float32, 256))
	on0 := must(x.CopyToDevice(ctx, "vulkan:0"))
	t.Cleanup(on0.Close)
	on1 := must(on0.CopyToDevice(ctx, "vulkan:1"))
	t.Cleanup(on1.Close)
	if on1.Device() != "vulkan:1" {
		t.Errorf("copied to %q, want vulkan:1", on1.Device())
	}
	for i, name := range []string{"vulkan:0", "vulkan:1"} {
		info, err := ctx.MemoryInfo(name)
		ok(t, err)
		if info.Current != 1024 || info.Limit != want[i+1].MemoryLimit {
			t.Errorf("MemoryInfo(%s) = %+v", name, info)
		}
	}
}
