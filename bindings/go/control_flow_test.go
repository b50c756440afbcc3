package cairn_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"cairn.dev/cairn"
	"cairn.dev/cairn/ops"
)

// ---- Control flow: Cond, WhileLoop and TensorArray, eagerly and inside a Function ----

// scalar is a scalar tensor made inside a callback, where t.Fatal must not run (it would unwind
// through C): a failure panics, which the binding turns into the callback's error.
func scalar[E cairn.Element](ctx *cairn.Context, v E) *cairn.Tensor {
	return must(cairn.NewTensor(ctx, nil, []E{v}))
}

// readOne reads the single element of x.
func readOne[E cairn.Element](t *testing.T, x *cairn.Tensor) E {
	t.Helper()
	values, err := cairn.Read[E](x)
	ok(t, err)
	if len(values) != 1 {
		t.Fatalf("%v has %d elements, want 1", x, len(values))
	}
	return values[0]
}

// loopCalls counts the host calls of a loop's callbacks.
type loopCalls struct{ cond, body int }

// sumBelow is a loop over (i, acc, n): while i < n { acc += i; i++ }, so acc ends as 0+1+...+(n-1).
func sumBelow(calls *loopCalls) (cond, body cairn.FunctionBody) {
	cond = func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
		calls.cond++
		less, err := ops.Less(ctx, v[0], v[2])
		return []*cairn.Tensor{less}, err
	}
	body = func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
		calls.body++
		one := scalar(ctx, int32(1))
		defer one.Close()
		next := must(ops.Add(ctx, v[0], one))
		acc := must(ops.Add(ctx, v[1], v[0]))
		return []*cairn.Tensor{next, acc, v[2]}, nil // n passes through unchanged
	}
	return cond, body
}

// sumLoop runs sumBelow from (0, 0, n) and returns acc.
func sumLoop(ctx *cairn.Context, calls *loopCalls, n *cairn.Tensor, options ...cairn.WhileOption) (*cairn.Tensor, error) {
	cond, body := sumBelow(calls)
	zero := scalar(ctx, int32(0))
	defer zero.Close()
	out, err := cairn.WhileLoop(ctx, cond, body, []*cairn.Tensor{zero, zero, n}, options...)
	if err != nil {
		return nil, err
	}
	out[0].Close()
	out[2].Close()
	return out[1], nil
}

// twiceOrNegate is x > 0 ? 2x : -x, counting the host calls of its branches.
func twiceOrNegate(branchCalls *int) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		zero := scalar(ctx, float32(0))
		defer zero.Close()
		positive, err := ops.Greater(ctx, in[0], zero)
		if err != nil {
			return nil, err
		}
		defer positive.Close()
		twice := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			*branchCalls++
			y, err := ops.Add(ctx, v[0], v[0])
			return []*cairn.Tensor{y}, err
		}
		negate := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			*branchCalls++
			y, err := ops.Neg(ctx, v[0])
			return []*cairn.Tensor{y}, err
		}
		return cairn.Cond(ctx, positive, in[:1], twice, negate, 1)
	}
}

// Eagerly the branch chosen by the predicate runs, once per call, and only it.
func TestCondEager(t *testing.T) {
	ctx := newContext(t)
	calls := 0
	f := twiceOrNegate(&calls)
	for _, c := range []struct{ x, want float32 }{{3, 6}, {-4, 4}, {0, 0}} {
		out, err := f(ctx, []*cairn.Tensor{tensor(t, ctx, nil, []float32{c.x})})
		ok(t, err)
		if got := readOne[float32](t, out[0]); got != c.want {
			t.Errorf("cond(%v) = %v, want %v", c.x, got, c.want)
		}
		closeNow(out)
	}
	if calls != 3 {
		t.Errorf("%d branch calls for 3 eager conds, want 3", calls)
	}
}

// Eagerly the loop calls cond n+1 times and body n times.
func TestWhileLoopEagerSum(t *testing.T) {
	ctx := newContext(t)
	for _, n := range []int32{0, 1, 10} {
		var calls loopCalls
		acc, err := sumLoop(ctx, &calls, tensor(t, ctx, nil, []int32{n}))
		ok(t, err)
		if got, want := readOne[int32](t, acc), n*(n-1)/2; got != want {
			t.Errorf("sum below %d = %d, want %d", n, got, want)
		}
		acc.Close()
		if calls.cond != int(n)+1 || calls.body != int(n) {
			t.Errorf("n = %d: %d cond and %d body calls, want %d and %d", n, calls.cond, calls.body, n+1, n)
		}
	}
}

