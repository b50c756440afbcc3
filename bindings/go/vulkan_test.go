package cairn_test

// The Vulkan section on lavapipe (Mesa's CPU Vulkan driver, installed on the test machines): the
// device list, contexts with Vulkan settings, the memory limit, the CPU fallback and its counter,
// and one small network giving the same numbers on "cpu" and "vulkan".

import (
	"math"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func newVulkanContext(t *testing.T, vk cairn.VulkanOptions, options ...cairn.ContextOption) *cairn.Context {
	t.Helper()
	ctx, err := cairn.NewVulkanContext(vk, options...)
	if err != nil {
		t.Fatalf("NewVulkanContext: %v", err)
	}
	t.Cleanup(ctx.Close)
	return ctx
}

func TestVulkanDevices(t *testing.T) {
	if !cairn.VulkanAvailable() {
		t.Fatal("VulkanAvailable() = false; lavapipe should be installed")
	}
	devices, err := cairn.VulkanDevices()
	if err != nil {
		t.Fatalf("VulkanDevices: %v", err)
	}
	if len(devices) == 0 {
		t.Fatal("VulkanDevices() is empty")
	}
	for i, d := range devices {
		if d.Index != i || d.DeviceName() != "vulkan:"+string(rune('0'+i)) {
			t.Errorf("device %d: Index %d, DeviceName %q", i, d.Index, d.DeviceName())
		}
		if d.Name == "" {
			t.Errorf("device %d has an empty name", i)
		}
		if d.TotalMemory == 0 || d.DeviceLocalMemory > d.TotalMemory {
			t.Errorf("device %d: local memory %d, total %d", i, d.DeviceLocalMemory, d.TotalMemory)
		}
		if d.SubgroupSize < 1 || d.MaxStorageBufferRange < 1<<20 || d.MaxSharedMemory < 16384 {
			t.Errorf("device %d: implausible limits %+v", i, d)
		}
		if major, minor := d.APIVersion>>22&0x7f, d.APIVersion>>12&0x3ff; major != 1 || minor < 1 {
			t.Errorf("device %d: API version %s, want >= 1.1", i, d.APIVersionString())
		}
	}
	lavapipe := devices[0]
	if lavapipe.Type != cairn.VulkanDeviceTypeCpu || lavapipe.Type.String() != "CPU" {
		t.Errorf("device 0 type %v, want CPU (lavapipe)", lavapipe.Type)
	}
}

func TestVulkanBadDeviceIndex(t *testing.T) {
	n := must(cairn.VulkanDeviceCount())
	_, err := cairn.DescribeVulkanDevice(n)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "Vulkan device(s)")
	_, err = cairn.DescribeVulkanDevice(-1)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "index must be >= 0, got -1")
	_, err = cairn.NewVulkanContext(cairn.VulkanOptions{}, cairn.WithDevice("vulkan:"+string(rune('0'+n))))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "vulkan:")
	_, err = cairn.NewContext(cairn.WithDevice("vulkan:9"))
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "vulkan:9")
}

func TestVulkanContextDefaults(t *testing.T) {
	ctx := newVulkanContext(t, cairn.VulkanOptions{})
	if got := ctx.Device(); got != "vulkan:0" {
		t.Errorf("Device() = %q, want vulkan:0", got)
	}
	if n, err := ctx.VulkanFallbackCount(""); err != nil || n != 0 {
		t.Errorf("VulkanFallbackCount(\"\") = %d, %v; want 0", n, err)
	}
	_, err := ctx.VulkanFallbackCount("cpu")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "not a Vulkan device")
	_, err = ctx.VulkanFallbackCount("vulkan:9")
	wantCode(t, err, cairn.CodeNotFound, cairn.ErrNotFound, "vulkan:9")
	if err := ctx.Synchronize(); err != nil {
		t.Errorf("Synchronize: %v", err)
	}

	// The CPU may stay the default device of a context with Vulkan settings.
	onCPU := newVulkanContext(t, cairn.VulkanOptions{MemoryLimit: 1 << 30}, cairn.WithDevice("cpu"), cairn.WithSeed(3))
	if got := onCPU.Device(); got != "cpu" {
		t.Errorf("Device() = %q, want cpu", got)
	}
}

// The log callback goes through the shared createContext to the Vulkan constructor too.
func TestVulkanContextLogs(t *testing.T) {
	var mu sync.Mutex
	var logged []string
	ctx := newVulkanContext(t, cairn.VulkanOptions{}, cairn.WithDevice("cpu"), cairn.WithLogLevel(cairn.LogInfo),
		cairn.WithLogFunc(func(_ cairn.LogLevel, message string) {
			mu.Lock()
			defer mu.Unlock()
			logged = append(logged, message)
		}))
	ctx.Close()
	mu.Lock()
	defer mu.Unlock()
	for _, m := range logged {
		if strings.Contains(m, "context created: default device cpu") {
			return
		}
	}
	t.Errorf("no \"context created\" message among %q", logged)
}

func TestVulkanOptionErrors(t *testing.T) {
	_, err := cairn.NewVulkanContext(cairn.VulkanOptions{Device: 1})
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "1 of 4 set")
	_, err = cairn.NewVulkanContext(cairn.VulkanOptions{}, cairn.WithNumThreads(-1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "num_threads")
	_, err = cairn.NewVulkanContext(cairn.VulkanOptions{}, cairn.WithNumThreads(math.MaxInt32+1))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "NewVulkanContext: num_threads")
}

