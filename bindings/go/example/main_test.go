package main

import (
	"io"
	"os"
	"testing"
)

// TestExampleOutput runs the example program and checks what it prints, so the README's example cannot rot.
func TestExampleOutput(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[2 2] [11 22 13 24]\n"; string(out) != want {
		t.Errorf("example printed %q, want %q", out, want)
	}
}
