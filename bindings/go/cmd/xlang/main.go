// Command xlang is the Go side of the cross-language checkpoint test (tests/xlang/SPEC.md):
//
//	xlang save PATH      builds the state and writes it to PATH
//	xlang restore PATH   builds it with zeros, restores PATH, checks every value and prints
//	                     "xlang restore ok"
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"cairn.dev/cairn"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// The values of the spec's variables.
var (
	w    = []float32{0.5, 1.5, 2.5, 3.5, 4.5, 5.5}
	b    = []int64{-1, 0, 9000000000}
	k    = []float64{0.25, -0.125}
	flag = []bool{true, false, false, true}
	half = []uint16{0x3C00} // float16 1.0
)

// state is the spec's object structure; its variables are kept for checking.
type state struct {
	ckpt                   *cairn.Checkpoint
	w, b, k, flag, halfVar *cairn.Variable
}

func (s *state) Close() {
	for _, v := range []*cairn.Variable{s.w, s.b, s.k, s.flag, s.halfVar} {
		v.Close()
	}
	s.ckpt.Close()
}

// must returns v or panics with err; run recovers it.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func check(err error) {
	must(0, err)
}

// zeros is len(data) zero values when zero is set, data otherwise.
func zeros[E any](data []E, zero bool) []E {
	if zero {
		return make([]E, len(data))
	}
	return data
}

// variable makes a variable from initial (consumed), in scope when it is not nil.
func variable(ctx *cairn.Context, initial *cairn.Tensor, name string, scope *cairn.Module) *cairn.Variable {
	defer initial.Close()
	options := []cairn.VariableOption{cairn.WithVariableName(name)}
	if scope != nil {
		options = append(options, cairn.WithScope(scope))
	}
	return must(cairn.NewVariable(ctx, initial, options...))
}

// build creates the state in the spec's order; zero gives every variable zeros. Edges and the
// checkpoint hold their own references, so the handles made here are closed on return.
func build(ctx *cairn.Context, zero bool) *state {
	s := &state{}
	m := must(cairn.NewModule(ctx, "net"))
	defer m.Close()
	s.w = variable(ctx, must(cairn.NewTensor(ctx, []int64{2, 3}, zeros(w, zero))), "w", m)
	check(m.Set("w", s.w))
	s.b = variable(ctx, must(cairn.NewTensor(ctx, []int64{3}, zeros(b, zero))), "b", m)
	check(m.Set("b", s.b))

	layers := must(cairn.NewList(ctx))
	defer layers.Close()
	l0 := must(cairn.NewTrackable(ctx))
	defer l0.Close()
	s.k = variable(ctx, must(cairn.NewTensor(ctx, []int64{2}, zeros(k, zero))), "k", nil)
	check(l0.Set("k", s.k))
	check(layers.Append(l0))
	l1 := must(cairn.NewTrackable(ctx))
	defer l1.Close()
	s.flag = variable(ctx, must(cairn.NewTensor(ctx, []int64{4}, zeros(flag, zero))), "flag", nil)
	check(l1.Set("flag", s.flag))
	check(layers.Append(l1))

	table := must(cairn.NewDict(ctx))
	defer table.Close()
	s.halfVar = variable(ctx, must(cairn.NewFloat16Tensor(ctx, nil, zeros(half, zero))), "half", nil)
	check(table.Set("half", s.halfVar))
	check(table.Set("shared", l0))

	s.ckpt = must(cairn.NewCheckpoint(ctx, map[string]cairn.Tracked{"model": m, "layers": layers, "table": table}))
	return s
}

func run(args []string, stdout, stderr io.Writer) (code int) {
	if len(args) != 2 || (args[0] != "save" && args[0] != "restore") {
		fmt.Fprintln(stderr, "usage: xlang save|restore PATH")
		return 2
	}
	defer func() {
		if r := recover(); r != nil {
			err, isErr := r.(error)
			if !isErr {
				panic(r)
			}
			fmt.Fprintln(stderr, "xlang:", err)
			code = 1
		}
	}()
	ctx := must(cairn.NewContext())
	defer ctx.Close()
	restore := args[0] == "restore"
	s := build(ctx, restore)
	defer s.Close()
	if !restore {
		check(s.ckpt.Write(args[1]))
		return 0
	}
	rs := must(s.ckpt.Restore(args[1]))
	defer rs.Close()
	check(rs.AssertConsumed())
	wrong := checkValue(stderr, "model/w", s.w, w) + checkValue(stderr, "model/b", s.b, b) +
		checkValue(stderr, "layers/0/k", s.k, k) + checkValue(stderr, "layers/1/flag", s.flag, flag)
	if got, err := readHalf(s.halfVar); err != nil || !slices.Equal(got, half) {
		fmt.Fprintf(stderr, "xlang: table/half is %x (%v), want %x\n", got, err, half)
		wrong++
	}
	if wrong > 0 {
		return 1
	}
	fmt.Fprintln(stdout, "xlang restore ok")
	return 0
}

// checkValue prints a mismatch and counts it.
func checkValue[E cairn.Element](stderr io.Writer, name string, v *cairn.Variable, want []E) int {
	got, err := cairn.ReadValue[E](v)
	if err != nil || !slices.Equal(got, want) {
		fmt.Fprintf(stderr, "xlang: %s is %v (%v), want %v\n", name, got, err, want)
		return 1
	}
	return 0
}

func readHalf(v *cairn.Variable) ([]uint16, error) {
	t, err := v.Read()
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return t.Float16Bits()
}
