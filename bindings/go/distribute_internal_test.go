package cairn

// SplitCPUForTest splits ctx's CPU ("cpu:0") into n logical devices, for the distribution tests
// of package cairn_test.
func SplitCPUForTest(ctx *Context, n int) error { return splitDevice(ctx, "cpu:0", n) }
