#include "runtime/graph/graphdef.h"

#include "runtime/graph/graphdef_model.h"

#include <fmt/format.h>

#include <set>
#include <unordered_map>

namespace cairn::graph {

const char* tf_dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "DT_FLOAT";
    case DType::Float64: return "DT_DOUBLE";
    case DType::Int32: return "DT_INT32";
    case DType::UInt8: return "DT_UINT8";
    case DType::Int16: return "DT_INT16";
    case DType::Int8: return "DT_INT8";
    case DType::String: return "DT_STRING";
    case DType::Complex64: return "DT_COMPLEX64";
    case DType::Int64: return "DT_INT64";
    case DType::Bool: return "DT_BOOL";
    case DType::BFloat16: return "DT_BFLOAT16";
    case DType::Float16: return "DT_HALF";
    case DType::Invalid: break;
  }
  return "DT_INVALID";
}

namespace gdef {

int tf_dtype_enum(DType t) {
  switch (t) {
    case DType::Float32: return 1;
    case DType::Float64: return 2;
    case DType::Int32: return 3;
    case DType::UInt8: return 4;
    case DType::Int16: return 5;
    case DType::Int8: return 6;
    case DType::String: return 7;
    case DType::Complex64: return 8;
    case DType::Int64: return 9;
    case DType::Bool: return 10;
    case DType::BFloat16: return 14;
    case DType::Float16: return 19;
    case DType::Invalid: break;
  }
  return 0;
}

namespace {

std::vector<int64_t> dims_of(const Shape& s) {
  std::vector<int64_t> d(static_cast<size_t>(s.rank()));
  for (int k = 0; k < s.rank(); ++k) d[static_cast<size_t>(k)] = s.dim(k);
  return d;
}

Value type_value(DType t) {
  Value v;
  v.kind = Value::Kind::Type;
  v.type = t;
  return v;
}
Value shape_value(const Shape& s) {
  Value v;
  v.kind = Value::Kind::Shape;
  v.dims = dims_of(s);
  return v;
}
Value string_value(std::string s) {
  Value v;
  v.kind = Value::Kind::String;
  v.s = std::move(s);
  return v;
}
Value func_value(std::string name) {
  Value v;
  v.kind = Value::Kind::Func;
  v.s = std::move(name);
  return v;
}
Value int_value(int64_t i) {
  Value v;
  v.i = i;
  return v;
}
Value types_value(const std::vector<TensorSpec>& specs) {
  Value v;
  v.kind = Value::Kind::Types;
  for (const TensorSpec& s : specs) v.types.push_back(s.dtype);
  return v;
}

Value op_attr(const AttrDef& def, const AttrValue& a) {
  Value v;
  switch (def.kind) {
    case AttrKind::Int: v.kind = Value::Kind::Int; v.i = a.i; break;
    case AttrKind::Bool: v.kind = Value::Kind::Bool; v.i = a.i ? 1 : 0; break;
    case AttrKind::Float: v.kind = Value::Kind::Float; v.f = a.f; break;
    case AttrKind::String: v.kind = Value::Kind::String; v.s = std::string(a.s); break;
    case AttrKind::DType: v.kind = Value::Kind::Type; v.type = a.dtype; break;
    case AttrKind::Ints: v.kind = Value::Kind::Ints; v.ints.assign(a.ints, a.ints + a.n_ints); break;
    case AttrKind::Floats: v.kind = Value::Kind::Floats; v.floats.assign(a.floats, a.floats + a.n_floats); break;
  }
  return v;
}

// Builds the nodes of one graph: the top-level graph, or the body of a library function
// (`function` non-empty), where inputs are the signature's args and results its ret map.
class Builder {
 public:
  Builder(const Graph& g, std::string function, GraphDef& out, std::set<std::string>& function_names)
      : g_(g), function_(std::move(function)), out_(out), function_names_(function_names) {}