// WithMaxIterations stops the loop while cond is still true.
func TestWhileLoopMaxIterations(t *testing.T) {
	ctx := newContext(t)
	var calls loopCalls
	acc, err := sumLoop(ctx, &calls, tensor(t, ctx, nil, []int32{10}), cairn.WithMaxIterations(3))
	ok(t, err)
	defer acc.Close()
	if got := readOne[int32](t, acc); got != 0+1+2 {
		t.Errorf("three iterations summed to %d, want 3", got)
	}
	_, err = sumLoop(ctx, &calls, tensor(t, ctx, nil, []int32{10}), cairn.WithMaxIterations(-2))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "max_iterations")
}

// Inside a Function the loop is traced once and replays with a trip count taken from the data.
func TestWhileLoopInFunctionTracesOnce(t *testing.T) {
	ctx := newContext(t)
	var calls loopCalls
	f := newFunction(t, ctx, "sum_below", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		acc, err := sumLoop(ctx, &calls, in[0])
		return []*cairn.Tensor{acc}, err
	})
	for _, n := range []int32{5, 0, 1, 12, 3} {
		out, err := f.Call(tensor(t, ctx, nil, []int32{n}))
		ok(t, err)
		if got, want := readOne[int32](t, out[0]), n*(n-1)/2; got != want {
			t.Errorf("sum below %d = %d, want %d", n, got, want)
		}
		closeNow(out)
	}
	if calls.cond != 1 || calls.body != 1 || f.NumTraces() != 1 {
		t.Errorf("%d cond calls, %d body calls, %d traces; want 1, 1, 1", calls.cond, calls.body, f.NumTraces())
	}
	if n, err := f.NumOutputs(0); err != nil || n != 1 {
		t.Errorf("NumOutputs(0) = %d, %v; want 1", n, err)
	}
	dump, err := f.Dump(0)
	if err != nil || !strings.Contains(dump, "While") {
		t.Errorf("Dump(0) = %q, %v; want a While node", dump, err)
	}
	_, err = f.NumOutputs(1)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "trace 1")
	_, err = f.NumOutputs(-1)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "trace -1")
}

// Inside a Function both branches are traced once, and each replay picks one from the data.
func TestCondInFunctionPicksBranchFromData(t *testing.T) {
	ctx := newContext(t)
	calls := 0
	f := newFunction(t, ctx, "twice_or_negate", twiceOrNegate(&calls))
	for _, c := range []struct{ x, want float32 }{{3, 6}, {-4, 4}, {0.5, 1}, {-0.25, 0.25}} {
		if got := callOne[float32](t, f, tensor(t, ctx, nil, []float32{c.x})); got[0] != c.want {
			t.Errorf("f(%v) = %v, want %v", c.x, got[0], c.want)
		}
	}
	if calls != 2 || f.NumTraces() != 1 {
		t.Errorf("%d branch calls, %d traces; want 2 (each branch traced once) and 1", calls, f.NumTraces())
	}
}

// A loop nested in a loop's body with a Cond inside, traced once: Collatz steps, which depend on
// the data in both the trip count and the branch taken.
func TestNestedControlFlowInFunction(t *testing.T) {
	ctx := newContext(t)
	traces := 0
	f := newFunction(t, ctx, "collatz_steps", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		notOne := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			one := scalar(ctx, int32(1))
			defer one.Close()
			done, err := ops.NotEqual(ctx, v[0], one)
			return []*cairn.Tensor{done}, err
		}
		step := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			two, one := scalar(ctx, int32(2)), scalar(ctx, int32(1))
			defer two.Close()
			defer one.Close()
			even := must(ops.Equal(ctx, must(ops.FloorMod(ctx, v[0], two)), scalar(ctx, int32(0))))
			defer even.Close()
			half := func(ctx *cairn.Context, x []*cairn.Tensor) ([]*cairn.Tensor, error) {
				y, err := ops.FloorDiv(ctx, x[0], two)
				return []*cairn.Tensor{y}, err
			}
			triplePlusOne := func(ctx *cairn.Context, x []*cairn.Tensor) ([]*cairn.Tensor, error) {
				y, err := ops.Add(ctx, must(ops.Mul(ctx, x[0], scalar(ctx, int32(3)))), one)
				return []*cairn.Tensor{y}, err
			}
			next, err := cairn.Cond(ctx, even, v[:1], half, triplePlusOne, 1)
			if err != nil {
				return nil, err
			}
			return []*cairn.Tensor{next[0], must(ops.Add(ctx, v[1], one))}, nil
		}
		zero := scalar(ctx, int32(0))
		defer zero.Close()
		out, err := cairn.WhileLoop(ctx, notOne, step, []*cairn.Tensor{in[0], zero})
		if err != nil {
			return nil, err
		}
		out[0].Close()
		return out[1:], nil
	})
	collatz := func(n int32) int32 {
		steps := int32(0)
		for ; n != 1; steps++ {
			if n%2 == 0 {
				n /= 2
			} else {
				n = 3*n + 1
			}
		}
		return steps
	}
	for _, n := range []int32{1, 6, 7, 27} {
		out, err := f.Call(tensor(t, ctx, nil, []int32{n}))
		ok(t, err)
		if got := readOne[int32](t, out[0]); got != collatz(n) {
			t.Errorf("collatz steps of %d = %d, want %d", n, got, collatz(n))
		}
		closeNow(out)
	}
	if traces != 1 || f.NumTraces() != 1 {
		t.Errorf("%d traces of the body, NumTraces %d; want 1 and 1", traces, f.NumTraces())
	}
}

