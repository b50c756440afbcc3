// Eager op calls and the op registry listing in the C API.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "capi/internal/handles.h"
#include "runtime/core/inline_array.h"
#include "runtime/eager/dispatch.h"
#include "runtime/ops/registry.h"

using namespace cairn;
using cairn::capi::require;

namespace {

constexpr size_t kInline = 8;

// Reads only the field of the attribute's kind: the header says the others are ignored, so they
// may hold anything (an uninitialised cairn_dtype is not read as a DType).
AttrValue to_value(const cairn_attr& a, const char* op) {
  AttrValue v;
  const int32_t kind = capi::enum_bits(a.kind);
  if (kind < CAIRN_ATTR_INT || kind > CAIRN_ATTR_FLOATS)
    raise(Code::InvalidArgument, "{}: attribute '{}' has unknown kind {}", op, a.name, kind);
  v.kind = static_cast<AttrKind>(kind);
  switch (static_cast<cairn_attr_kind>(kind)) {
    case CAIRN_ATTR_INT: v.i = a.i; break;
    case CAIRN_ATTR_BOOL:
      if (a.i != 0 && a.i != 1)
        raise(Code::InvalidArgument, "{}: attribute '{}' is BOOL but i is {} (expected 0 or 1)", op, a.name, a.i);
      v.i = a.i;
      break;
    case CAIRN_ATTR_FLOAT: v.f = a.f; break;
    case CAIRN_ATTR_INTS:
      v.ints = a.ints;
      v.n_ints = a.n_ints;
      break;
    case CAIRN_ATTR_STRING:
      if (!a.s) raise(Code::InvalidArgument, "{}: attribute '{}' has a NULL string", op, a.name);
      v.s = a.s;
      break;
    case CAIRN_ATTR_DTYPE: v.dtype = static_cast<DType>(capi::enum_bits(a.dtype)); break;
    case CAIRN_ATTR_FLOATS:
      v.floats = a.floats;
      v.n_floats = a.n_floats;
      break;
    default: break;
  }
  return v;
}

// The registry's op named `op`, or null. Eager loops call the same few ops over and over: each
// thread remembers the last op found per first letter, and comparing a name with strcmp costs a
// fraction of the registry's hash lookup (OpDefs live as long as the process).
const OpDef* find_op(const char* op) {
  thread_local const OpDef* recent[32] = {};
  const OpDef*& slot = recent[static_cast<unsigned char>(op[0]) % 32];
  if (slot && std::strcmp(op, slot->name.c_str()) == 0) return slot;
  const OpDef* def = OpRegistry::global().find(op);
  if (def && def->name == op) slot = def;  // not an alias, whose name differs
  return def;
}

// The body of cairn_op_run and cairn_op_run_attrs; throws on failure. Inlined into both, so the
// eager dispatch path pays no extra call (13 instructions per op when it was a call).
[[gnu::always_inline]] inline void run_op_checked(cairn_context* ctx, const char* op, cairn_tensor* const* inputs, size_t n_inputs,
                    const cairn_attr* attrs, size_t n_attrs, cairn_tensor** outputs, size_t n_outputs,
                    const char* fn) {
  require(ctx, fn, "ctx");
  require(op, fn, "op");
  const OpDef* def = find_op(op);
  if (!def) raise(Code::NotFound, "{}: unknown op '{}'", fn, op);
  if (n_inputs > 0) require(inputs, def->name.c_str(), "inputs");
  if (n_attrs > 0) require(attrs, def->name.c_str(), "attrs");
  if (n_outputs > 0) require(outputs, def->name.c_str(), "outputs");

  InlineArray<const Tensor*, kInline> ins(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    if (!inputs[i]) raise(Code::InvalidArgument, "{}: input {} is NULL", def->name, i);
    ins[i] = &inputs[i]->t;
  }
  InlineArray<NamedAttr, kInline> named(n_attrs);
  for (size_t i = 0; i < n_attrs; ++i) {
    if (!attrs[i].name) raise(Code::InvalidArgument, "{}: attribute {} has a NULL name", def->name, i);
    named[i] = NamedAttr{attrs[i].name, to_value(attrs[i], def->name.c_str())};
  }
  InlineArray<Tensor, kInline> outs(n_outputs);
  run_op(*ctx->ctx, *def, ins.data(), static_cast<int>(n_inputs), named.data(), static_cast<int>(n_attrs), outs.data(),
         static_cast<int>(n_outputs));
  // Allocate every handle before publishing any, so a failure leaves `outputs` untouched.
  InlineArray<cairn_tensor*, kInline> handles(n_outputs);
  size_t made = 0;
  try {
    for (; made < n_outputs; ++made) handles[made] = capi::new_tensor(std::move(outs[made]));
  } catch (...) {
    for (size_t i = 0; i < made; ++i) delete handles[i];
    throw;
  }
  for (size_t i = 0; i < n_outputs; ++i) outputs[i] = handles[i];
}

}  // namespace

