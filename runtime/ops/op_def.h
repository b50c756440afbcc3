// Op schemas. Each op has exactly one OpDef: its inputs, outputs, attributes (with kinds, defaults and
// allowed values), a shape function, and one kernel slot per device kind. Validation, shape
// inference, the C API's registry listing, binding generation and (later) gradients and graph
// capture all read this one description.
#pragma once

#include <cstdint>
#include <new>
#include <type_traits>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/error.h"
#include "runtime/core/shape.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

class ThreadPool;

// Same values as cairn_attr_kind.
enum class AttrKind : int { Int = 1, Float = 2, Bool = 3, Ints = 4, String = 5, DType = 6, Floats = 7 };
const char* attr_kind_name(AttrKind k);  // "INT", "FLOAT", ...

// An attribute value. Arrays and strings are borrowed: from the caller for one eager call, from
// the OpDef for defaults, or from an owning store (graph capture).
struct AttrValue {
  AttrKind kind = AttrKind::Int;
  int64_t i = 0;
  double f = 0;
  const int64_t* ints = nullptr;
  size_t n_ints = 0;
  std::string_view s;
  DType dtype = DType::Invalid;
  const double* floats = nullptr;
  size_t n_floats = 0;
};

struct NamedAttr {
  std::string_view name;
  AttrValue value;
};

struct AttrDef {
  std::string name;
  AttrKind kind = AttrKind::Int;
  bool has_default = false;
  bool inferred = false;           // a type attribute taken from the inputs' dtypes
  DTypeSet allowed_dtypes = 0;     // DType attributes: what is accepted
  std::vector<std::string> allowed_strings;  // String attributes: empty means any
  int64_t min_int = INT64_MIN;     // Int attributes: lower bound
  // Default value storage (AttrValue points into it).
  int64_t default_i = 0;
  double default_f = 0;
  std::vector<int64_t> default_ints;
  std::string default_s;
  DType default_dtype = DType::Invalid;
  std::vector<double> default_floats;

  AttrValue default_value() const;
};

struct ArgDef {
  std::string name;
  std::string type_attr;               // dtype comes from this attribute, or...
  DType fixed_dtype = DType::Invalid;  // ...is fixed (when type_attr is empty)
  bool variadic = false;  // inputs: takes all remaining inputs (at least one); outputs: count from number_attr
  std::string number_attr;
  // Indices into OpDef::attrs of type_attr / number_attr (-1 when unused), resolved at registration
  // so dispatch never compares attribute names.
  int type_attr_index = -1;
  int number_attr_index = -1;
};

class Attrs;

// What a shape function sees: the inputs' dtypes and shapes, the resolved attributes, and the
// outputs to fill in (dtypes are pre-filled from the ArgDefs).
struct TensorSpec {
  DType dtype = DType::Invalid;
  Shape shape;
};

struct ShapeContext {
  const class OpDef& def;
  const Attrs& attrs;
  const TensorSpec* inputs;
  int num_inputs;
  TensorSpec* outputs;
  int num_outputs;

  const Shape& in(int i) const { return inputs[i].shape; }
  DType in_dtype(int i) const { return inputs[i].dtype; }
  void set_out(int i, const Shape& s) { outputs[i].shape = s; }
  const char* op() const;
};
using ShapeFn = void (*)(ShapeContext&);

struct KernelContext;
using KernelFn = void (*)(KernelContext&);

// Autodiff (runtime/autodiff) fills this in: the op's gradient, built from registered ops.
struct GradContext;
using GradientFn = void (*)(GradContext&);

class OpDef {
 public:
  std::string name;
  std::string summary;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  ShapeFn shape_fn = nullptr;
  // The kernel allocates its outputs itself (the output shape depends on input values).
  bool dynamic_output_shape = false;
  // Draws random numbers: its kernel gets a per-call seed from the context.
  bool random = false;
  // Has an effect outside its outputs (writes a summary): traced, it is never folded, merged,
  // removed or recomputed, and each replay runs it in trace order.
  bool stateful = false;
  // Draws random numbers or is stateful: a graph pass must keep every call of it.
  bool has_side_effects() const { return random || stateful; }
  KernelFn kernels[kNumDeviceKinds] = {};
  // The gradient function (set by CAIRN_REGISTER_GRADIENT), and whether gradients flow through the
  // op at all: comparisons, rounding and index results are not differentiable
  // (CAIRN_NOT_DIFFERENTIABLE), so a tape does not record them.
  GradientFn gradient = nullptr;
  bool differentiable = true;

  int attr_index(std::string_view attr_name) const;  // -1 when unknown
  bool has_variadic_input() const { return !inputs.empty() && inputs.back().variadic; }
  // The number of outputs a call with these attributes produces.
  int num_outputs(const Attrs& attrs) const;
};

constexpr int kMaxAttrs = 12;

// The resolved attributes of one call, indexed like OpDef::attrs. Every slot holds either the
// caller's value or the default, after validation.
class Attrs {
 public:
  // Constructs only as many values as the op has attributes: most ops have one or two, and
  // initialising all kMaxAttrs slots would dominate the cost of a small eager op.
  explicit Attrs(const OpDef& def);
  const OpDef& def() const { return *def_; }
  const AttrValue& at(int index) const { return values()[index]; }
  AttrValue& at(int index) { return values()[index]; }
  const AttrValue& get(std::string_view name) const;  // throws Internal if the schema lacks it

  int64_t i(std::string_view name) const { return get(name).i; }
  bool b(std::string_view name) const { return get(name).i != 0; }
  double f(std::string_view name) const { return get(name).f; }
  std::string_view s(std::string_view name) const { return get(name).s; }
  DType dtype(std::string_view name) const { return get(name).dtype; }
  std::vector<int64_t> ints(std::string_view name) const {
    const AttrValue& v = get(name);
    return std::vector<int64_t>(v.ints, v.ints + v.n_ints);
  }
  std::vector<double> floats(std::string_view name) const {
    const AttrValue& v = get(name);
    return std::vector<double>(v.floats, v.floats + v.n_floats);
  }

 private:
  AttrValue* values() { return reinterpret_cast<AttrValue*>(storage_); }
  const AttrValue* values() const { return reinterpret_cast<const AttrValue*>(storage_); }

  const OpDef* def_;
  alignas(AttrValue) unsigned char storage_[kMaxAttrs * sizeof(AttrValue)];
};
static_assert(std::is_trivially_destructible_v<AttrValue>, "Attrs never destroys its values");

inline Attrs::Attrs(const OpDef& def) : def_(&def) {
  for (size_t i = 0; i < def.attrs.size(); ++i) new (storage_ + i * sizeof(AttrValue)) AttrValue();
}

// What a kernel sees. Outputs are allocated before the kernel runs, except for ops with
// dynamic_output_shape, whose kernels call allocate_output.
struct KernelContext {
  const OpDef& def;
  const Attrs& attrs;
  Device& device;
  ThreadPool& pool;
  const Tensor* const* inputs;
  int num_inputs;
  Tensor* outputs;
  int num_outputs;
  uint64_t random_seed = 0;  // for ops with `random`: a seed unique to this call

  const Tensor& input(int i) const { return *inputs[i]; }
  Tensor& output(int i) const { return outputs[i]; }
  Tensor& allocate_output(int i, DType dtype, const Shape& shape) const;
  const char* op() const { return def.name.c_str(); }
};

}  // namespace cairn