// squaresBelow fills a TensorArray of 5 int32 scalars with i*i for i < n.
func squaresBelow(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
	cond := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
		less, err := ops.Less(ctx, v[0], v[2])
		return []*cairn.Tensor{less}, err
	}
	body := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
		square := must(ops.Mul(ctx, v[0], v[0]))
		defer square.Close()
		array := must(cairn.TensorArrayWrite(ctx, v[1], v[0], square))
		next := must(ops.Add(ctx, v[0], scalar(ctx, int32(1))))
		return []*cairn.Tensor{next, array, v[2]}, nil
	}
	array, err := cairn.NewTensorArray(ctx, cairn.Int32, 5, nil)
	if err != nil {
		return nil, err
	}
	defer array.Close()
	zero := scalar(ctx, int32(0))
	defer zero.Close()
	out, err := cairn.WhileLoop(ctx, cond, body, []*cairn.Tensor{zero, array, in[0]})
	if err != nil {
		return nil, err
	}
	out[0].Close()
	out[2].Close()
	return out[1:2], nil
}

// A TensorArray filled in a loop: written elements hold the squares, the others stay zero.
func TestTensorArrayFilledInALoop(t *testing.T) {
	ctx := newContext(t)
	f := newFunction(t, ctx, "squares", squaresBelow)
	want := map[int32][]int32{4: {0, 1, 4, 9, 0}, 2: {0, 1, 0, 0, 0}, 0: {0, 0, 0, 0, 0}, 5: {0, 1, 4, 9, 16}}
	for _, n := range []int32{4, 2, 0, 5} {
		out, err := f.Call(tensor(t, ctx, nil, []int32{n}))
		ok(t, err)
		got, err := cairn.Read[int32](out[0])
		ok(t, err)
		if !slices.Equal(got, want[n]) || !slices.Equal(out[0].Shape(), []int64{5}) {
			t.Errorf("squares below %d: %v of shape %v, want %v of shape [5]", n, got, out[0].Shape(), want[n])
		}
		closeNow(out)
	}
	eager, err := squaresBelow(ctx, []*cairn.Tensor{tensor(t, ctx, nil, []int32{4})})
	ok(t, err)
	defer closeNow(eager)
	if got, _ := cairn.Read[int32](eager[0]); !slices.Equal(got, want[4]) {
		t.Errorf("eager squares below 4: %v", got)
	}
	element, err := cairn.TensorArrayRead(ctx, eager[0], tensor(t, ctx, nil, []int64{3}))
	ok(t, err)
	defer element.Close()
	if got := readOne[int32](t, element); got != 9 || element.Rank() != 0 {
		t.Errorf("element 3 = %d of rank %d, want the scalar 9", got, element.Rank())
	}
}

