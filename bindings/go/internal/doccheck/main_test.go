package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	src := `package p

// Good does things.
func Good() {}

func Bare() {}

// does things, but the comment does not name it.
func Wrong() {}

// A Thing is a thing.
type Thing struct{}

func (Thing) Method() {}

// String returns the name.
func (Thing) String() string { return "" }

func (hidden) Exported() {}

type hidden struct{}

// Values of Thing.
const (
	One = 1
	Two = 2
)

var Loose = 3

// Limit is the limit.
const Limit = 4

func unexported() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(checkFile(fset, f), "\n")
	want := strings.Join([]string{
		"p.go:6:1: func Bare has no doc comment",
		`p.go:9:1: func Wrong has a doc comment that does not start with "Wrong"`,
		"p.go:14:1: method Thing.Method has no doc comment",
		"p.go:29:5: var Loose has no doc comment",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
