package cairn_test

import (
	"errors"
	"fmt"
	"log"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// The CPU split into two logical devices before the first tensor (tf.config's
// set_logical_device_configuration), the second one capped at 4 KiB: a tensor copied there is
// counted in its memory, and an allocation past the cap is refused.
func ExampleContext_SetLogicalDevices() {
	ctx, err := cairn.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	err = ctx.SetLogicalDevices("cpu:0", cairn.LogicalDeviceConfig{}, cairn.LogicalDeviceConfig{MemoryLimit: 4096})
	if err != nil {
		log.Fatal(err)
	}
	if err := ctx.SetVisibleDevices(); err != nil { // the CPU only, whatever Vulkan drivers are installed
		log.Fatal(err)
	}
	devices, err := ctx.LogicalDevices()
	if err != nil {
		log.Fatal(err)
	}
	for _, d := range devices {
		fmt.Printf("%s (of %s), limit %d\n", d.Name, d.Physical, d.MemoryLimit)
	}

	x, err := cairn.NewTensor(ctx, []int64{512}, make([]float32, 512)) // 2 KiB on cpu:0
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	y, err := x.CopyToDevice(ctx, "cpu:1")
	if err != nil {
		log.Fatal(err)
	}
	defer y.Close()
	info, err := ctx.MemoryInfo("cpu:1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("cpu:1 holds %d of %d bytes\n", info.Current, info.Limit)
	z, err := ops.Add(ctx, y, y) // 2 KiB more: fits
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	_, err = ops.Add(ctx, y, y) // and another 2 KiB does not
	fmt.Println(err)

	// The devices are initialized now: configuration is closed.
	err = ctx.SetThreads(1, 1)
	fmt.Println(errors.Is(err, cairn.ErrFailedPrecondition))
	// Output:
	// cpu:0 (of cpu:0), limit 0
	// cpu:1 (of cpu:0), limit 4096
	// cpu:1 holds 2048 of 4096 bytes
	// RESOURCE_EXHAUSTED: Add: cpu:1: allocating 2048 bytes would pass the device's memory limit of 4096 bytes (4096 in use); raise the logical device's memory_limit or free tensors
	// true
}