// Arrays of non-scalar elements, and the eager index and size checks.
func TestTensorArrayElementsAndErrors(t *testing.T) {
	ctx := newContext(t)
	array, err := cairn.NewTensorArray(ctx, cairn.Float32, 3, []int64{2})
	ok(t, err)
	defer array.Close()
	if array.DType() != cairn.Float32 || !slices.Equal(array.Shape(), []int64{3, 2}) {
		t.Fatalf("NewTensorArray gave %v, want float32[3,2]", array)
	}
	written, err := cairn.TensorArrayWrite(ctx, array, tensor(t, ctx, nil, []int32{1}), tensor(t, ctx, []int64{2}, []float32{7, 8}))
	ok(t, err)
	defer written.Close()
	if got, _ := cairn.Read[float32](written); !slices.Equal(got, []float32{0, 0, 7, 8, 0, 0}) {
		t.Errorf("after a write: %v", got)
	}
	if got, _ := cairn.Read[float32](array); !slices.Equal(got, make([]float32, 6)) {
		t.Errorf("the written array changed: %v", got)
	}

	five := tensor(t, ctx, nil, []int32{5})
	_, err = cairn.TensorArrayRead(ctx, written, five)
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "index 5")
	_, err = cairn.TensorArrayWrite(ctx, written, five, tensor(t, ctx, []int64{2}, []float32{1, 2}))
	wantCode(t, err, cairn.CodeOutOfRange, cairn.ErrOutOfRange, "index 5")
	_, err = cairn.TensorArrayWrite(ctx, written, tensor(t, ctx, nil, []int32{0}), tensor(t, ctx, []int64{3}, []float32{1, 2, 3}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "elements are float32[2]")
	_, err = cairn.NewTensorArray(ctx, cairn.Float32, -1, nil)
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "size")
	_, err = cairn.TensorArrayRead(ctx, tensor(t, ctx, nil, []float32{1}), tensor(t, ctx, nil, []int32{0}))
	wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "shape [size, element...]")
}

// Misuse and failing callbacks come back as errors, eagerly and from Function.Call.
func TestControlFlowErrors(t *testing.T) {
	ctx := newContext(t)
	x := tensor(t, ctx, nil, []float32{2})
	identity := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) { return v, nil }

	t.Run("non-bool predicate", func(t *testing.T) {
		_, err := cairn.Cond(ctx, tensor(t, ctx, nil, []int32{1}), []*cairn.Tensor{x}, identity, identity, 1)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "bool")
		notBool := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return []*cairn.Tensor{v[0]}, nil
		}
		_, err = cairn.WhileLoop(ctx, notBool, identity, []*cairn.Tensor{x})
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "bool")
	})
	t.Run("nil arguments", func(t *testing.T) {
		yes := tensor(t, ctx, nil, []bool{true})
		_, err := cairn.Cond(ctx, yes, []*cairn.Tensor{x}, identity, nil, 1)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "branch is nil")
		_, err = cairn.Cond(ctx, nil, []*cairn.Tensor{x}, identity, identity, 1)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "pred")
		_, err = cairn.Cond(ctx, yes, []*cairn.Tensor{x}, identity, identity, -1)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "numOutputs -1")
		_, err = cairn.WhileLoop(ctx, nil, identity, []*cairn.Tensor{x})
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "cond or body is nil")
		_, err = cairn.WhileLoop(ctx, identity, identity, nil)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "at least one loop variable")
	})
	t.Run("wrong result count", func(t *testing.T) {
		yes := tensor(t, ctx, nil, []bool{true})
		_, err := cairn.Cond(ctx, yes, []*cairn.Tensor{x, x}, identity, identity, 1)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "Cond's then branch returned 2 output(s)")
	})
	t.Run("mismatched branches", func(t *testing.T) {
		f := newFunction(t, ctx, "mismatched", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			toInt := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
				y, err := ops.Cast(ctx, v[0], cairn.Int32)
				return []*cairn.Tensor{y}, err
			}
			return cairn.Cond(ctx, scalar(ctx, true), in, identity, toInt, 1)
		})
		_, err := f.Call(x)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "int32[] in the else branch")
	})
	t.Run("host error in the body", func(t *testing.T) {
		var calls loopCalls
		cond, _ := sumBelow(&calls)
		failing := func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) { return nil, errHost }
		n := tensor(t, ctx, nil, []int32{3})
		zero := tensor(t, ctx, nil, []int32{0})
		_, err := cairn.WhileLoop(ctx, cond, failing, []*cairn.Tensor{zero, zero, n})
		if !errors.Is(err, errHost) || !strings.Contains(err.Error(), "WhileLoop's body") {
			t.Errorf("eager: got %v, want the host error from WhileLoop's body", err)
		}
		fail := true
		f := newFunction(t, ctx, "sum_or_fail", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			cond, body := sumBelow(&calls)
			if fail {
				body = failing
			}
			zero := scalar(ctx, int32(0))
			defer zero.Close()
			out, err := cairn.WhileLoop(ctx, cond, body, []*cairn.Tensor{zero, zero, in[0]})
			if err != nil {
				return nil, err
			}
			return out[1:2], nil
		})
		_, err = f.Call(n)
		if !errors.Is(err, errHost) || !strings.Contains(err.Error(), "function 'sum_or_fail'") {
			t.Errorf("traced: got %v, want the host error from Call", err)
		}
		if f.NumTraces() != 0 {
			t.Errorf("a failed trace was kept: %d traces", f.NumTraces())
		}
		fail = false // nothing was cached, so the next call traces again, and succeeds
		if got := readOne[int32](t, must(f.Call(n))[0]); got != 3 {
			t.Errorf("after the failure: sum below 3 = %d", got)
		}
	})
	t.Run("panic in a branch", func(t *testing.T) {
		boom := func(*cairn.Context, []*cairn.Tensor) ([]*cairn.Tensor, error) { panic(errHost) }
		_, err := cairn.Cond(ctx, tensor(t, ctx, nil, []bool{false}), []*cairn.Tensor{x}, identity, boom, 1)
		if !errors.Is(err, errHost) || !strings.Contains(err.Error(), "Cond's else branch panicked") {
			t.Errorf("got %v, want the panic as an error", err)
		}
	})
	t.Run("body changes a loop variable's shape", func(t *testing.T) {
		grow := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			y, err := ops.ConcatV2(ctx, []*cairn.Tensor{v[0], v[0]})
			return []*cairn.Tensor{y, v[1]}, err
		}
		yes := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return []*cairn.Tensor{v[1]}, nil
		}
		vars := []*cairn.Tensor{tensor(t, ctx, []int64{1}, []float32{1}), tensor(t, ctx, nil, []bool{true})}
		_, err := cairn.WhileLoop(ctx, yes, grow, vars, cairn.WithMaxIterations(2))
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "keeps its dtype and shape")
		f := newFunction(t, ctx, "grow", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
			return cairn.WhileLoop(ctx, yes, grow, in, cairn.WithMaxIterations(2))
		}, cairn.WithNumOutputs(2))
		_, err = f.Call(vars...)
		wantCode(t, err, cairn.CodeInvalidArgument, cairn.ErrInvalidArgument, "keeps its dtype and shape")
	})
}