func TestVulkanMemoryLimit(t *testing.T) {
	ctx := newVulkanContext(t, cairn.VulkanOptions{MemoryLimit: 2 << 20}) // 2 MiB; each tensor is 1.2 MB
	big := make([]float32, 300000)
	a := must(cairn.NewTensor(ctx, []int64{300000}, big))
	_, err := cairn.NewTensor(ctx, []int64{300000}, big)
	wantCode(t, err, cairn.CodeResourceExhausted, cairn.ErrResourceExhausted, "memory limit")
	a.Close() // frees its device memory, so the next one fits
	b, err := cairn.NewTensor(ctx, []int64{300000}, big)
	if err != nil {
		t.Fatalf("NewTensor after freeing the first: %v", err)
	}
	b.Close()
}

func TestVulkanCPUFallback(t *testing.T) {
	strict := newVulkanContext(t, cairn.VulkanOptions{})
	x := tensor(t, strict, []int64{2}, []float64{1.5, -2.5})
	_, err := ops.Neg(strict, x)
	wantCode(t, err, cairn.CodeUnimplemented, cairn.ErrUnimplemented, "Neg: no Vulkan kernel for dtype float64")

	lenient := newVulkanContext(t, cairn.VulkanOptions{CPUFallback: true})
	x = tensor(t, lenient, []int64{2}, []float64{1.5, -2.5})
	before := must(lenient.VulkanFallbackCount("vulkan"))
	y := must(ops.Neg(lenient, x))
	defer y.Close()
	if y.Device() != "vulkan:0" {
		t.Errorf("fallback result on %q, want vulkan:0", y.Device())
	}
	if got := must(cairn.Read[float64](y)); got[0] != -1.5 || got[1] != 2.5 {
		t.Errorf("Neg = %v, want [-1.5 2.5]", got)
	}
	if after := must(lenient.VulkanFallbackCount("vulkan")); after != before+1 {
		t.Errorf("fallback count %d -> %d, want one more", before, after)
	}
	if n := must(strict.VulkanFallbackCount("")); n != 0 {
		t.Errorf("strict context fallback count %d, want 0", n)
	}
}

// smallNetwork runs a two-layer network with a softmax head and a mean-squared loss on `ctx`'s
// default device, returning the probabilities (4x3) and the loss.
func smallNetwork(t *testing.T, ctx *cairn.Context) ([]float32, float32) {
	t.Helper()
	x := tensor(t, ctx, []int64{4, 5}, []float32{0.1, -0.2, 0.3, 0.5, -1.0, 1.2, 0.7, -0.3, 0.2, 0.0,
		-0.4, 0.9, 0.8, -0.6, 0.25, 0.05, 0.3, -0.9, 1.1, -0.2})
	w1 := tensor(t, ctx, []int64{5, 6}, []float32{0.2, -0.1, 0.4, 0.3, -0.5, 0.1, 0.7, 0.2, -0.3, 0.05,
		0.6, -0.4, -0.2, 0.3, 0.1, 0.8, -0.6, 0.25, 0.15, -0.7, 0.45, -0.1, 0.3, 0.2, 0.5, 0.35, -0.25, 0.1, 0.9, -0.3})
	b1 := tensor(t, ctx, []int64{6}, []float32{0.01, -0.02, 0.03, 0.0, 0.05, -0.01})
	w2 := tensor(t, ctx, []int64{6, 3}, []float32{0.3, -0.2, 0.1, 0.5, 0.4, -0.6, -0.1, 0.2, 0.7,
		0.25, -0.35, 0.15, 0.6, 0.1, -0.2, -0.4, 0.3, 0.05})
	target := tensor(t, ctx, []int64{4, 3}, []float32{1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0})
	keep := func(y *cairn.Tensor, err error) *cairn.Tensor {
		t.Helper()
		if err != nil {
			t.Fatalf("on %s: %v", ctx.Device(), err)
		}
		t.Cleanup(y.Close)
		return y
	}
	h := keep(ops.Relu(ctx, keep(ops.Add(ctx, keep(ops.MatMul(ctx, x, w1)), b1))))
	p := keep(ops.Softmax(ctx, keep(ops.MatMul(ctx, h, w2))))
	loss := keep(ops.Mean(ctx, keep(ops.Square(ctx, keep(ops.Sub(ctx, p, target))))))
	if p.Device() != ctx.Device() || loss.Device() != ctx.Device() {
		t.Errorf("results on %s/%s, context on %s", p.Device(), loss.Device(), ctx.Device())
	}
	if err := ctx.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	return must(cairn.Read[float32](p)), must(cairn.Read[float32](loss))[0]
}

func TestVulkanSameNumbersAsCPU(t *testing.T) {
	pCPU, lossCPU := smallNetwork(t, newContext(t, cairn.WithDevice("cpu")))
	vk := newVulkanContext(t, cairn.VulkanOptions{})
	if !strings.HasPrefix(vk.Device(), "vulkan") {
		t.Fatalf("Vulkan context on %q", vk.Device())
	}
	pVK, lossVK := smallNetwork(t, vk)
	for i := range pCPU {
		if d := math.Abs(float64(pCPU[i] - pVK[i])); d > 1e-5*(1+math.Abs(float64(pCPU[i]))) {
			t.Errorf("probability %d: cpu %v, vulkan %v", i, pCPU[i], pVK[i])
		}
	}
	for row := 0; row < 4; row++ {
		if sum := pVK[3*row] + pVK[3*row+1] + pVK[3*row+2]; math.Abs(float64(sum)-1) > 1e-5 {
			t.Errorf("row %d of the Vulkan softmax sums to %v", row, sum)
		}
	}
	if lossCPU <= 0 || math.Abs(float64(lossCPU-lossVK)) > 1e-6 {
		t.Errorf("loss: cpu %v, vulkan %v", lossCPU, lossVK)
	}
	if n := must(vk.VulkanFallbackCount("")); n != 0 {
		t.Errorf("the float32 network fell back to the CPU %d times", n)
	}
}