  std::vector<NodeDef> run(std::vector<std::pair<std::string, std::string>>* ret) {
    names_.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) node(i);
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      Port p = g_.outputs[k];
      if (ret) {
        ret->emplace_back(fmt::format("output_{}", k), ref(p));
        continue;
      }
      NodeDef n = begin(unique(fmt::format("output_{}", k)), "Identity");
      n.inputs.push_back(ref(p));
      n.attrs.emplace_back("T", type_value(g_.spec(p).dtype));
      shapes(n, {g_.spec(p)});
      nodes_.push_back(std::move(n));
    }
    return std::move(nodes_);
  }

 private:
  void node(size_t i) {
    const Node& n = g_.nodes[i];
    NodeDef d;
    switch (n.kind) {
      case NodeKind::Input:
        names_[i] = fmt::format("input_{}", n.index);
        if (!function_.empty()) return;  // a signature arg, not a node
        d = begin(names_[i] = unique(names_[i]), "Placeholder");
        d.attrs.emplace_back("dtype", type_value(n.outputs[0].dtype));
        d.attrs.emplace_back("shape", shape_value(n.outputs[0].shape));
        break;
      case NodeKind::Constant: {
        d = begin(names_[i] = unique(fmt::format("const_{}", i)), "Const");
        d.attrs.emplace_back("dtype", type_value(n.outputs[0].dtype));
        Value t;
        t.kind = Value::Kind::Tensor;
        t.type = n.outputs[0].dtype;
        t.dims = dims_of(n.outputs[0].shape);
        d.attrs.emplace_back("value", std::move(t));
        break;
      }
      case NodeKind::Read:
      case NodeKind::Assign: {
        const bool read = n.kind == NodeKind::Read;
        const std::string h = handle(n.variable.get());  // before this node
        d = begin(names_[i] = unique(fmt::format("{}/{}_{}", h, read ? "Read" : "Assign", i)),
                  read ? "ReadVariableOp" : "AssignVariableOp");
        d.inputs.push_back(h);
        if (!read) d.inputs.push_back(ref(n.inputs[0]));
        stateful(d, names_[i]);
        d.attrs.emplace_back("dtype", type_value(n.variable->dtype()));
        break;
      }
      case NodeKind::Op: {
        d = begin(names_[i] = unique(fmt::format("{}_{}", n.def->name, i)), n.def->name);
        for (Port p : n.inputs) d.inputs.push_back(ref(p));
        const Attrs& a = n.attrs->attrs();
        for (size_t k = 0; k < n.def->attrs.size(); ++k)
          d.attrs.emplace_back(n.def->attrs[k].name, op_attr(n.def->attrs[k], a.at(static_cast<int>(k))));
        break;
      }
      case NodeKind::Cond:
      case NodeKind::While: {
        // TensorFlow's functional control-flow ops (If, While) naming their subgraphs, which are
        // FunctionDefs in the library.
        const bool cond = n.kind == NodeKind::Cond;
        d = begin(names_[i] = unique(fmt::format("{}_{}", cond ? "If" : "While", i)), cond ? "If" : "While");
        for (Port p : n.inputs) d.inputs.push_back(ref(p));
        std::vector<TensorSpec> in;
        for (Port p : n.inputs) in.push_back(g_.spec(p));
        const char* const suffix[2][2] = {{"cond", "body"}, {"then", "else"}};
        std::string fn[2];
        for (int b = 0; b < 2 && static_cast<size_t>(b) < n.branches.size(); ++b)
          fn[b] = function(*n.branches[static_cast<size_t>(b)], names_[i] + "_" + suffix[cond][b],
                           std::vector<TensorSpec>(in.begin() + (cond ? 1 : 0), in.end()));
        if (cond) {
          d.attrs.emplace_back("Tcond", type_value(in[0].dtype));
          d.attrs.emplace_back("Tin", types_value(std::vector<TensorSpec>(in.begin() + 1, in.end())));
          d.attrs.emplace_back("Tout", types_value(n.outputs));
          d.attrs.emplace_back("then_branch", func_value(fn[0]));
          d.attrs.emplace_back("else_branch", func_value(fn[1]));
        } else {
          d.attrs.emplace_back("T", types_value(in));
          d.attrs.emplace_back("cond", func_value(fn[0]));
          d.attrs.emplace_back("body", func_value(fn[1]));
          d.attrs.emplace_back("parallel_iterations", int_value(10));
        }
        break;
      }
    }
    shapes(d, n.outputs);
    nodes_.push_back(std::move(d));
  }