// ---- cairn_op_attrs: owned copies of attribute values, viewed as a cairn_attr array ----

struct cairn_op_attrs {
  struct Value {
    std::string name;
    cairn_attr_kind kind = CAIRN_ATTR_INT;
    int64_t i = 0;
    double f = 0;
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::string s;
    cairn_dtype dtype = CAIRN_INVALID_DTYPE;
  };
  std::vector<Value> values;
  std::vector<cairn_attr> view;  // rebuilt after every set, so runs only read

  Value& slot(const char* name) {
    for (Value& v : values)
      if (v.name == name) return v;
    values.push_back(Value{});
    values.back().name = name;
    return values.back();
  }

  void rebuild_view() {
    view.clear();
    for (const Value& v : values) {
      cairn_attr a{};
      a.name = v.name.c_str();
      a.kind = v.kind;
      a.i = v.i;
      a.f = v.f;
      a.ints = v.ints.data();
      a.n_ints = v.ints.size();
      a.s = v.s.c_str();
      a.dtype = v.dtype;
      a.floats = v.floats.data();
      a.n_floats = v.floats.size();
      view.push_back(a);
    }
  }
};

namespace {

// Sets attribute `name` of `attrs` with `fill`, which writes the kind and value into a slot.
template <class Fill>
cairn_status* set_attr(cairn_op_attrs* attrs, const char* name, const char* fn, Fill fill) {
  CAIRN_API_BEGIN
  require(attrs, fn, "attrs");
  require(name, fn, "name");
  cairn_op_attrs::Value value;
  value.name = name;
  fill(value);
  cairn_op_attrs::Value& slot = attrs->slot(name);
  slot = std::move(value);
  attrs->rebuild_view();
  CAIRN_API_END_AS(fn)
}

template <class T>
std::vector<T> copy_array(const T* values, size_t n, const char* fn) {
  if (n > 0) require(values, fn, "values");
  return std::vector<T>(values, values + n);
}

}  // namespace

