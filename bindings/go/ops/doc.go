// Package ops has one function per op of Cairn's op registry, generated from it
// (ops_generated.go, by bindings/gen/generate.py).
//
// Inputs are *cairn.Tensor values (a variadic input is a []*cairn.Tensor), required attributes
// are typed parameters, and attributes with defaults are functional options named after the op
// and the attribute, whose defaults are written in each function's doc:
//
//	z, err := ops.Add(ctx, x, y)
//	p, err := ops.MatMul(ctx, a, b, ops.MatMulTransposeA(true))
//	c, err := ops.Cast(ctx, x, cairn.Int32)
//
// The caller owns the tensors an op returns and closes them. Ops newer than this package can be
// run by name with cairn.RunOp.
package ops

import "cairn.dev/cairn"

// single unpacks the one output of an op.
func single(outs []*cairn.Tensor, err error) (*cairn.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return outs[0], nil
}
