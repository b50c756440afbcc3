// Package ops has one function per op of Cairn's op registry, generated from it
// (ops_generated.go, by bindings/gen/generate.py).
//
// Inputs are *cairn.Tensor values (a variadic input is a []*cairn.Tensor), required attributes
// are typed parameters, and attributes with defaults are options named after the op and the
// attribute. An option is sent only when given; the library applies the default of the others
// (each option's doc says what it is):
//
//	z, err := ops.Add(ctx, x, y)
//	p, err := ops.MatMul(ctx, a, b, ops.MatMulTransposeA(true))
//	c, err := ops.Cast(ctx, x, cairn.Int32)
//
// The caller owns the tensors an op returns and closes them. Ops newer than this package can be
// run by name with cairn.RunOp.
package ops

import "cairn.dev/cairn"

// setAttr puts a into attrs, replacing an earlier attribute of the same name: of two options for
// one attribute, the last given wins.
func setAttr(attrs []cairn.Attr, a cairn.Attr) []cairn.Attr {
	for i := range attrs {
		if attrs[i].Name() == a.Name() {
			attrs[i] = a
			return attrs
		}
	}
	return append(attrs, a)
}
