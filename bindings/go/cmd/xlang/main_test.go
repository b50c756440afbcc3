package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cairn.dev/cairn"
)

// xlangC is the C program of the cross-language test, built by
// `bazel build //tests/xlang:xlang_c` (bindings/test_go does).
var xlangC = filepath.Join("..", "..", "..", "..", "bazel-bin", "tests", "xlang", "xlang_c")

func runGo(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String() + stderr.String(), code
}

func TestSaveListingAndRestore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.ckpt")
	if out, code := runGo(t, "save", path); code != 0 || out != "" {
		t.Fatalf("save: exit %d: %s", code, out)
	}
	r, err := cairn.OpenCheckpointReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := []cairn.CheckpointEntry{
		{Key: "_CHECKPOINTABLE_OBJECT_GRAPH", DType: cairn.String, TypeName: "string", Shape: []int64{}},
		{Key: "layers/0/k/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Float64, TypeName: "float64", Shape: []int64{2}},
		{Key: "layers/1/flag/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Bool, TypeName: "bool", Shape: []int64{4}},
		{Key: "model/b/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Int64, TypeName: "int64", Shape: []int64{3}},
		{Key: "model/w/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Float32, TypeName: "float32", Shape: []int64{2, 3}},
		{Key: "save_counter/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Int64, TypeName: "int64", Shape: []int64{}},
		{Key: "table/half/.ATTRIBUTES/VARIABLE_VALUE", DType: cairn.Float16, TypeName: "float16", Shape: []int64{}},
	}
	if got := r.Entries(); !reflect.DeepEqual(got, want) {
		t.Errorf("listing:\n got  %v\n want %v", got, want)
	}
	if out, code := runGo(t, "restore", path); code != 0 || out != "xlang restore ok\n" {
		t.Errorf("restore: exit %d: %s", code, out)
	}
	if out, code := runGo(t, "restore", path+".missing"); code != 1 || !strings.Contains(out, "NOT_FOUND") {
		t.Errorf("restoring a missing file: exit %d: %s", code, out)
	}
	if _, code := runGo(t, "load", path); code != 2 {
		t.Errorf("a bad command: exit %d", code)
	}
}

// Against the C program: the same bytes, and each restores the other's file.
func TestAgainstC(t *testing.T) {
	if _, err := os.Stat(xlangC); err != nil {
		t.Skipf("no C program (bazel build //tests/xlang:xlang_c): %v", err)
	}
	dir := t.TempDir()
	goPath, cPath := filepath.Join(dir, "go.ckpt"), filepath.Join(dir, "c.ckpt")
	if out, code := runGo(t, "save", goPath); code != 0 {
		t.Fatalf("Go save: exit %d: %s", code, out)
	}
	if out, err := exec.Command(xlangC, "save", cPath).CombinedOutput(); err != nil {
		t.Fatalf("C save: %v: %s", err, out)
	}
	goBytes, _ := os.ReadFile(goPath)
	cBytes, _ := os.ReadFile(cPath)
	if !bytes.Equal(goBytes, cBytes) {
		t.Errorf("Go's checkpoint (%d bytes) differs from C's (%d bytes)", len(goBytes), len(cBytes))
	}
	if out, code := runGo(t, "restore", cPath); code != 0 || out != "xlang restore ok\n" {
		t.Errorf("Go restoring C's file: exit %d: %s", code, out)
	}
	if out, err := exec.Command(xlangC, "restore", goPath).CombinedOutput(); err != nil || string(out) != "xlang restore ok\n" {
		t.Errorf("C restoring Go's file: %v: %s", err, out)
	}
}
