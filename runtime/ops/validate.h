// Call validation shared by eager dispatch and (later) graph capture: checks the inputs against the
// schema, resolves attributes (caller's values, inferred dtypes, defaults) and infers outputs.
#pragma once

#include "runtime/ops/op_def.h"

namespace cairn {

// Checks the input count and dtypes, fills `attrs` and validates every attribute.
// Messages name the op, e.g. "Add: input 'y' has dtype int32 but 'x' has float32".
void resolve_call(const OpDef& def, const TensorSpec* inputs, int num_inputs, const NamedAttr* given, int num_given,
                  Attrs& attrs);

// Output dtypes from the ArgDefs, then the schema's shape function. `outputs` must hold
// def.num_outputs(attrs) entries.
void infer_outputs(const OpDef& def, const Attrs& attrs, const TensorSpec* inputs, int num_inputs,
                   TensorSpec* outputs, int num_outputs);

// No tensor may take more bytes than this (4 EiB): far beyond any machine, so nothing real is
// refused, and low enough that a kernel's temporaries of a few times an output's size, and
// byte offsets into it, still fit in int64 and size_t.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 62;

// Throws InvalidArgument naming the op unless output `index` has non-negative dimensions, an
// element count that fits in int64 (checked_elements) and at most kMaxTensorBytes bytes.
// infer_outputs calls it for every output.
void check_output_shape(const OpDef& def, int index, const TensorSpec& out);

// Which schema input a flat input index belongs to (variadic inputs take all that remain).
const ArgDef& input_arg(const OpDef& def, int index);

std::string dtype_set_string(DTypeSet set);  // "float32, int32, ..."

}  // namespace cairn
