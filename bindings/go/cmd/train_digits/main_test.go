package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"cairn.dev/cairn"
)

var (
	repoRoot = filepath.Join("..", "..", "..", "..")
	digits   = filepath.Join(repoRoot, "examples", "data", "digits.csv")
	// The C demo, built by `bazel build //examples/c:train_digits`.
	trainDigitsC = filepath.Join(repoRoot, "bazel-bin", "examples", "c", "train_digits")
)

func runGo(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return stdout.String() + stderr.String(), code
}

// normalize drops what may differ between runs and languages: the speed and the directory.
var (
	speed   = regexp.MustCompile(`  \d+ examples/s\n`)
	resumed = regexp.MustCompile(`resumed from .*/(ckpt-\d+) after`)
)

func normalize(out string) string {
	out = speed.ReplaceAllString(out, "  N examples/s\n")
	return resumed.ReplaceAllString(out, "resumed from DIR/$1 after")
}

func TestTrainsAndResumes(t *testing.T) {
	dir := t.TempDir()
	out, code := runGo(t, "--data", digits, "--dir", dir, "--epochs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "digits: 1438 training and 359 test samples of 8x8 pixels" || lines[1] != `Model: "mlp"` {
		t.Errorf("unexpected start:\n%s", out)
	}
	epochLine := regexp.MustCompile(`^epoch  2/2  loss (\d\.\d{4})  accuracy (0\.\d{4})  \d+ examples/s$`)
	n := len(lines)
	if !epochLine.MatchString(lines[n-3]) || !strings.HasPrefix(lines[n-2], "test accuracy: 0.") ||
		!regexp.MustCompile(`^weights: [0-9a-f]{16}$`).MatchString(lines[n-1]) {
		t.Errorf("unexpected end:\n%s", out)
	}
	// 1438 samples in batches of 32: 45 steps per epoch, saved every 20 steps and at each epoch's end.
	for _, name := range []string{"ckpt-80", "ckpt-90"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("no checkpoint %s: %v", name, err)
		}
	}

	out, code = runGo(t, "--data", digits, "--dir", dir, "--epochs", "3")
	if code != 0 || !strings.Contains(out, "resumed from "+filepath.Join(dir, "ckpt-90")+" after step 90\n") ||
		!strings.Contains(out, "epoch  3/3") || strings.Contains(out, "epoch  2/3") {
		t.Errorf("resume: exit %d:\n%s", code, out)
	}
}

// Killed mid-epoch (after step 50; the last save was at step 45, the end of epoch 1; 40 before it)
// and run again, the demo resumes from step 45, pipeline position included, and ends with the
// uninterrupted run's weights. With --save-every 15 the last save before the crash is mid-epoch:
// step 30 after a kill at step 40.
func TestKilledRunResumesExactly(t *testing.T) {
	crash = func() { panic(killed{}) }
	defer func() { crash = func() { os.Exit(3) } }()
	whole, code := runGo(t, "--data", digits, "--dir", t.TempDir(), "--epochs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, whole)
	}
	tail := func(out string) string {
		lines := strings.Split(strings.TrimSpace(normalize(out)), "\n")
		return strings.Join(lines[len(lines)-3:], "\n") // epoch 2, test accuracy, weights
	}
	for _, c := range []struct{ saveEvery, killAfter, resumeAt string }{{"20", "50", "45"}, {"15", "40", "30"}} {
		dir := t.TempDir()
		if out, code := runGo(t, "--data", digits, "--dir", dir, "--epochs", "2", "--save-every", c.saveEvery,
			"--kill-after", c.killAfter); code != 3 {
			t.Fatalf("--kill-after %s: exit %d, want 3: %s", c.killAfter, code, out)
		}
		resumed, code := runGo(t, "--data", digits, "--dir", dir, "--epochs", "2", "--save-every", c.saveEvery)
		want := "resumed from " + filepath.Join(dir, "ckpt-"+c.resumeAt) + " after step " + c.resumeAt + "\n"
		if code != 0 || !strings.Contains(resumed, want) {
			t.Fatalf("exit %d, want %q: %s", code, want, resumed)
		}
		if tail(resumed) != tail(whole) {
			t.Errorf("killed after %s and resumed:\n%s\nuninterrupted:\n%s", c.killAfter, tail(resumed), tail(whole))
		}
	}
}

// --logdir writes one event file per run: file_version, epoch_loss and epoch_accuracy per epoch,
// and the graph of train_step after the run's first epoch. It prints nothing more.
func TestLogdir(t *testing.T) {
	dir, logdir := t.TempDir(), t.TempDir()
	plain, code := runGo(t, "--data", digits, "--dir", t.TempDir(), "--epochs", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, plain)
	}
	withLogs, code := runGo(t, "--data", digits, "--dir", dir, "--epochs", "2", "--logdir", logdir)
	if code != 0 || normalize(withLogs) != normalize(plain) {
		t.Fatalf("exit %d; with --logdir the output differs:\n%s---\n%s", code, withLogs, plain)
	}
	if out, code := runGo(t, "--data", digits, "--dir", dir, "--epochs", "3", "--logdir", logdir); code != 0 {
		t.Fatalf("resumed: exit %d: %s", code, out)
	}
	files, err := filepath.Glob(filepath.Join(logdir, "events.out.tfevents.*"))
	if err != nil || len(files) != 2 {
		t.Fatalf("event files %v (%v), want one per run", files, err)
	}
	var counts []int
	for _, f := range files {
		n, err := cairn.CountRecords(f)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, int(n))
	}
	// 1 + 2 epochs x 2 scalars + graph; 1 + 1 epoch x 2 scalars + graph (file names sort by time).
	if !(counts[0] == 6 && counts[1] == 4) && !(counts[0] == 4 && counts[1] == 6) {
		t.Errorf("records per event file %v, want 6 and 4", counts)
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"--epochs", "0"}, {"--data"}, {"--what", "x"}, {"--epochs", "x"}, {"--save-every", "0"},
		{"--kill-after", "-1"}} {
		if out, code := runGo(t, args...); code != 2 || !strings.Contains(out, "usage") {
			t.Errorf("%v: exit %d: %s", args, code, out)
		}
	}
	out, code := runGo(t, "--data", filepath.Join(t.TempDir(), "missing.csv"), "--dir", t.TempDir())
	if code != 1 || !strings.Contains(out, "cannot read") || !strings.Contains(out, "NOT_FOUND") {
		t.Errorf("a missing data file: exit %d: %s", code, out)
	}
}

// The Go demo prints what the C demo prints, fresh and resumed (examples/TRAINING_DEMO.md).
func TestSameLinesAsC(t *testing.T) {
	if _, err := os.Stat(trainDigitsC); err != nil {
		t.Skipf("the C demo is not built (bazel build //examples/c:train_digits): %v", err)
	}
	goDir, cDir := t.TempDir(), t.TempDir()
	for _, epochs := range []string{"2", "3"} {
		goOut, code := runGo(t, "--data", digits, "--dir", goDir, "--epochs", epochs)
		if code != 0 {
			t.Fatalf("Go demo: exit %d: %s", code, goOut)
		}
		cOut, err := exec.Command(trainDigitsC, "--data", digits, "--dir", cDir, "--epochs", epochs).CombinedOutput()
		if err != nil {
			t.Fatalf("C demo: %v: %s", err, cOut)
		}
		if g, c := normalize(goOut), normalize(string(cOut)); g != c {
			t.Errorf("--epochs %s: Go and C differ:\n--- Go\n%s--- C\n%s", epochs, g, c)
		}
	}
}