// rnn is h = tanh(x_t W + h U) over the first n steps of xs ([T, 1, D]) from h = 0, with every
// step's h written to a TensorArray of T elements [1, H]; it returns the final h and the array.
func rnn(w, u *cairn.Tensor) cairn.FunctionBody {
	return func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		xs, n := in[0], in[1]
		steps, hidden := xs.Shape()[0], u.Shape()[0] // static shapes are known while tracing
		cond := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			less, err := ops.Less(ctx, v[0], n) // n is captured from the enclosing body
			return []*cairn.Tensor{less}, err
		}
		body := func(ctx *cairn.Context, v []*cairn.Tensor) ([]*cairn.Tensor, error) {
			i, h, outs := v[0], v[1], v[2]
			x := must(cairn.TensorArrayRead(ctx, xs, i)) // [1, D]
			pre := must(ops.Add(ctx, must(ops.MatMul(ctx, x, w)), must(ops.MatMul(ctx, h, u))))
			next := must(ops.Tanh(ctx, pre))
			outs = must(cairn.TensorArrayWrite(ctx, outs, i, next))
			return []*cairn.Tensor{must(ops.Add(ctx, i, scalar(ctx, int32(1)))), next, outs}, nil
		}
		h0 := must(cairn.NewTensor(ctx, []int64{1, hidden}, make([]float32, hidden)))
		outs := must(cairn.NewTensorArray(ctx, cairn.Float32, steps, []int64{1, hidden}))
		final, err := cairn.WhileLoop(ctx, cond, body, []*cairn.Tensor{scalar(ctx, int32(0)), h0, outs})
		if err != nil {
			return nil, err
		}
		final[0].Close()
		return final[1:], nil
	}
}

// rnnByHand is the same RNN in plain Go, for the reference values.
func rnnByHand(xs []float32, steps, d, hidden, n int, w, u []float32) (h []float64, outs []float64) {
	h = make([]float64, hidden)
	outs = make([]float64, steps*hidden)
	for s := 0; s < n; s++ {
		next := make([]float64, hidden)
		for j := 0; j < hidden; j++ {
			sum := 0.0
			for k := 0; k < d; k++ {
				sum += float64(xs[s*d+k]) * float64(w[k*hidden+j])
			}
			for k := 0; k < hidden; k++ {
				sum += h[k] * float64(u[k*hidden+j])
			}
			next[j] = math.Tanh(sum)
		}
		h = next
		copy(outs[s*hidden:], h)
	}
	return h, outs
}

