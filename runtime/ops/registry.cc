#include "runtime/ops/registry.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "runtime/tensor/tensor.h"

namespace cairn {

const char* attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int: return "INT";
    case AttrKind::Float: return "FLOAT";
    case AttrKind::Bool: return "BOOL";
    case AttrKind::Ints: return "INTS";
    case AttrKind::String: return "STRING";
    case AttrKind::DType: return "DTYPE";
    case AttrKind::Floats: return "FLOATS";
  }
  return "UNKNOWN";
}

AttrValue AttrDef::default_value() const {
  AttrValue v;
  v.kind = kind;
  v.i = default_i;
  v.f = default_f;
  v.ints = default_ints.data();
  v.n_ints = default_ints.size();
  v.s = default_s;
  v.dtype = default_dtype;
  v.floats = default_floats.data();
  v.n_floats = default_floats.size();
  return v;
}

const char* ShapeContext::op() const { return def.name.c_str(); }

int OpDef::attr_index(std::string_view attr_name) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].name == attr_name) return static_cast<int>(i);
  return -1;
}

int OpDef::num_outputs(const Attrs& a) const {
  int n = 0;
  for (const ArgDef& o : outputs) n += o.variadic ? static_cast<int>(a.at(o.number_attr_index).i) : 1;
  return n;
}

const AttrValue& Attrs::get(std::string_view name) const {
  int idx = def_->attr_index(name);
  if (idx < 0) raise(Code::Internal, "{}: schema has no attribute '{}'", def_->name, name);
  return at(idx);
}

Tensor& KernelContext::allocate_output(int i, DType dtype, const Shape& shape) const {
  outputs[i] = Tensor::allocate(device, dtype, shape);
  return outputs[i];
}

