package cairn

/*
#include "cairn/cairn.h"
*/
import "C"

// String is the dtype's name as the library spells it: "float32", "int64", ...; "invalid" for
// values it does not know.
func (d DType) String() string { return C.GoString(cDTypeName(C.cairn_dtype(d))) }

// Size is the number of bytes per element; 0 for String and unknown values.
func (d DType) Size() int { return int(cDTypeSize(C.cairn_dtype(d))) }

// Element is a Go type whose memory layout is that of a Cairn dtype. float16 and bfloat16 have no
// Go type: they travel as their raw bits in []uint16 (NewFloat16Tensor, Tensor.Float16Bits, ...).
type Element interface {
	float32 | float64 | int32 | int64 | int16 | int8 | uint8 | bool | complex64
}

// DTypeOf is the dtype that holds elements of type E.
func DTypeOf[E Element]() DType {
	var zero E
	switch any(zero).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int32:
		return Int32
	case int64:
		return Int64
	case int16:
		return Int16
	case int8:
		return Int8
	case uint8:
		return Uint8
	case bool:
		return Bool
	case complex64:
		return Complex64
	}
	panic("unreachable: Element lists only the types above")
}
