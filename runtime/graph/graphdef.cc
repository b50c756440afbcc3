#include "runtime/graph/graphdef.h"

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

std::string shape_proto(const Shape& s) {
  std::string out = "shape {";
  for (int d = 0; d < s.rank(); ++d) out += fmt::format(" dim {{ size: {} }}", s.dim(d));
  return out + " }";
}

std::string attr_value(const AttrDef& def, const AttrValue& v) {
  switch (def.kind) {
    case AttrKind::Int: return fmt::format("i: {}", v.i);
    case AttrKind::Bool: return v.i ? "b: true" : "b: false";
    case AttrKind::Float: return fmt::format("f: {}", v.f);
    case AttrKind::String: return "s: " + quoted(v.s);
    case AttrKind::DType: return fmt::format("type: {}", tf_dtype_name(v.dtype));
    case AttrKind::Ints: {
      std::string out = "list {";
      for (size_t k = 0; k < v.n_ints; ++k) out += fmt::format(" i: {}", v.ints[k]);
      return out + " }";
    }
    case AttrKind::Floats: {
      std::string out = "list {";
      for (size_t k = 0; k < v.n_floats; ++k) out += fmt::format(" f: {}", v.floats[k]);
      return out + " }";
    }
  }
  return "";
}

class Writer {
 public:
  explicit Writer(const Graph& g) : g_(g) {}

  std::string run() {
    names_.resize(g_.nodes.size());
    for (size_t i = 0; i < g_.nodes.size(); ++i) write_node(i);
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      Port p = g_.outputs[k];
      begin(unique(fmt::format("output_{}", k)), "Identity");
      input(ref(p));
      attr("T", fmt::format("type: {}", tf_dtype_name(g_.spec(p).dtype)));
      shapes({g_.spec(p)});
      end();
    }
    out_ += "versions {\n  producer: 27\n}\n";
    return out_;
  }

 private:
  void write_node(size_t i) {
    const Node& n = g_.nodes[i];
    switch (n.kind) {
      case NodeKind::Input:
        begin(names_[i] = unique(fmt::format("input_{}", n.index)), "Placeholder");
        attr("dtype", fmt::format("type: {}", tf_dtype_name(n.outputs[0].dtype)));
        attr("shape", shape_proto(n.outputs[0].shape));
        break;
      case NodeKind::Constant:
        begin(names_[i] = unique(fmt::format("const_{}", i)), "Const");
        attr("dtype", fmt::format("type: {}", tf_dtype_name(n.outputs[0].dtype)));
        attr("value", fmt::format("tensor {{ dtype: {} tensor_{} }}", tf_dtype_name(n.outputs[0].dtype),
                                  shape_proto(n.outputs[0].shape)));
        break;
      case NodeKind::Read: {
        const std::string h = handle(n.variable.get());  // before this node starts
        begin(names_[i] = unique(fmt::format("{}/Read_{}", h, i)), "ReadVariableOp");
        input(h);
        stateful(names_[i]);
        attr("dtype", fmt::format("type: {}", tf_dtype_name(n.variable->dtype())));
        break;
      }
      case NodeKind::Assign: {
        const std::string h = handle(n.variable.get());
        begin(names_[i] = unique(fmt::format("{}/Assign_{}", h, i)), "AssignVariableOp");
        input(h);
        input(ref(n.inputs[0]));
        stateful(names_[i]);
        attr("dtype", fmt::format("type: {}", tf_dtype_name(n.variable->dtype())));
        break;
      }
      case NodeKind::Op: {
        begin(names_[i] = unique(fmt::format("{}_{}", n.def->name, i)), n.def->name);
        for (Port p : n.inputs) input(ref(p));
        const Attrs& a = n.attrs->attrs();
        for (size_t k = 0; k < n.def->attrs.size(); ++k)
          attr(n.def->attrs[k].name, attr_value(n.def->attrs[k], a.at(static_cast<int>(k))));
        break;
      }
      case NodeKind::Cond:
      case NodeKind::While:
        // TensorFlow's functional control-flow ops; their subgraphs are not drawn (TensorBoard
        // draws the node and its edges).
        begin(names_[i] = unique(fmt::format("{}_{}", n.kind == NodeKind::Cond ? "If" : "While", i)),
              n.kind == NodeKind::Cond ? "If" : "While");
        for (Port p : n.inputs) input(ref(p));
        break;
    }
    shapes(n.outputs);
    end();
  }

  // The VarHandleOp of `v`, written the first time a node uses it (before that node begins).
  std::string handle(const Variable* v) {
    auto it = handles_.find(v);
    if (it != handles_.end()) return it->second;
    std::string name = v->name();
    if (name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0) name.resize(name.size() - 2);
    name = unique(name);
    begin(name, "VarHandleOp");
    attr("dtype", fmt::format("type: {}", tf_dtype_name(v->dtype())));
    attr("shape", shape_proto(v->shape()));
    attr("shared_name", "s: " + quoted(v->name()));
    end();
    handles_.emplace(v, name);
    return name;
  }

  // Reads and writes of variables keep their program order through control inputs.
  void stateful(const std::string& name) {
    if (!last_stateful_.empty()) input("^" + last_stateful_);
    last_stateful_ = name;
  }

  std::string unique(std::string name) {
    std::string candidate = name;
    for (int k = 1; used_.count(candidate); ++k) candidate = fmt::format("{}_{}", name, k);
    used_.insert(candidate);
    return candidate;
  }

  std::string ref(Port p) const {
    return p.output == 0 ? names_[p.node] : fmt::format("{}:{}", names_[p.node], p.output);
  }

  void begin(const std::string& name, const std::string& op) {
    pending_ += fmt::format("node {{\n  name: {}\n  op: {}\n", quoted(name), quoted(op));
  }
  void input(const std::string& name) { inputs_ += fmt::format("  input: {}\n", quoted(name)); }
  void attr(const std::string& key, const std::string& value) {
    attrs_ += fmt::format("  attr {{\n    key: {}\n    value {{ {} }}\n  }}\n", quoted(key), value);
  }
  void shapes(const std::vector<TensorSpec>& specs) {
    if (specs.empty()) return;
    std::string list = "list {";
    for (const TensorSpec& s : specs) list += " " + shape_proto(s.shape);
    attr("_output_shapes", list + " }");
  }
  // Fields in GraphDef's order: name, op, inputs, attrs.
  void end() {
    out_ += pending_ + inputs_ + attrs_ + "}\n";
    pending_.clear();
    inputs_.clear();
    attrs_.clear();
  }

  const Graph& g_;
  std::string out_, pending_, inputs_, attrs_;
  std::vector<std::string> names_;
  std::unordered_map<const Variable*, std::string> handles_;
  std::set<std::string> used_;
  std::string last_stateful_;
};

}  // namespace

std::string graphdef_text(const Graph& graph) { return Writer(graph).run(); }

}  // namespace cairn::graph
