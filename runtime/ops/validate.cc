#include "runtime/ops/validate.h"

#include <algorithm>

namespace cairn {

std::string dtype_set_string(DTypeSet set) {
  std::string out;
  for (int v = 0; v < 32; ++v) {
    if (!(set & (DTypeSet{1} << v))) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(static_cast<DType>(v));
  }
  return out;
}

const ArgDef& input_arg(const OpDef& def, int index) {
  int last = static_cast<int>(def.inputs.size()) - 1;
  return def.inputs[std::min(index, last)];
}

namespace {

void check_input_count(const OpDef& def, int n) {
  int fixed = static_cast<int>(def.inputs.size());
  if (def.has_variadic_input()) {
    if (n < fixed) raise(Code::InvalidArgument, "{}: expected at least {} inputs, got {}", def.name, fixed, n);
  } else if (n != fixed) {
    raise(Code::InvalidArgument, "{}: expected {} input{}, got {}", def.name, fixed, fixed == 1 ? "" : "s", n);
  }
}

void check_value(const OpDef& def, const AttrDef& a, const AttrValue& v) {
  if (a.kind == AttrKind::Int && v.i < a.min_int)
    raise(Code::InvalidArgument, "{}: attribute '{}' must be at least {}, got {}", def.name, a.name, a.min_int, v.i);
  // dtype_in is false for any value that is not a dtype (35, -1): the C API passes the caller's int
  // through, so name the number rather than "invalid".
  if (a.kind == AttrKind::DType && !dtype_is_valid(v.dtype))
    raise(Code::InvalidArgument, "{}: attribute '{}' does not accept dtype {} (not a dtype; allowed: {})", def.name,
          a.name, static_cast<int>(v.dtype), dtype_set_string(a.allowed_dtypes));
  if (a.kind == AttrKind::DType && !dtype_in(a.allowed_dtypes, v.dtype))
    raise(Code::InvalidArgument, "{}: attribute '{}' does not accept dtype {} (allowed: {})", def.name, a.name,
          dtype_name(v.dtype), dtype_set_string(a.allowed_dtypes));
  if (a.kind == AttrKind::String && !a.allowed_strings.empty() &&
      std::find(a.allowed_strings.begin(), a.allowed_strings.end(), v.s) == a.allowed_strings.end())
    raise(Code::InvalidArgument, "{}: attribute '{}' must be one of {}, got \"{}\"", def.name, a.name,
          fmt::join(a.allowed_strings, "/"), v.s);
  if (a.kind == AttrKind::Ints && v.n_ints > 0 && v.ints == nullptr)
    raise(Code::InvalidArgument, "{}: attribute '{}' has {} ints but a NULL array", def.name, a.name, v.n_ints);
  if (a.kind == AttrKind::Floats && v.n_floats > 0 && v.floats == nullptr)
    raise(Code::InvalidArgument, "{}: attribute '{}' has {} floats but a NULL array", def.name, a.name, v.n_floats);
}

}  // namespace

void resolve_call(const OpDef& def, const TensorSpec* inputs, int num_inputs, const NamedAttr* given, int num_given,
                  Attrs& attrs) {
  check_input_count(def, num_inputs);
  const int n_attrs = static_cast<int>(def.attrs.size());
  bool set[kMaxAttrs] = {};

  for (int k = 0; k < num_given; ++k) {
    const NamedAttr& g = given[k];
    int idx = def.attr_index(g.name);
    if (idx < 0) raise(Code::InvalidArgument, "{}: unknown attribute '{}'", def.name, g.name);
    const AttrDef& a = def.attrs[idx];
    if (g.value.kind != a.kind)
      raise(Code::InvalidArgument, "{}: attribute '{}' must be {}, got {}", def.name, a.name, attr_kind_name(a.kind),
            attr_kind_name(g.value.kind));
    if (set[idx]) raise(Code::InvalidArgument, "{}: attribute '{}' is given twice", def.name, a.name);
    set[idx] = true;
    attrs.at(idx) = g.value;
  }

  // Type attributes: every input using one must agree, with each other and with a given value.
  for (int i = 0; i < num_inputs; ++i) {
    const ArgDef& arg = input_arg(def, i);
    DType actual = inputs[i].dtype;
    if (arg.type_attr.empty()) {
      if (actual != arg.fixed_dtype)
        raise(Code::InvalidArgument, "{}: input '{}' must be {}, got {}", def.name, arg.name,
              dtype_name(arg.fixed_dtype), dtype_name(actual));
      continue;
    }
    int idx = arg.type_attr_index;
    const AttrDef& a = def.attrs[idx];
    if (!dtype_in(a.allowed_dtypes, actual))
      raise(Code::InvalidArgument, "{}: input '{}' has dtype {}, which {} does not accept (allowed: {})", def.name,
            arg.name, dtype_name(actual), def.name, dtype_set_string(a.allowed_dtypes));
    if (!set[idx]) {
      set[idx] = true;
      attrs.at(idx).kind = AttrKind::DType;
      attrs.at(idx).dtype = actual;
    } else if (attrs.at(idx).dtype != actual) {
      // Name the first input that fixed the dtype, so the message reads "... but 'x' has float32".
      const char* first = nullptr;
      for (int j = 0; j < i && !first; ++j)
        if (input_arg(def, j).type_attr == arg.type_attr) first = input_arg(def, j).name.c_str();
      if (first)
        raise(Code::InvalidArgument, "{}: input '{}' has dtype {} but '{}' has {}", def.name, arg.name,
              dtype_name(actual), first, dtype_name(attrs.at(idx).dtype));
      raise(Code::InvalidArgument, "{}: input '{}' has dtype {} but attribute '{}' is {}", def.name, arg.name,
            dtype_name(actual), a.name, dtype_name(attrs.at(idx).dtype));
    }
  }

  for (int idx = 0; idx < n_attrs; ++idx) {
    const AttrDef& a = def.attrs[idx];
    if (!set[idx]) {
      if (!a.has_default) raise(Code::InvalidArgument, "{}: missing required attribute '{}'", def.name, a.name);
      attrs.at(idx) = a.default_value();
    }
    check_value(def, a, attrs.at(idx));
  }
}

void infer_outputs(const OpDef& def, const Attrs& attrs, const TensorSpec* inputs, int num_inputs,
                   TensorSpec* outputs, int num_outputs) {
  int k = 0;
  for (const ArgDef& o : def.outputs) {
    DType t = o.type_attr_index < 0 ? o.fixed_dtype : attrs.at(o.type_attr_index).dtype;
    int count = o.variadic ? static_cast<int>(attrs.at(o.number_attr_index).i) : 1;
    for (int j = 0; j < count && k < num_outputs; ++j) outputs[k++].dtype = t;
  }
  if (def.shape_fn) {
    ShapeContext sc{def, attrs, inputs, num_inputs, outputs, num_outputs};
    def.shape_fn(sc);
  }
  // Shape functions build output shapes from attributes and input sizes with plain arithmetic
  // (fft_length / 2 + 1, window sizes, attribute shapes). Rather than trust each of them, every
  // op's outputs are checked here, the one place all of them pass on the way to an allocation,
  // eager or traced: an overflowing count once became a small buffer that the kernel overran.
  for (int i = 0; i < num_outputs; ++i) check_output_shape(def, i, outputs[i]);
}

namespace {
// The message of check_output_shape's failure, out of the hot path (every eager op checks its
// outputs).
[[noreturn, gnu::cold, gnu::noinline]] void raise_bad_output_shape(const OpDef& def, int index, const TensorSpec& out) {
  const Shape& s = out.shape;
  for (int d = 0; d < s.rank(); ++d)
    if (s[d] < 0)
      raise(Code::InvalidArgument, "{}: output {} would have shape {}, with a negative dimension", def.name, index,
            s.str());
  if (checked_elements(s.dims(), s.rank()) < 0)
    raise(Code::InvalidArgument, "{}: output {} would have shape {}, whose element count overflows int64", def.name,
          index, s.str());
  raise(Code::InvalidArgument, "{}: output {} would have shape {} of {}, more than 2^62 bytes", def.name, index, s.str(),
        dtype_name(out.dtype));
}
}  // namespace

void check_output_shape(const OpDef& def, int index, const TensorSpec& out) {
  // One pass: no negative dimension, the product of the non-zero ones fits in int64 (zeros cannot
  // hide an overflow: checked_elements' rule), and the bytes fit in kMaxTensorBytes.
  const Shape& s = out.shape;
  int64_t n = 1;
  bool ok = true;
  for (int d = 0; d < s.rank() && ok; ++d) {
    const int64_t v = s[d];
    ok = v >= 0 && (v == 0 || !__builtin_mul_overflow(n, v, &n));
  }
  int64_t bytes = 0;
  if (ok && !__builtin_mul_overflow(n, static_cast<int64_t>(std::max<size_t>(1, dtype_size(out.dtype))), &bytes) &&
      bytes <= kMaxTensorBytes)
    return;
  raise_bad_output_shape(def, index, out);
}

}  // namespace cairn
