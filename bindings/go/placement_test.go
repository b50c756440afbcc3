package cairn_test

// Device scopes (Context.WithDevice) and soft placement with its copy counter; the Vulkan case runs
// on lavapipe where a driver exists.

import (
	"errors"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func TestWithDeviceNestsAndCloses(t *testing.T) {
	ctx := newContext(t)
	if got := ctx.DeviceScope(); got != "" {
		t.Fatalf("DeviceScope outside WithDevice = %q", got)
	}
	err := ctx.WithDevice("cpu", func() error {
		if got := ctx.DeviceScope(); got != "cpu" {
			t.Errorf("DeviceScope = %q, want cpu", got)
		}
		return ctx.WithDevice("cpu:0", func() error {
			x, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
			if err != nil {
				return err
			}
			defer x.Close()
			if x.Device() != "cpu" {
				t.Errorf("tensor made in the scope is on %q", x.Device())
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("WithDevice: %v", err)
	}
	sentinel := errors.New("from fn")
	if err := ctx.WithDevice("cpu", func() error { return sentinel }); !errors.Is(err, sentinel) {
		t.Errorf("WithDevice returned %v, want fn's error", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic inside fn did not go on")
			}
		}()
		_ = ctx.WithDevice("cpu", func() error { panic("boom") })
	}()
	// Every scope was closed, the panicking one too.
	_ = ctx.WithDevice("cpu", func() error {
		_ = ctx.WithDevice("cpu", func() error { return nil })
		return nil
	})
	ran := false
	err = ctx.WithDevice("tpu:9", func() error { ran = true; return nil })
	if !errors.Is(err, cairn.ErrNotFound) || ran {
		t.Errorf("unknown device: err %v, fn ran %v", err, ran)
	}
}

func TestSoftPlacementCountsCopies(t *testing.T) {
	ctx := newContext(t)
	other := newContext(t) // another context's CPU is another device
	a, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := cairn.NewTensor(other, []int64{2}, []float32{10, 20})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if on, err := ctx.SoftPlacement(); err != nil || on {
		t.Fatalf("SoftPlacement() = %v, %v; want off", on, err)
	}
	if _, err := ops.Add(ctx, a, b); !errors.Is(err, cairn.ErrInvalidArgument) {
		t.Fatalf("Add across devices with soft placement off: %v", err)
	}
	if err := ctx.SetSoftPlacement(true); err != nil {
		t.Fatal(err)
	}
	sum, err := ops.Add(ctx, a, b)
	if err != nil {
		t.Fatalf("Add with soft placement: %v", err)
	}
	defer sum.Close()
	got, err := cairn.Read[float32](sum)
	if err != nil || got[0] != 11 || got[1] != 22 {
		t.Errorf("sum = %v, %v", got, err)
	}
	if n, err := ctx.AutoCopies(); err != nil || n != 1 {
		t.Errorf("AutoCopies() = %d, %v; want 1", n, err)
	}
}

func TestWithDeviceVulkan(t *testing.T) {
	if !cairn.VulkanAvailable() {
		t.Skip("no Vulkan driver")
	}
	ctx := newContext(t)
	if err := ctx.SetSoftPlacement(true); err != nil {
		t.Fatal(err)
	}
	host, err := cairn.NewTensor(ctx, []int64{2}, []float32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	err = ctx.WithDevice("vulkan:0", func() error {
		v, err := cairn.NewVariable(ctx, host)
		if err != nil {
			return err
		}
		defer v.Close()
		value, err := v.Read()
		if err != nil {
			return err
		}
		defer value.Close()
		if value.Device() != "vulkan:0" {
			t.Errorf("variable made in the scope is on %q", value.Device())
		}
		sum, err := ops.Add(ctx, host, host)
		if err != nil {
			return err
		}
		defer sum.Close()
		if sum.Device() != "vulkan:0" {
			t.Errorf("Add ran on %q, want the scope's vulkan:0", sum.Device())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("WithDevice(vulkan:0): %v", err)
	}
	if n, err := ctx.AutoCopies(); err != nil || n != 2 {
		t.Errorf("AutoCopies() = %d, %v; want 2", n, err)
	}
}