  // Adds `sub` (taking `args`) to the library as a function named after `base` (unique); returns
  // its name.
  std::string function(const Graph& sub, const std::string& base, const std::vector<TensorSpec>& args) {
    const std::string full = function_.empty() ? base : function_ + "__" + base;
    std::string name = full;
    for (int k = 1; !function_names_.insert(name).second; ++k) name = fmt::format("{}_{}", full, k);
    FunctionDef f;
    f.name = name;
    for (size_t k = 0; k < args.size(); ++k) f.inputs.push_back({fmt::format("input_{}", k), args[k].dtype});
    for (size_t k = 0; k < sub.outputs.size(); ++k)
      f.outputs.push_back({fmt::format("output_{}", k), sub.spec(sub.outputs[k]).dtype});
    // Nested subgraphs are added to the library while the body is built, before this function.
    f.nodes = Builder(sub, name, out_, function_names_).run(&f.ret);
    out_.library.push_back(std::move(f));
    return name;
  }

  // The VarHandleOp of `v`, added the first time a node uses it (before that node).
  std::string handle(const Variable* v) {
    auto it = handles_.find(v);
    if (it != handles_.end()) return it->second;
    std::string name = v->name();
    if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
    name = unique(name);
    NodeDef d = begin(name, "VarHandleOp");
    d.attrs.emplace_back("dtype", type_value(v->dtype()));
    d.attrs.emplace_back("shape", shape_value(v->shape()));
    d.attrs.emplace_back("shared_name", string_value(v->name()));
    nodes_.push_back(std::move(d));
    handles_.emplace(v, name);
    return name;
  }

  // Reads and writes of variables keep their program order through control inputs.
  void stateful(NodeDef& d, const std::string& name) {
    if (!last_stateful_.empty()) d.inputs.push_back("^" + last_stateful_);
    last_stateful_ = name;
  }

  std::string unique(std::string name) {
    std::string candidate = name;
    for (int k = 1; used_.count(candidate); ++k) candidate = fmt::format("{}_{}", name, k);
    used_.insert(candidate);
    return candidate;
  }

  // A tensor: "node" or "node:k" in a graph; in a function body an arg's name or "node:output:k".
  std::string ref(Port p) const {
    const std::string& name = names_[static_cast<size_t>(p.node)];
    if (!function_.empty())
      return g_.nodes[static_cast<size_t>(p.node)].kind == NodeKind::Input ? name
                                                                           : fmt::format("{}:output:{}", name, p.output);
    return p.output == 0 ? name : fmt::format("{}:{}", name, p.output);
  }

  static NodeDef begin(std::string name, std::string op) {
    NodeDef d;
    d.name = std::move(name);
    d.op = std::move(op);
    return d;
  }

  static void shapes(NodeDef& d, const std::vector<TensorSpec>& specs) {
    if (specs.empty()) return;
    Value v;
    v.kind = Value::Kind::Shapes;
    for (const TensorSpec& s : specs) v.shapes.push_back(dims_of(s.shape));
    d.attrs.emplace_back("_output_shapes", std::move(v));
  }

  const Graph& g_;
  const std::string function_;
  GraphDef& out_;
  std::set<std::string>& function_names_;
  std::vector<NodeDef> nodes_;
  std::vector<std::string> names_;
  std::unordered_map<const Variable*, std::string> handles_;
  std::set<std::string> used_;
  std::string last_stateful_;
};

}  // namespace

