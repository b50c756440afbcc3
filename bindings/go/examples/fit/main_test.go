package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestMain runs the example's main instead of the tests in the child process TestFitExample
// starts, so the runtime's own output (the epoch lines) is captured too.
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_FIT_EXAMPLE_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFitExample runs the README's example and checks what it prints: the test accuracy above
// 0.9, a restored model that evaluates the same, predictions of every test sample, the checkpoint
// files and the TensorBoard run.
func TestFitExample(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], filepath.Join("..", "..", "..", "..", "examples", "data", "digits.csv"), dir)
	cmd.Env = append(os.Environ(), "CAIRN_FIT_EXAMPLE_MAIN=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	test := regexp.MustCompile(`(?m)^test: (loss: \S+ - accuracy: (\S+))$`).FindSubmatch(out)
	restored := regexp.MustCompile(`(?m)^predictions: \[357 10\] restored: (.*)$`).FindSubmatch(out)
	if test == nil || restored == nil {
		t.Fatalf("unexpected output:\n%s", out)
	}
	if acc, _ := strconv.ParseFloat(string(test[2]), 64); acc < 0.9 {
		t.Errorf("test accuracy %v, want at least 0.9", acc)
	}
	if string(restored[1]) != string(test[1]) {
		t.Errorf("the restored model evaluates to %q, the trained one to %q", restored[1], test[1])
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoints", "ckpt-20")); err != nil {
		t.Errorf("the last checkpoint: %v", err)
	}
	if events, _ := filepath.Glob(filepath.Join(dir, "logs", "train", "events.out.tfevents.*")); len(events) == 0 {
		t.Errorf("no TensorBoard events in %s", filepath.Join(dir, "logs", "train"))
	}
}