extern "C" {

cairn_status* cairn_op_run(cairn_context* ctx, const char* op, cairn_tensor* const* inputs, size_t n_inputs,
                           const cairn_attr* attrs, size_t n_attrs, cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  run_op_checked(ctx, op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs, "cairn_op_run");
  CAIRN_API_END_NAMED_BY_MESSAGE
}

cairn_status* cairn_op_run_attrs(cairn_context* ctx, const char* op, cairn_tensor* const* inputs, size_t n_inputs,
                                 const cairn_op_attrs* attrs, cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  const cairn_attr* view = attrs ? attrs->view.data() : nullptr;
  size_t n = attrs ? attrs->view.size() : 0;
  run_op_checked(ctx, op, inputs, n_inputs, view, n, outputs, n_outputs, "cairn_op_run_attrs");
  CAIRN_API_END_NAMED_BY_MESSAGE
}

cairn_status* cairn_op_attrs_create(cairn_op_attrs** out) {
  CAIRN_API_BEGIN
  require(out, "cairn_op_attrs_create", "out");
  *out = new cairn_op_attrs();
  CAIRN_API_END
}

size_t cairn_op_attrs_size(const cairn_op_attrs* attrs) { return attrs ? attrs->values.size() : 0; }

void cairn_op_attrs_free(cairn_op_attrs* attrs) { delete attrs; }

cairn_status* cairn_op_attrs_set_int(cairn_op_attrs* attrs, const char* name, int64_t value) {
  return set_attr(attrs, name, "cairn_op_attrs_set_int", [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_INT;
    v.i = value;
  });
}

cairn_status* cairn_op_attrs_set_float(cairn_op_attrs* attrs, const char* name, double value) {
  return set_attr(attrs, name, "cairn_op_attrs_set_float", [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_FLOAT;
    v.f = value;
  });
}

cairn_status* cairn_op_attrs_set_bool(cairn_op_attrs* attrs, const char* name, cairn_bool value) {
  const char* fn = "cairn_op_attrs_set_bool";
  return set_attr(attrs, name, fn, [&](cairn_op_attrs::Value& v) {
    if (value != CAIRN_FALSE && value != CAIRN_TRUE)
      raise(Code::InvalidArgument, "{}: attribute '{}' must be 0 or 1, got {}", fn, name, value);
    v.kind = CAIRN_ATTR_BOOL;
    v.i = value;
  });
}

cairn_status* cairn_op_attrs_set_ints(cairn_op_attrs* attrs, const char* name, const int64_t* values, size_t n) {
  const char* fn = "cairn_op_attrs_set_ints";
  return set_attr(attrs, name, fn, [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_INTS;
    v.ints = copy_array(values, n, fn);
  });
}

cairn_status* cairn_op_attrs_set_floats(cairn_op_attrs* attrs, const char* name, const double* values, size_t n) {
  const char* fn = "cairn_op_attrs_set_floats";
  return set_attr(attrs, name, fn, [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_FLOATS;
    v.floats = copy_array(values, n, fn);
  });
}

cairn_status* cairn_op_attrs_set_string(cairn_op_attrs* attrs, const char* name, const char* value) {
  const char* fn = "cairn_op_attrs_set_string";
  return set_attr(attrs, name, fn, [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_STRING;
    v.s = require(value, fn, "value");
  });
}

cairn_status* cairn_op_attrs_set_dtype(cairn_op_attrs* attrs, const char* name, cairn_dtype value) {
  return set_attr(attrs, name, "cairn_op_attrs_set_dtype", [&](cairn_op_attrs::Value& v) {
    v.kind = CAIRN_ATTR_DTYPE;
    v.dtype = value;
  });
}


cairn_status* cairn_op_num_outputs(const char* op, const cairn_attr* attrs, size_t n_attrs, size_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_op_num_outputs";
  require(out, fn, "out");
  *out = 0;
  require(op, fn, "op");
  if (n_attrs > 0) require(attrs, fn, "attrs");
  const OpDef* def = OpRegistry::global().find(op);
  if (!def) raise(Code::NotFound, "{}: unknown op '{}'", fn, op);
  size_t n = 0;
  for (const ArgDef& o : def->outputs) {
    if (!o.variadic) {
      ++n;
      continue;
    }
    // A variadic output's count is an INT attribute: the caller's value, else its default.
    const AttrDef& a = def->attrs[o.number_attr_index];
    int64_t count = a.has_default ? a.default_i : -1;
    for (size_t i = 0; i < n_attrs; ++i)
      if (attrs[i].name && a.name == attrs[i].name) {
        if (attrs[i].kind != CAIRN_ATTR_INT)
          raise(Code::InvalidArgument, "{}: attribute '{}' must be INT", def->name, a.name);
        count = attrs[i].i;
      }
    if (count < 0) raise(Code::InvalidArgument, "{}: missing required attribute '{}'", def->name, a.name);
    n += static_cast<size_t>(count);
  }
  *out = n;
  CAIRN_API_END
}

size_t cairn_op_count(void) { return OpRegistry::global().list().size(); }

const char* cairn_op_name(size_t i) {
  static const std::vector<const OpDef*> sorted = OpRegistry::global().list();
  return i < sorted.size() ? sorted[i]->name.c_str() : nullptr;
}

cairn_status* cairn_op_registry_json(char** out) {
  CAIRN_API_BEGIN
  require(out, "cairn_op_registry_json", "out");
  *out = nullptr;
  *out = capi::malloc_string(OpRegistry::global().to_json(), "cairn_op_registry_json");
  CAIRN_API_END
}

}  // extern "C"