// The headline case: an RNN over a data-dependent length inside a Function, traced once,
// equal to the eager loop and to plain Go for every length.
func TestRNNOverDataDependentLength(t *testing.T) {
	ctx := newContext(t)
	const steps, d, hidden = 6, 3, 4
	xsData := make([]float32, steps*d)
	for i := range xsData {
		xsData[i] = float32(math.Sin(float64(i)*0.7)) * 0.8
	}
	wData, uData := make([]float32, d*hidden), make([]float32, hidden*hidden)
	for i := range wData {
		wData[i] = float32(math.Cos(float64(i)*1.3)) * 0.6
	}
	for i := range uData {
		uData[i] = float32(math.Sin(float64(i)*0.9+0.4)) * 0.5
	}
	xs := tensor(t, ctx, []int64{steps, 1, d}, xsData)
	w := tensor(t, ctx, []int64{d, hidden}, wData)
	u := tensor(t, ctx, []int64{hidden, hidden}, uData)

	traces := 0
	body := rnn(w, u)
	f := newFunction(t, ctx, "rnn", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		traces++
		return body(ctx, in)
	}, cairn.WithNumOutputs(2))

	for _, n := range []int32{3, 0, 6, 1, 5} {
		length := tensor(t, ctx, nil, []int32{n})
		compiled, err := f.Call(xs, length)
		ok(t, err)
		eager, err := body(ctx, []*cairn.Tensor{xs, length})
		ok(t, err)
		wantH, wantOuts := rnnByHand(xsData, steps, d, hidden, int(n), wData, uData)
		for k, want := range [][]float64{wantH, wantOuts} {
			got := must(cairn.Read[float32](compiled[k]))
			fromEager := must(cairn.Read[float32](eager[k]))
			if !slices.Equal(got, fromEager) {
				t.Errorf("n = %d, output %d: compiled %v, eager %v", n, k, got, fromEager)
			}
			for j := range want {
				if math.Abs(float64(got[j])-want[j]) > 1e-5 {
					t.Errorf("n = %d, output %d[%d] = %v, want %v", n, k, j, got[j], want[j])
					break
				}
			}
		}
		if !slices.Equal(compiled[1].Shape(), []int64{steps, 1, hidden}) {
			t.Errorf("the outputs array has shape %v", compiled[1].Shape())
		}
		closeNow(compiled)
		closeNow(eager)
	}
	if traces != 1 || f.NumTraces() != 1 {
		t.Errorf("%d traces of the body, NumTraces %d; want 1 and 1", traces, f.NumTraces())
	}
	if n, err := f.NumOutputs(0); err != nil || n != 2 {
		t.Errorf("NumOutputs(0) = %d, %v; want 2", n, err)
	}
}

// Eager loops on several goroutines at once, and replays of one traced loop from several
// goroutines, each with its own trip count (each call has its own callbacks' state).
func TestConcurrentControlFlow(t *testing.T) {
	ctx := newContext(t)
	var traced loopCalls
	f := newFunction(t, ctx, "sum_below", func(ctx *cairn.Context, in []*cairn.Tensor) ([]*cairn.Tensor, error) {
		acc, err := sumLoop(ctx, &traced, in[0])
		return []*cairn.Tensor{acc}, err
	})
	warm := must(f.Call(tensor(t, ctx, nil, []int32{2}))) // trace first: later calls only replay
	closeNow(warm)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(n int32) {
			defer wg.Done()
			for round := 0; round < 10; round++ {
				x := must(cairn.NewTensor(ctx, nil, []int32{n}))
				var calls loopCalls
				eager, err := sumLoop(ctx, &calls, x)
				if err != nil {
					errs <- err
					return
				}
				compiled, err := f.Call(x)
				if err != nil {
					errs <- err
					return
				}
				a, b := must(cairn.Read[int32](eager)), must(cairn.Read[int32](compiled[0]))
				if a[0] != n*(n-1)/2 || b[0] != a[0] || calls.body != int(n) {
					errs <- fmt.Errorf("n = %d: eager %d, compiled %d, %d body calls", n, a[0], b[0], calls.body)
					return
				}
				eager.Close()
				closeNow(compiled)
				x.Close()
			}
		}(int32(g + 3))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if traced.body != 1 || f.NumTraces() != 1 {
		t.Errorf("%d traced body calls, %d traces; want 1 and 1", traced.body, f.NumTraces())
	}
}