GraphDef build_graphdef(const Graph& graph) {
  GraphDef out;
  std::set<std::string> function_names;
  out.nodes = Builder(graph, "", out, function_names).run(nullptr);
  return out;
}

}  // namespace gdef

namespace {

// A protobuf text string literal: quotes, backslashes and non-printable bytes escaped (octal).
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += {'\\', static_cast<char>(c)};
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c >= 0x7f) out += fmt::format("\\{:03o}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string shape_text(const std::vector<int64_t>& dims, const char* field = "shape") {
  std::string out = fmt::format("{} {{", field);
  for (int64_t d : dims) out += fmt::format(" dim {{ size: {} }}", d);
  return out + " }";
}

std::string value_text(const gdef::Value& v) {
  using K = gdef::Value::Kind;
  std::string out;
  switch (v.kind) {
    case K::Int: return fmt::format("i: {}", v.i);
    case K::Bool: return v.i ? "b: true" : "b: false";
    case K::Float: return fmt::format("f: {}", v.f);
    case K::String: return "s: " + quoted(v.s);
    case K::Type: return fmt::format("type: {}", tf_dtype_name(v.type));
    case K::Shape: return shape_text(v.dims);
    case K::Tensor:
      return fmt::format("tensor {{ dtype: {} {} }}", tf_dtype_name(v.type), shape_text(v.dims, "tensor_shape"));
    case K::Func: return fmt::format("func {{ name: {} }}", quoted(v.s));
    case K::Ints:
      for (int64_t x : v.ints) out += fmt::format(" i: {}", x);
      break;
    case K::Floats:
      for (double x : v.floats) out += fmt::format(" f: {}", x);
      break;
    case K::Types:
      for (DType t : v.types) out += fmt::format(" type: {}", tf_dtype_name(t));
      break;
    case K::Shapes:
      for (const auto& d : v.shapes) out += " " + shape_text(d);
      break;
  }
  return "list {" + out + " }";
}

// One NodeDef, its fields in GraphDef's order (name, op, inputs, attrs), each line indented by `in`.
std::string node_text(const gdef::NodeDef& n, const std::string& field, const std::string& in) {
  std::string out = fmt::format("{}{} {{\n{}  name: {}\n{}  op: {}\n", in, field, in, quoted(n.name), in, quoted(n.op));
  for (const std::string& i : n.inputs) out += fmt::format("{}  input: {}\n", in, quoted(i));
  for (const auto& [key, value] : n.attrs)
    out += fmt::format("{}  attr {{\n{}    key: {}\n{}    value {{ {} }}\n{}  }}\n", in, in, quoted(key), in,
                       value_text(value), in);
  return out + in + "}\n";
}

std::string function_text(const gdef::FunctionDef& f) {
  std::string out = fmt::format("  function {{\n    signature {{\n      name: {}\n", quoted(f.name));
  for (const auto& a : f.inputs)
    out += fmt::format("      input_arg {{ name: {} type: {} }}\n", quoted(a.name), tf_dtype_name(a.type));
  for (const auto& a : f.outputs)
    out += fmt::format("      output_arg {{ name: {} type: {} }}\n", quoted(a.name), tf_dtype_name(a.type));
  out += "    }\n";
  for (const gdef::NodeDef& n : f.nodes) out += node_text(n, "node_def", "    ");
  for (const auto& [key, value] : f.ret) out += fmt::format("    ret {{ key: {} value: {} }}\n", quoted(key), quoted(value));
  return out + "  }\n";
}

}  // namespace

std::string graphdef_text(const Graph& graph) {
  const gdef::GraphDef g = gdef::build_graphdef(graph);
  std::string out;
  for (const gdef::NodeDef& n : g.nodes) out += node_text(n, "node", "");
  if (!g.library.empty()) {
    out += "library {\n";
    for (const gdef::FunctionDef& f : g.library) out += function_text(f);
    out += "}\n";
  }
  return out + fmt::format("versions {{\n  producer: {}\n}}\n", g.producer);
}

}  // namespace cairn::graph
