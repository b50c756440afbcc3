// Eager dispatch: validate, infer output shapes, allocate, run the kernel. This is the single
// interception point: DispatchHooks registered on the context see every op (tape, graph capture).
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/ops/op_def.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

struct OpCall {
  const OpDef& def;
  const Attrs& attrs;
  const Tensor* const* inputs;
  int num_inputs;
  Tensor* outputs;
  int num_outputs;
  const TensorSpec* output_specs;  // inferred before any hook runs (dynamic-shape ops: a guess)
};

// Runs `def` on `inputs`; `outputs` must have room for exactly def.num_outputs(attrs) tensors.
// The op runs on the inputs' device (all inputs must share one); an op without inputs runs on the
// innermost device scope's device, else the context's default device. With soft placement on
// (Context::set_soft_placement), an op with inputs runs on the scope's device, else its first
// input's, and inputs elsewhere are copied there (docs/placement.md).
void run_op(Context& ctx, const OpDef& def, const Tensor* const* inputs, int num_inputs, const NamedAttr* attrs,
            int num_attrs, Tensor* outputs, int num_outputs);

// Inside a catch block around an op's allocations and kernel: rethrows the exception so that its
// message names the op ("Fill: cpu: out of memory allocating ..."), unless it already starts with
// "<op>:"; std::bad_alloc and std::length_error become RESOURCE_EXHAUSTED "<op>: out of memory".
// run_op uses it for every op; a caller that runs kernels itself (a graph replay's fast path) should
// too.
[[noreturn]] void rethrow_naming_op(const OpDef& def);

// C++ convenience for the runtime and tests: looks the op up by name and returns all outputs.
std::vector<Tensor> run_op(Context& ctx, std::string_view op, std::initializer_list<Tensor> inputs,
                           std::initializer_list<NamedAttr> attrs = {});
std::vector<Tensor> run_op(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs,
                           std::initializer_list<NamedAttr> attrs = {});
std::vector<Tensor> run_op(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs,
                           const std::vector<NamedAttr>& attrs);

// The attributes of a resolved call that a caller sets (type attributes inferred from the inputs
// left out), borrowing from `attrs`: re-runs an op with another op's settings (gradients do).
std::vector<NamedAttr> explicit_attrs(const Attrs& attrs);

// Attribute builders for the C++ convenience call. Array values are borrowed: keep them alive
// for the call.
NamedAttr attr_int(std::string_view name, int64_t v);
NamedAttr attr_bool(std::string_view name, bool v);
NamedAttr attr_float(std::string_view name, double v);
NamedAttr attr_dtype(std::string_view name, DType v);
NamedAttr attr_string(std::string_view name, std::string_view v);
NamedAttr attr_ints(std::string_view name, const std::vector<int64_t>& v);
NamedAttr attr_floats(std::string_view name, const std::vector<double>& v);

}  // namespace cairn
