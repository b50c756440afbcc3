#include "runtime/graph/graph.h"

#include <cstring>

#include <fmt/format.h>

namespace cairn::graph {

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::Input: return "Input";
    case NodeKind::Constant: return "Constant";
    case NodeKind::Op: return "Op";
    case NodeKind::Read: return "ReadVariable";
    case NodeKind::Assign: return "AssignVariable";
    case NodeKind::Cond: return "Cond";
    case NodeKind::While: return "While";
  }
  return "?";
}

std::vector<TensorSpec> specs_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorSpec> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back({t.dtype(), t.shape()});
  return out;
}

int Graph::add(Node node) {
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

namespace {
std::string attr_text(const AttrDef& def, const AttrValue& v) {
  switch (def.kind) {
    case AttrKind::Int: return std::to_string(v.i);
    case AttrKind::Bool: return v.i ? "true" : "false";
    case AttrKind::Float: return fmt::format("{}", v.f);
    case AttrKind::String: return fmt::format("\"{}\"", v.s);
    case AttrKind::DType: return dtype_name(v.dtype);
    case AttrKind::Ints: return fmt::format("[{}]", fmt::join(v.ints, v.ints + v.n_ints, ","));
    case AttrKind::Floats: return fmt::format("[{}]", fmt::join(v.floats, v.floats + v.n_floats, ","));
  }
  return "?";
}

std::string port_text(const Graph& g, Port p) {
  return g.nodes[p.node].outputs.size() > 1 ? fmt::format("%{}:{}", p.node, p.output) : fmt::format("%{}", p.node);
}
}  // namespace

namespace {
bool same_attrs(const Node& a, const Node& b) {
  const Attrs& x = a.attrs->attrs();
  const Attrs& y = b.attrs->attrs();
  for (size_t k = 0; k < a.def->attrs.size(); ++k) {
    const int i = static_cast<int>(k);
    if (attr_text(a.def->attrs[k], x.at(i)) != attr_text(a.def->attrs[k], y.at(i))) return false;
  }
  return true;
}

bool same_value(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || a.nbytes() != b.nbytes()) return false;
  if (!a.device()->is_host() || !b.device()->is_host()) return a.buffer() == b.buffer();  // placed: be strict
  return a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

bool same_node(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.def != b.def || a.index != b.index || a.variable.get() != b.variable.get() ||
      a.max_iterations != b.max_iterations || a.outputs.size() != b.outputs.size() ||
      a.branches.size() != b.branches.size() || !(a.inputs == b.inputs))
    return false;
  for (size_t i = 0; i < a.outputs.size(); ++i)
    if (a.outputs[i].dtype != b.outputs[i].dtype || a.outputs[i].shape.rank() != b.outputs[i].shape.rank())
      return false;
  if (a.kind == NodeKind::Op && !same_attrs(a, b)) return false;
  if (a.kind == NodeKind::Constant && !same_value(a.value, b.value)) return false;
  for (size_t i = 0; i < a.branches.size(); ++i)
    if (!same_except_shapes(*a.branches[i], *b.branches[i])) return false;
  return true;
}
}  // namespace

bool same_except_shapes(const Graph& a, const Graph& b) {
  if (a.num_inputs != b.num_inputs || a.nodes.size() != b.nodes.size() || !(a.outputs == b.outputs)) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (!same_node(a.nodes[i], b.nodes[i])) return false;
  return true;
}

bool Graph::has_side_effects() const {
  for (const Node& n : nodes) {
    if (n.kind == NodeKind::Assign || (n.kind == NodeKind::Op && n.def->has_side_effects())) return true;
    for (const auto& b : n.branches)
      if (b->has_side_effects()) return true;
  }
  return false;
}

namespace {
std::string indented(const std::string& text, const char* prefix) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size() - 1;
    out += prefix + text.substr(start, end - start + 1);
    start = end + 1;
  }
  return out;
}
}  // namespace

std::string Graph::dump() const {
  std::string out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::vector<std::string> ins;
    for (Port p : n.inputs) ins.push_back(port_text(*this, p));
    std::string head;
    switch (n.kind) {
      case NodeKind::Input: head = fmt::format("Input[{}]", n.index); break;
      case NodeKind::Constant: head = "Constant"; break;
      case NodeKind::Read: head = fmt::format("ReadVariable '{}'", n.variable->name()); break;
      case NodeKind::Assign: head = fmt::format("AssignVariable '{}'", n.variable->name()); break;
      case NodeKind::Op: {
        head = n.def->name;
        std::vector<std::string> attrs;
        const Attrs& a = n.attrs->attrs();
        for (size_t k = 0; k < n.def->attrs.size(); ++k)
          if (!n.def->attrs[k].inferred)
            attrs.push_back(n.def->attrs[k].name + "=" + attr_text(n.def->attrs[k], a.at(static_cast<int>(k))));
        if (!attrs.empty()) head += fmt::format(" {{{}}}", fmt::join(attrs, ", "));
        break;
      }
      case NodeKind::Cond: head = "Cond"; break;
      case NodeKind::While:
        head = n.max_iterations >= 0 ? fmt::format("While {{max_iterations={}}}", n.max_iterations) : "While";
        break;
    }
    std::vector<std::string> outs;
    for (const TensorSpec& s : n.outputs) outs.push_back(std::string(dtype_name(s.dtype)) + s.shape.str());
    out += fmt::format("%{} = {}({})", i, head, fmt::join(ins, ", "));
    if (!outs.empty()) out += fmt::format(" -> {}", fmt::join(outs, ", "));
    out += "\n";
    static const char* const kCondNames[] = {"then", "else"};
    static const char* const kWhileNames[] = {"cond", "body"};
    for (size_t b = 0; b < n.branches.size(); ++b) {
      out += fmt::format("  {}:\n", n.kind == NodeKind::Cond ? kCondNames[b] : kWhileNames[b]);
      out += indented(n.branches[b]->dump(), "    ");
    }
  }
  std::vector<std::string> results;
  for (Port p : outputs) results.push_back(port_text(*this, p));
  out += fmt::format("return ({})\n", fmt::join(results, ", "));
  return out;
}

}  // namespace cairn::graph