// FNV-1a: op names are short, and std::hash's general-purpose byte hash costs several times more
// on every eager call.
struct OpNameHash {
  size_t operator()(std::string_view s) const noexcept {
    uint64_t h = 14695981039346656037ull;
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct OpRegistry::Impl {
  std::deque<OpDef> defs;  // stable addresses
  std::deque<std::string> alias_names;
  std::unordered_map<std::string_view, OpDef*, OpNameHash> by_name;
  std::vector<std::pair<std::string, std::function<void(OpDef&)>>> pending_updates;
  std::vector<std::pair<std::string, std::string>> pending_aliases;

  OpDef* lookup(std::string_view name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

OpRegistry& OpRegistry::global() {
  static OpRegistry* registry = new OpRegistry();  // never destroyed: kernels may run at exit
  return *registry;
}

OpRegistry::Impl& OpRegistry::impl() const {
  static Impl* impl = new Impl();
  return *impl;
}

const OpDef* OpRegistry::find(std::string_view name) const { return impl().lookup(name); }

const OpDef& OpRegistry::get(std::string_view name) const {
  const OpDef* d = find(name);
  if (!d) raise(Code::NotFound, "unknown op '{}'", name);
  return *d;
}

std::vector<const OpDef*> OpRegistry::list() const {
  std::vector<const OpDef*> out;
  for (const OpDef& d : impl().defs) out.push_back(&d);
  std::sort(out.begin(), out.end(), [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  return out;
}

namespace {
// Fills ArgDef::type_attr_index / number_attr_index; a schema naming a missing attribute is a bug.
void resolve_arg_indices(OpDef& def) {
  auto resolve = [&](ArgDef& arg) {
    if (!arg.type_attr.empty()) {
      arg.type_attr_index = def.attr_index(arg.type_attr);
      if (arg.type_attr_index < 0 || def.attrs[arg.type_attr_index].kind != AttrKind::DType)
        raise(Code::Internal, "op '{}': argument '{}' names missing dtype attribute '{}'", def.name, arg.name, arg.type_attr);
    }
    if (!arg.number_attr.empty()) {
      arg.number_attr_index = def.attr_index(arg.number_attr);
      if (arg.number_attr_index < 0 || def.attrs[arg.number_attr_index].kind != AttrKind::Int)
        raise(Code::Internal, "op '{}': argument '{}' names missing int attribute '{}'", def.name, arg.name, arg.number_attr);
    }
  };
  for (ArgDef& a : def.inputs) resolve(a);
  for (ArgDef& a : def.outputs) resolve(a);
}
}  // namespace

void OpRegistry::add(OpDef def) {
  Impl& im = impl();
  if (im.lookup(def.name)) raise(Code::AlreadyExists, "op '{}' is registered twice", def.name);
  if (def.attrs.size() > static_cast<size_t>(kMaxAttrs))
    raise(Code::Internal, "op '{}' has more than {} attributes", def.name, kMaxAttrs);
  resolve_arg_indices(def);
  im.defs.push_back(std::move(def));
  OpDef* d = &im.defs.back();
  im.by_name[d->name] = d;
  for (auto it = im.pending_updates.begin(); it != im.pending_updates.end();) {
    if (it->first == d->name) {
      it->second(*d);
      it = im.pending_updates.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = im.pending_aliases.begin(); it != im.pending_aliases.end();) {
    if (it->second == d->name) {
      im.alias_names.push_back(it->first);
      im.by_name[im.alias_names.back()] = d;
      it = im.pending_aliases.erase(it);
    } else {
      ++it;
    }
  }
}

void OpRegistry::add_alias(const std::string& alias, const std::string& target) {
  Impl& im = impl();
  if (OpDef* d = im.lookup(target)) {
    im.alias_names.push_back(alias);
    im.by_name[im.alias_names.back()] = d;
  } else {
    im.pending_aliases.emplace_back(alias, target);
  }
}

void OpRegistry::update(const std::string& op, std::function<void(OpDef&)> fn) {
  Impl& im = impl();
  if (OpDef* d = im.lookup(op)) fn(*d);
  else im.pending_updates.emplace_back(op, std::move(fn));
}

void OpRegistry::add_kernel(const std::string& op, DeviceKind device, KernelFn fn) {
  update(op, [device, fn](OpDef& d) { d.kernels[static_cast<int>(device)] = fn; });
}

void OpRegistry::set_gradient(const std::string& op, GradientFn fn) {
  update(op, [fn](OpDef& d) { d.gradient = fn; });
}

void OpRegistry::set_not_differentiable(const std::string& op) {
  update(op, [](OpDef& d) { d.differentiable = false; });
}

namespace {
std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') { out += '\\'; out += c; }
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += c;
  }
  return out;
}

std::string dtype_list_json(DTypeSet set) {
  std::string out = "[";
  bool first = true;
  for (int v = 0; v < 32; ++v) {
    if (!(set & (DTypeSet{1} << v))) continue;
    if (!first) out += ',';
    first = false;
    out += fmt::format("\"{}\"", dtype_name(static_cast<DType>(v)));
  }
  return out + "]";
}

std::string arg_json(const ArgDef& a) {
  std::string out = fmt::format("{{\"name\":\"{}\"", json_escape(a.name));
  if (!a.type_attr.empty()) out += fmt::format(",\"type_attr\":\"{}\"", a.type_attr);
  else out += fmt::format(",\"dtype\":\"{}\"", dtype_name(a.fixed_dtype));
  if (a.variadic) out += ",\"variadic\":true";
  if (!a.number_attr.empty()) out += fmt::format(",\"number_attr\":\"{}\"", a.number_attr);
  return out + "}";
}

std::string default_json(const AttrDef& a) {
  switch (a.kind) {
    case AttrKind::Int: return std::to_string(a.default_i);
    case AttrKind::Bool: return a.default_i ? "true" : "false";
    case AttrKind::Float: return fmt::format("{}", a.default_f);
    case AttrKind::String: return fmt::format("\"{}\"", json_escape(a.default_s));
    case AttrKind::DType: return fmt::format("\"{}\"", dtype_name(a.default_dtype));
    case AttrKind::Ints: return fmt::format("[{}]", fmt::join(a.default_ints, ","));
    case AttrKind::Floats: return fmt::format("[{}]", fmt::join(a.default_floats, ","));
  }
  return "null";
}

std::string attr_json(const AttrDef& a) {
  std::string out = fmt::format("{{\"name\":\"{}\",\"kind\":\"{}\"", json_escape(a.name), attr_kind_name(a.kind));
  if (a.has_default) out += ",\"default\":" + default_json(a);
  if (a.inferred) out += ",\"inferred\":true";
  if (a.kind == AttrKind::DType) out += ",\"allowed_dtypes\":" + dtype_list_json(a.allowed_dtypes);
  if (!a.allowed_strings.empty()) {
    out += ",\"allowed_values\":[";
    for (size_t i = 0; i < a.allowed_strings.size(); ++i)
      out += fmt::format("{}\"{}\"", i ? "," : "", json_escape(a.allowed_strings[i]));
    out += "]";
  }
  return out + "}";
}
}  // namespace

std::string OpRegistry::to_json() const {
  std::string out = "[";
  bool first_op = true;
  for (const OpDef* d : list()) {
    if (!first_op) out += ",\n";
    first_op = false;
    out += fmt::format("{{\"name\":\"{}\",\"summary\":\"{}\",\"inputs\":[", d->name, json_escape(d->summary));
    for (size_t i = 0; i < d->inputs.size(); ++i) out += (i ? "," : "") + arg_json(d->inputs[i]);
    out += "],\"outputs\":[";
    for (size_t i = 0; i < d->outputs.size(); ++i) out += (i ? "," : "") + arg_json(d->outputs[i]);
    out += "],\"attrs\":[";
    for (size_t i = 0; i < d->attrs.size(); ++i) out += (i ? "," : "") + attr_json(d->attrs[i]);
    out += "]}";
  }
  return out + "]";
}

// ---- OpBuilder ----

OpBuilder::OpBuilder(std::string name) { def.name = std::move(name); }
OpBuilder& OpBuilder::summary(std::string text) { def.summary = std::move(text); return *this; }

OpBuilder& OpBuilder::input(std::string name, std::string type_attr) {
  def.inputs.push_back({std::move(name), std::move(type_attr), DType::Invalid, false, ""});
  return *this;
}
OpBuilder& OpBuilder::input(std::string name, DType fixed) {
  def.inputs.push_back({std::move(name), "", fixed, false, ""});
  return *this;
}
OpBuilder& OpBuilder::variadic_input(std::string name, std::string type_attr) {
  def.inputs.push_back({std::move(name), std::move(type_attr), DType::Invalid, true, ""});
  return *this;
}
OpBuilder& OpBuilder::output(std::string name, std::string type_attr) {
  def.outputs.push_back({std::move(name), std::move(type_attr), DType::Invalid, false, ""});
  return *this;
}
OpBuilder& OpBuilder::output(std::string name, DType fixed) {
  def.outputs.push_back({std::move(name), "", fixed, false, ""});
  return *this;
}
OpBuilder& OpBuilder::variadic_output(std::string name, std::string type_attr, std::string number_attr) {
  def.outputs.push_back({std::move(name), std::move(type_attr), DType::Invalid, true, std::move(number_attr)});
  return *this;
}

AttrDef& OpBuilder::add_attr(std::string name, AttrKind kind) {
  def.attrs.emplace_back();
  AttrDef& a = def.attrs.back();
  a.name = std::move(name);
  a.kind = kind;
  return a;
}

OpBuilder& OpBuilder::type_attr(std::string name, DTypeSet allowed) {
  AttrDef& a = add_attr(std::move(name), AttrKind::DType);
  a.inferred = true;
  a.allowed_dtypes = allowed;
  return *this;
}
OpBuilder& OpBuilder::dtype_attr(std::string name, DTypeSet allowed, DType default_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::DType);
  a.allowed_dtypes = allowed;
  a.has_default = true;
  a.default_dtype = default_value;
  return *this;
}
OpBuilder& OpBuilder::dtype_attr_required(std::string name, DTypeSet allowed) {
  add_attr(std::move(name), AttrKind::DType).allowed_dtypes = allowed;
  return *this;
}
OpBuilder& OpBuilder::int_attr(std::string name, int64_t default_value, int64_t min_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::Int);
  a.has_default = true;
  a.default_i = default_value;
  a.min_int = min_value;
  return *this;
}
OpBuilder& OpBuilder::int_attr_required(std::string name, int64_t min_value) {
  add_attr(std::move(name), AttrKind::Int).min_int = min_value;
  return *this;
}
OpBuilder& OpBuilder::bool_attr(std::string name, bool default_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::Bool);
  a.has_default = true;
  a.default_i = default_value ? 1 : 0;
  return *this;
}
OpBuilder& OpBuilder::float_attr(std::string name, double default_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::Float);
  a.has_default = true;
  a.default_f = default_value;
  return *this;
}
OpBuilder& OpBuilder::float_attr_required(std::string name) {
  add_attr(std::move(name), AttrKind::Float);
  return *this;
}
OpBuilder& OpBuilder::ints_attr(std::string name, std::vector<int64_t> default_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::Ints);
  a.has_default = true;
  a.default_ints = std::move(default_value);
  return *this;
}
OpBuilder& OpBuilder::ints_attr_required(std::string name) {
  add_attr(std::move(name), AttrKind::Ints);
  return *this;
}
OpBuilder& OpBuilder::floats_attr(std::string name, std::vector<double> default_value) {
  AttrDef& a = add_attr(std::move(name), AttrKind::Floats);
  a.has_default = true;
  a.default_floats = std::move(default_value);
  return *this;
}
OpBuilder& OpBuilder::string_attr(std::string name, std::string default_value, std::vector<std::string> allowed) {
  AttrDef& a = add_attr(std::move(name), AttrKind::String);
  a.has_default = true;
  a.default_s = std::move(default_value);
  a.allowed_strings = std::move(allowed);
  return *this;
}
OpBuilder& OpBuilder::string_attr_required(std::string name, std::vector<std::string> allowed) {
  add_attr(std::move(name), AttrKind::String).allowed_strings = std::move(allowed);
  return *this;
}
OpBuilder& OpBuilder::shape(ShapeFn fn) { def.shape_fn = fn; return *this; }
OpBuilder& OpBuilder::dynamic_output_shape() { def.dynamic_output_shape = true; return *this; }
OpBuilder& OpBuilder::random() { def.random = true; return *this; }
OpBuilder& OpBuilder::stateful() { def.stateful = true; return *this; }
OpBuilder& OpBuilder::alias(std::string name) { aliases.push_back(std::move(name)); return *this; }

OpRegistration::OpRegistration(OpBuilder builder) {
  std::string name = builder.def.name;
  OpRegistry::global().add(std::move(builder.def));
  for (const std::string& a : builder.aliases) OpRegistry::global().add_alias(a, name);
}

KernelRegistration::KernelRegistration(const char* op, DeviceKind device, KernelFn fn) {
  OpRegistry::global().add_kernel(op, device, fn);
}

}  // namespace cairn
