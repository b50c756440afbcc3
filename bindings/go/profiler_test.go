package cairn_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

func TestProfilerRecordsOpsAndExports(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{3}, []float32{1, 2, 3})
	ok(t, cairn.StartProfiler())
	if !cairn.ProfilerActive() {
		t.Error("ProfilerActive() is false after StartProfiler")
	}
	wantCode(t, cairn.StartProfiler(), cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "")
	for i := 0; i < 3; i++ {
		y := must(ops.Add(ctx, x, x))
		y.Close()
	}
	p := must(cairn.StopProfiler())
	defer p.Close()
	if cairn.ProfilerActive() {
		t.Error("ProfilerActive() after StopProfiler")
	}
	_, err := cairn.StopProfiler()
	wantCode(t, err, cairn.CodeFailedPrecondition, cairn.ErrFailedPrecondition, "")

	events := must(p.Events())
	if len(events) != p.EventCount() || p.Dropped() != 0 {
		t.Errorf("%d events, EventCount %d, Dropped %d", len(events), p.EventCount(), p.Dropped())
	}
	adds := slices.DeleteFunc(slices.Clone(events), func(e cairn.ProfileEvent) bool { return e.Name != "Add" })
	if len(adds) != 3 || adds[0].Category != "eager" || adds[0].Device != "cpu" || adds[0].Duration < 0 ||
		adds[1].Start < adds[0].Start {
		t.Errorf("Add events: %+v", adds)
	}
	_, err = p.Event(len(events))
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "")

	var trace struct {
		TraceEvents []struct {
			Name string `json:"name"`
		} `json:"traceEvents"`
	}
	ok(t, json.Unmarshal([]byte(must(p.ChromeTrace())), &trace))
	if !slices.ContainsFunc(trace.TraceEvents, func(e struct {
		Name string `json:"name"`
	}) bool {
		return e.Name == "Add"
	}) {
		t.Errorf("no Add in the Chrome trace")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "trace.json")
	ok(t, p.ExportChromeTrace(file))
	if data := must(os.ReadFile(file)); !json.Valid(data) {
		t.Error("the exported trace is not JSON")
	}
	path := must(p.ExportToLogdir(dir, "run1"))
	if !strings.HasPrefix(path, filepath.Join(dir, "plugins", "profile", "run1")+"/") || !strings.HasSuffix(path, ".trace.json.gz") {
		t.Errorf("ExportToLogdir path %s", path)
	}
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
	_, err = p.ExportToLogdir(dir, "a/b")
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")

	p.Close()
	_, err = p.ChromeTrace()
	wantError(t, err, "FAILED_PRECONDITION: Profile.ChromeTrace: profile is closed")
	if p.EventCount() != 0 {
		t.Error("EventCount() after Close")
	}
}

func TestProfilerOptions(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, []int64{1}, []float32{1})
	wantCode(t, cairn.StartProfiler(cairn.WithMaxEvents(0)), cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "")
	ok(t, cairn.StartProfiler(cairn.WithMaxEvents(2), cairn.WithVulkanTimestamps(false)))
	for i := 0; i < 5; i++ {
		y := must(ops.Neg(ctx, x))
		y.Close()
	}
	p := must(cairn.StopProfiler())
	defer p.Close()
	if p.EventCount() != 2 || p.Dropped() != 3 {
		t.Errorf("EventCount %d, Dropped %d; want 2 and 3", p.EventCount(), p.Dropped())
	}
}
