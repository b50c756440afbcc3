#include "runtime/graph/export.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/core/version.h"
#include "runtime/ops/attr_store.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/validate.h"
#include "schemas/function_generated.h"

namespace cairn::graph {

namespace {

namespace fb = ::cairn::fn::fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Vector;

std::string spec_text(const TensorSpec& s) { return std::string(dtype_name(s.dtype)) + s.shape.str(); }

bool same_spec(const TensorSpec& a, const TensorSpec& b) { return a.dtype == b.dtype && a.shape == b.shape; }

// `spec` (dims may be -1) accepts a value of dtype and shape `t`.
bool accepts(const TensorSpec& spec, const TensorSpec& t) {
  if (spec.dtype != t.dtype || spec.shape.rank() != t.shape.rank()) return false;
  for (int d = 0; d < spec.shape.rank(); ++d)
    if (spec.shape.dim(d) >= 0 && spec.shape.dim(d) != t.shape.dim(d)) return false;
  return true;
}

// `scope` is the concrete function's index, then "/<node>/<branch>" per enclosing control-flow node.
std::string constant_key(const std::string& scope, size_t node) { return fmt::format("constants/{}/{}", scope, node); }
std::string variable_key(size_t index) { return fmt::format("variables/{}", index); }

// ---- Export ----

class Exporter {
 public:
  explicit Exporter(const std::string& path) : path_(path) {}

  void add_concrete(size_t c, const ConcreteFunction& fn) {
    const Graph& g = fn.graph();
    auto nodes_vec = nodes(std::to_string(c), g);
    auto outputs = ports(g.outputs);
    concretes_.push_back(fb::CreateConcrete(fbb_, specs(fn.signature()), nodes_vec, outputs));
  }

  void write(const std::string& name) {
    std::vector<Offset<fb::Variable>> vars;
    for (size_t k = 0; k < variables_.size(); ++k) {
      const Variable& v = *variables_[k];
      std::string key = variable_key(k);
      entries_.emplace_back(key, v.read());
      auto vname = fbb_.CreateString(v.name());
      auto vkey = fbb_.CreateString(key);
      vars.push_back(fb::CreateVariable(fbb_, vname, vkey, static_cast<int32_t>(v.dtype()), dims(v.shape()), v.trainable()));
    }
    auto vars_vec = fbb_.CreateVector(vars);
    auto concretes = fbb_.CreateVector(concretes_);
    auto fname = fbb_.CreateString(name);
    fbb_.Finish(fb::CreateFunction(fbb_, kFunctionFormatVersion, fname, concretes, vars_vec), kFunctionIdentifier);
    if (fbb_.GetSize() >= FLATBUFFERS_MAX_BUFFER_SIZE)
      raise(Code::InvalidArgument, "{}: function '{}': the graph is too large ({} bytes)", path_, name, fbb_.GetSize());
    entries_.push_back(ckpt::SaveEntry::string_scalar(
        kFunctionKey, std::string(reinterpret_cast<const char*>(fbb_.GetBufferPointer()), fbb_.GetSize())));
    ckpt::Metadata meta;
    meta.library_version = kVersionString;
    meta.user[kFunctionFileTag] = kFunctionFileKind;
    ckpt::write_checkpoint(path_, ckpt::ObjectGraph{}, entries_, meta);
  }

 private:
  Offset<Vector<int64_t>> dims(const Shape& s) {
    return s.rank() ? fbb_.CreateVector(s.dims(), static_cast<size_t>(s.rank())) : 0;
  }

  Offset<Vector<Offset<fb::TensorSpec>>> specs(const std::vector<TensorSpec>& in) {
    std::vector<Offset<fb::TensorSpec>> out;
    for (const TensorSpec& s : in) out.push_back(fb::CreateTensorSpec(fbb_, static_cast<int32_t>(s.dtype), dims(s.shape)));
    return fbb_.CreateVector(out);
  }

  Offset<Vector<const fb::Port*>> ports(const std::vector<Port>& in) {
    std::vector<fb::Port> out;
    for (Port p : in) out.emplace_back(static_cast<uint32_t>(p.node), static_cast<uint32_t>(p.output));
    return fbb_.CreateVectorOfStructs(out);
  }

  uint32_t variable_index(const Variable* v) {
    auto [it, added] = variable_ids_.emplace(v, static_cast<uint32_t>(variables_.size()));
    if (added) variables_.push_back(v);
    return it->second;
  }

  Offset<Vector<Offset<fb::Attr>>> attrs(const Node& n) {
    std::vector<Offset<fb::Attr>> out;
    const Attrs& a = n.attrs->attrs();
    for (size_t k = 0; k < n.def->attrs.size(); ++k) {
      const AttrDef& d = n.def->attrs[k];
      if (d.inferred) continue;  // the loader infers it from the inputs again
      const AttrValue& v = a.at(static_cast<int>(k));
      auto name = fbb_.CreateString(d.name);
      Offset<flatbuffers::String> s = 0;
      Offset<Vector<int64_t>> ints = 0;
      Offset<Vector<double>> floats = 0;
      if (d.kind == AttrKind::String) s = fbb_.CreateString(v.s.data(), v.s.size());
      if (d.kind == AttrKind::Ints) ints = fbb_.CreateVector(v.ints, v.n_ints);
      if (d.kind == AttrKind::Floats) floats = fbb_.CreateVector(v.floats, v.n_floats);
      out.push_back(fb::CreateAttr(fbb_, name, static_cast<fb::AttrKind>(d.kind), v.i, v.f, s,
                                   static_cast<int32_t>(v.dtype), ints, floats));
    }
    return fbb_.CreateVector(out);
  }

  Offset<Vector<Offset<fb::Node>>> nodes(const std::string& scope, const Graph& g) {
    std::vector<Offset<fb::Node>> out;
    out.reserve(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) out.push_back(node(scope, i, g.nodes[i]));
    return fbb_.CreateVector(out);
  }

  Offset<Vector<Offset<fb::Subgraph>>> branches(const std::string& scope, size_t i, const Node& n) {
    std::vector<Offset<fb::Subgraph>> out;
    for (size_t b = 0; b < n.branches.size(); ++b) {
      auto sub_nodes = nodes(fmt::format("{}/{}/{}", scope, i, b), *n.branches[b]);
      auto sub_outputs = ports(n.branches[b]->outputs);
      out.push_back(fb::CreateSubgraph(fbb_, sub_nodes, sub_outputs));
    }
    return fbb_.CreateVector(out);
  }

  Offset<fb::Node> node(const std::string& scope, size_t i, const Node& n) {
    Offset<flatbuffers::String> op = 0, key = 0;
    Offset<Vector<Offset<fb::Attr>>> node_attrs = 0;
    Offset<Vector<Offset<fb::Subgraph>>> subgraphs = 0;
    uint32_t variable = 0;
    fb::NodeKind kind = fb::NodeKind::INPUT;
    switch (n.kind) {
      case NodeKind::Input: kind = fb::NodeKind::INPUT; break;
      case NodeKind::Constant: {
        kind = fb::NodeKind::CONSTANT;
        if (dtype_size(n.value.dtype()) == 0)
          raise(Code::Unimplemented, "{}: concrete function {} node {} is a {} constant; only numeric and bool constants "
                "can be exported", path_, scope, i, dtype_name(n.value.dtype()));
        std::string k = constant_key(scope, i);
        entries_.emplace_back(k, n.value);
        key = fbb_.CreateString(k);
        break;
      }
      case NodeKind::Op:
        kind = fb::NodeKind::OP;
        op = fbb_.CreateString(n.def->name);
        node_attrs = attrs(n);
        break;
      case NodeKind::Read: kind = fb::NodeKind::READ_VARIABLE; variable = variable_index(n.variable.get()); break;
      case NodeKind::Assign: kind = fb::NodeKind::ASSIGN_VARIABLE; variable = variable_index(n.variable.get()); break;
      case NodeKind::Cond:
      case NodeKind::While:
        kind = n.kind == NodeKind::Cond ? fb::NodeKind::COND : fb::NodeKind::WHILE;
        subgraphs = branches(scope, i, n);
        break;
    }
    auto inputs = ports(n.inputs);
    auto outputs = specs(n.outputs);
    fb::NodeBuilder b(fbb_);
    b.add_kind(kind);
    if (!op.IsNull()) b.add_op(op);
    if (!node_attrs.IsNull()) b.add_attrs(node_attrs);
    b.add_inputs(inputs);
    b.add_outputs(outputs);
    b.add_input_index(static_cast<uint32_t>(n.index));
    if (!key.IsNull()) b.add_constant_key(key);
    b.add_variable(variable);
    if (!subgraphs.IsNull()) b.add_branches(subgraphs);
    if (n.kind == NodeKind::While) b.add_max_iterations(n.max_iterations);
    return b.Finish();
  }

  std::string path_;
  FlatBufferBuilder fbb_{4096};
  std::vector<Offset<fb::Concrete>> concretes_;
  std::vector<ckpt::SaveEntry> entries_;
  std::vector<const Variable*> variables_;  // kept alive by the concrete functions' nodes
  std::unordered_map<const Variable*, uint32_t> variable_ids_;
};

}  // namespace

void export_concretes(const std::string& name, const std::vector<std::shared_ptr<const ConcreteFunction>>& concretes,
                      const std::string& path) {
  if (path.empty()) raise(Code::InvalidArgument, "export of function '{}': empty path", name);
  if (concretes.empty())
    raise(Code::FailedPrecondition, "{}: function '{}' has no traces yet; call it once per signature to export",
          path, name);
  for (const auto& c : concretes)
    if (!c->static_inputs().empty())
      raise(Code::Unimplemented,
            "{}: function '{}' has static inputs, whose values an exported file cannot select between yet; export a "
            "function without static inputs",
            path, name);
  Exporter ex(path);
  for (size_t c = 0; c < concretes.size(); ++c) ex.add_concrete(c, *concretes[c]);
  ex.write(name);
}

void export_function(const Function& fn, const std::string& path) { export_concretes(fn.name(), fn.concretes(), path); }

// ---- Load ----

namespace {

namespace fb = ::cairn::fn::fb;
using flatbuffers::Offset;
using flatbuffers::Vector;

// Where in the file something failed, for messages.
struct Where {
  const std::string& path;
  size_t concrete = 0;
  size_t node = 0;
  std::string op;
  std::string scope;  // "node 3 branch 1 " per enclosing control-flow node
  std::string str() const {
    return op.empty() ? fmt::format("{}: concrete function {} {}node {}", path, concrete, scope, node)
                      : fmt::format("{}: concrete function {} {}node {} ({})", path, concrete, scope, node, op);
  }
};

// 8-byte vectors may sit 4-byte aligned in FlatBuffers 2.0.8 (its verifier checks 4), so copy.
Shape read_shape(const Vector<int64_t>* dims, bool allow_unknown, const std::string& where) {
  Shape s;
  if (dims == nullptr) return s;
  if (dims->size() > static_cast<flatbuffers::uoffset_t>(kMaxRank))
    raise(Code::DataLoss, "{}: rank {} (at most {})", where, dims->size(), kMaxRank);
  int64_t d[kMaxRank];
  if (dims->size()) std::memcpy(d, dims->Data(), dims->size() * sizeof(int64_t));
  if (allow_unknown) {
    for (flatbuffers::uoffset_t i = 0; i < dims->size(); ++i) {
      if (d[i] < -1) raise(Code::DataLoss, "{}: dimension {} is {}", where, i, d[i]);
      s.push_back(d[i]);
    }
    return s;
  }
  try {
    return Shape::from(d, dims->size(), "shape");
  } catch (const Error& e) {
    raise(Code::DataLoss, "{}: invalid {}", where, e.message());
  }
}

TensorSpec read_spec(const fb::TensorSpec* s, bool allow_unknown, const std::string& where) {
  TensorSpec out;
  out.dtype = static_cast<DType>(s->dtype());
  if (!dtype_is_valid(out.dtype)) raise(Code::DataLoss, "{}: invalid dtype {}", where, s->dtype());
  out.shape = read_shape(s->shape(), allow_unknown, where);
  return out;
}

// Owns what the NamedAttrs of one op node borrow while its call is resolved.
struct AttrScratch {
  std::vector<std::vector<int64_t>> ints;
  std::vector<std::vector<double>> floats;
  std::vector<NamedAttr> named;
};

void read_attrs(const OpDef& def, const Vector<Offset<fb::Attr>>* in, AttrScratch& scratch, const Where& w) {
  if (in == nullptr) return;
  scratch.ints.reserve(in->size());
  scratch.floats.reserve(in->size());
  for (const fb::Attr* a : *in) {
    std::string_view name(a->name()->c_str(), a->name()->size());
    int k = def.attr_index(name);
    if (k < 0) raise(Code::InvalidArgument, "{}: op {} has no attribute '{}'", w.str(), def.name, name);
    const AttrDef& d = def.attrs[static_cast<size_t>(k)];
    if (static_cast<int>(a->kind()) != static_cast<int>(d.kind))
      raise(Code::InvalidArgument, "{}: attribute '{}' is stored as kind {} but op {} declares {}", w.str(), name,
            static_cast<int>(a->kind()), def.name, attr_kind_name(d.kind));
    AttrValue v;
    v.kind = d.kind;
    v.i = a->i();
    v.f = a->f();
    v.dtype = static_cast<DType>(a->dtype());
    if (d.kind == AttrKind::Bool && v.i != 0 && v.i != 1)
      raise(Code::DataLoss, "{}: bool attribute '{}' holds {}", w.str(), name, v.i);
    if (d.kind == AttrKind::String && a->s()) v.s = std::string_view(a->s()->c_str(), a->s()->size());
    if (d.kind == AttrKind::Ints && a->ints()) {
      scratch.ints.emplace_back(a->ints()->size());
      if (a->ints()->size()) std::memcpy(scratch.ints.back().data(), a->ints()->Data(), a->ints()->size() * sizeof(int64_t));
      v.ints = scratch.ints.back().data();
      v.n_ints = scratch.ints.back().size();
    }
    if (d.kind == AttrKind::Floats && a->floats()) {
      scratch.floats.emplace_back(a->floats()->size());
      if (a->floats()->size())
        std::memcpy(scratch.floats.back().data(), a->floats()->Data(), a->floats()->size() * sizeof(double));
      v.floats = scratch.floats.back().data();
      v.n_floats = scratch.floats.back().size();
    }
    scratch.named.push_back({d.name, v});
  }
}

std::vector<Port> read_ports(const Vector<const fb::Port*>* in, const Graph& g, size_t before, const std::string& where) {
  std::vector<Port> out;
  if (in == nullptr) return out;
  for (const fb::Port* p : *in) {
    if (p->node() >= before || p->output() >= g.nodes[p->node()].outputs.size())
      raise(Code::DataLoss, "{}: reads output {} of node {}, which does not come before it or has no such output", where,
            p->output(), p->node());
    out.push_back({static_cast<int>(p->node()), static_cast<int>(p->output())});
  }
  return out;
}

class Loader {
 public:
  Loader(Context& ctx, const std::string& path) : ctx_(ctx), path_(path), reader_(ckpt::Reader::open(path)) {}

  void load(std::string& name, std::vector<std::shared_ptr<const ConcreteFunction>>& concretes,
            std::vector<Ref<Variable>>& variables) {
    const fb::Function* root = verified_root();
    if (root->format_version() != kFunctionFormatVersion)
      raise(Code::InvalidArgument, "{}: function format version {} is not supported (this library reads {})", path_,
            root->format_version(), kFunctionFormatVersion);
    name = root->name()->str();
    if (name.empty()) raise(Code::DataLoss, "{}: the function has an empty name", path_);
    if (root->variables())
      for (flatbuffers::uoffset_t k = 0; k < root->variables()->size(); ++k)
        variables.push_back(variable(k, root->variables()->Get(k)));
    variables_ = &variables;
    if (!root->concretes() || root->concretes()->size() == 0)
      raise(Code::DataLoss, "{}: function '{}' has no concrete functions", path_, name);
    for (flatbuffers::uoffset_t c = 0; c < root->concretes()->size(); ++c)
      concretes.push_back(concrete(name, c, root->concretes()->Get(c)));
    // Entries no node loaded (the container's object graph, anything a newer writer adds) are
    // still checked, so no damaged byte of a payload goes unnoticed.
    for (const ckpt::TensorInfo& e : reader_.entries())
      if (!loaded_keys_.count(e.key)) reader_.verify(e);
  }

 private:
  const fb::Function* verified_root() {
    const ckpt::Metadata& meta = reader_.metadata();
    auto tag = meta.user.find(kFunctionFileTag);
    const ckpt::TensorInfo* entry = reader_.find(kFunctionKey);
    if (tag == meta.user.end() || tag->second != kFunctionFileKind || entry == nullptr)
      raise(Code::InvalidArgument, "{}: a Cairn checkpoint, not an exported function (no '{}' entry)", path_, kFunctionKey);
    if (entry->dtype != DType::String || entry->codec != ckpt::Codec::None)
      raise(Code::DataLoss, "{}: the '{}' entry is not a raw string", path_, kFunctionKey);
    // Stored raw, so its size is bounded by the file's; checksummed by the reader before use.
    std::string bytes = reader_.load_string(*entry);
    loaded_keys_.insert(kFunctionKey);
    if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE) raise(Code::DataLoss, "{}: the graph is too large", path_);
    graph_bytes_.assign((bytes.size() + 7) / 8, 0);
    if (!bytes.empty()) std::memcpy(graph_bytes_.data(), bytes.data(), bytes.size());
    const uint8_t* data = reinterpret_cast<const uint8_t*>(graph_bytes_.data());
    flatbuffers::Verifier::Options opts;
    opts.max_depth = 64;  // each nested cond or while_loop adds four levels
    opts.max_tables = static_cast<flatbuffers::uoffset_t>(std::min<size_t>(bytes.size() / 4 + 64, 1u << 30));
    opts.check_alignment = true;
    flatbuffers::Verifier verifier(data, bytes.size(), opts);
    if (!fb::VerifyFunctionBuffer(verifier))
      raise(Code::DataLoss, "{}: the '{}' entry is not a valid function graph (FlatBuffers verifier)", path_, kFunctionKey);
    return fb::GetFunction(data);
  }

  Tensor entry_value(const std::string& key, const TensorSpec& want, const std::string& where) {
    const ckpt::TensorInfo* e = reader_.find(key);
    if (e == nullptr) raise(Code::DataLoss, "{}: its value entry '{}' is missing", where, key);
    loaded_keys_.insert(key);
    if (e->dtype != want.dtype || !(e->shape == want.shape))
      raise(Code::DataLoss, "{}: entry '{}' is {}{} but the graph says {}", where, key, dtype_name(e->dtype), e->shape.str(),
            spec_text(want));
    return reader_.load(*e, ctx_.default_device());
  }

  Ref<Variable> variable(size_t k, const fb::Variable* v) {
    std::string where = fmt::format("{}: variable {} ('{}')", path_, k, v->name()->str());
    TensorSpec spec{static_cast<DType>(v->dtype()), read_shape(v->shape(), false, where)};
    if (!dtype_is_valid(spec.dtype) || dtype_size(spec.dtype) == 0)
      raise(Code::DataLoss, "{}: invalid dtype {}", where, v->dtype());
    Tensor value = entry_value(v->value_key()->str(), spec, where);
    std::string full = v->name()->str();
    if (full.size() < 3 || full.compare(full.size() - 2, 2, ":0") != 0)
      raise(Code::InvalidArgument, "{}: a variable name ends in ':0'", where);
    VariableOptions o;
    o.name = full.substr(0, full.size() - 2);
    o.trainable = v->trainable();
    try {
      return Variable::create(ctx_, value, o);
    } catch (const Error& e) {
      raise(Code::InvalidArgument, "{}: {}", where, e.message());
    }
  }

  std::shared_ptr<const ConcreteFunction> concrete(const std::string& name, size_t c, const fb::Concrete* in) {
    std::string where = fmt::format("{}: concrete function {}", path_, c);
    std::vector<TensorSpec> signature;
    if (in->signature())
      for (flatbuffers::uoffset_t i = 0; i < in->signature()->size(); ++i)
        signature.push_back(read_spec(in->signature()->Get(i), true, fmt::format("{} input {}", where, i)));
    Graph g;
    g.num_inputs = static_cast<int>(signature.size());
    if (in->nodes()) {
      g.nodes.reserve(in->nodes()->size());
      for (flatbuffers::uoffset_t i = 0; i < in->nodes()->size(); ++i) {
        Where w{path_, c, i, ""};
        g.add(node(g, signature, w, in->nodes()->Get(i)));
      }
    }
    g.outputs = read_ports(in->outputs(), g, g.nodes.size(), where + " results");
    return std::make_shared<const ConcreteFunction>(name, std::move(signature), std::move(g));
  }

  std::vector<TensorSpec> stored_outputs(const fb::Node* in, const std::string& where) {
    std::vector<TensorSpec> out;
    if (in->outputs())
      for (const fb::TensorSpec* s : *in->outputs()) out.push_back(read_spec(s, false, where));
    return out;
  }

  Node node(const Graph& g, const std::vector<TensorSpec>& signature, Where& w, const fb::Node* in) {
    Node n;
    n.inputs = read_ports(in->inputs(), g, w.node, w.str());
    std::vector<TensorSpec> outs = stored_outputs(in, w.str());
    auto expect_io = [&](size_t n_in, size_t n_out) {
      if (n.inputs.size() != n_in || outs.size() != n_out)
        raise(Code::DataLoss, "{}: a {} node has {} inputs and {} outputs (expected {} and {})", w.str(),
              fb::EnumNameNodeKind(in->kind()), n.inputs.size(), outs.size(), n_in, n_out);
    };
    switch (in->kind()) {
      case fb::NodeKind::INPUT:
        n.kind = NodeKind::Input;
        expect_io(0, 1);
        n.index = static_cast<int>(in->input_index());
        if (in->input_index() >= signature.size() || !accepts(signature[in->input_index()], outs[0]))
          raise(Code::DataLoss, "{}: input {} of type {} does not fit the signature", w.str(), in->input_index(),
                spec_text(outs[0]));
        n.outputs = outs;
        return n;
      case fb::NodeKind::CONSTANT:
        n.kind = NodeKind::Constant;
        expect_io(0, 1);
        if (!in->constant_key()) raise(Code::DataLoss, "{}: a constant without a value key", w.str());
        n.value = entry_value(in->constant_key()->str(), outs[0], w.str());
        n.outputs = outs;
        return n;
      case fb::NodeKind::READ_VARIABLE:
      case fb::NodeKind::ASSIGN_VARIABLE: {
        const bool read = in->kind() == fb::NodeKind::READ_VARIABLE;
        n.kind = read ? NodeKind::Read : NodeKind::Assign;
        expect_io(read ? 0 : 1, read ? 1 : 0);
        if (in->variable() >= variables_->size())
          raise(Code::DataLoss, "{}: refers to variable {} of {}", w.str(), in->variable(), variables_->size());
        n.variable = (*variables_)[in->variable()];
        TensorSpec var{n.variable->dtype(), n.variable->shape()};
        const TensorSpec& seen = read ? outs[0] : g.spec(n.inputs[0]);
        if (!same_spec(var, seen))
          raise(Code::DataLoss, "{}: variable '{}' is {} but the node has {}", w.str(), n.variable->name(), spec_text(var),
                spec_text(seen));
        n.outputs = outs;
        return n;
      }
      case fb::NodeKind::OP: return op_node(g, w, in, std::move(n), outs);
      case fb::NodeKind::COND:
      case fb::NodeKind::WHILE: return control_node(g, w, in, std::move(n), outs);
    }
    raise(Code::DataLoss, "{}: unknown node kind {}", w.str(), static_cast<int>(in->kind()));
  }

  // A Cond or While node and its subgraphs, checked as the tracer checked them (control_flow.h).
  Node control_node(const Graph& g, const Where& w, const fb::Node* in, Node n, const std::vector<TensorSpec>& outs) {
    const bool is_cond = in->kind() == fb::NodeKind::COND;
    n.kind = is_cond ? NodeKind::Cond : NodeKind::While;
    n.max_iterations = in->max_iterations();
    if (n.max_iterations < -1) raise(Code::DataLoss, "{}: max_iterations is {}", w.str(), n.max_iterations);
    if (!in->branches() || in->branches()->size() != 2)
      raise(Code::DataLoss, "{}: a {} node needs two subgraphs", w.str(), fb::EnumNameNodeKind(in->kind()));
    std::vector<TensorSpec> sig;
    for (Port p : n.inputs) sig.push_back(g.spec(p));
    const TensorSpec predicate{DType::Bool, Shape{}};
    if (is_cond) {
      if (sig.empty() || sig[0].dtype != DType::Bool || sig[0].shape.num_elements() != 1)
        raise(Code::DataLoss, "{}: a COND node's first input must be a bool scalar", w.str());
      sig.erase(sig.begin());
    } else {
      bool fits = !outs.empty() && outs.size() <= sig.size();
      for (size_t k = 0; fits && k < outs.size(); ++k) fits = same_spec(outs[k], sig[k]);
      if (!fits) raise(Code::DataLoss, "{}: a WHILE node's outputs must match its first inputs (the loop variables)", w.str());
    }
    for (flatbuffers::uoffset_t b = 0; b < 2; ++b) {
      Where bw = w;
      bw.scope += fmt::format("node {} branch {} ", w.node, b);
      std::shared_ptr<Graph> sub = subgraph(sig, bw, in->branches()->Get(b));
      const bool loop_cond = !is_cond && b == 0;
      const size_t want = loop_cond ? 1 : outs.size();
      bool fits = sub->outputs.size() == want;
      for (size_t k = 0; fits && k < want; ++k) {
        const TensorSpec& got = sub->spec(sub->outputs[k]);
        fits = loop_cond ? got.dtype == DType::Bool && got.shape.num_elements() == 1 : same_spec(got, outs[k]);
      }
      if (!fits)
        raise(Code::DataLoss, "{}: subgraph {} does not return {}", w.str(), b,
              loop_cond ? spec_text(predicate) : "the node's outputs");
      n.branches.push_back(std::move(sub));
    }
    n.outputs = outs;
    return n;
  }

  std::shared_ptr<Graph> subgraph(const std::vector<TensorSpec>& signature, const Where& w, const fb::Subgraph* in) {
    auto g = std::make_shared<Graph>();
    g->num_inputs = static_cast<int>(signature.size());
    if (in->nodes()) {
      g->nodes.reserve(in->nodes()->size());
      for (flatbuffers::uoffset_t i = 0; i < in->nodes()->size(); ++i) {
        Where nw = w;
        nw.node = i;
        nw.op.clear();
        g->add(node(*g, signature, nw, in->nodes()->Get(i)));
      }
    }
    g->outputs = read_ports(in->outputs(), *g, g->nodes.size(), w.str() + "results");
    return g;
  }

  Node op_node(const Graph& g, Where& w, const fb::Node* in, Node n, const std::vector<TensorSpec>& stored) {
    n.kind = NodeKind::Op;
    if (!in->op()) raise(Code::DataLoss, "{}: an op node without an op name", w.str());
    w.op = in->op()->str();
    n.def = OpRegistry::global().find(w.op);
    if (n.def == nullptr)
      raise(Code::InvalidArgument, "{}: unknown op '{}' (not registered in this library; written by a newer Cairn?)",
            w.str(), w.op);
    if (n.def->dynamic_output_shape)
      raise(Code::InvalidArgument, "{}: op {} has value-dependent output shapes and cannot run in a graph", w.str(), w.op);
    AttrScratch scratch;
    read_attrs(*n.def, in->attrs(), scratch, w);
    std::vector<TensorSpec> in_specs;
    for (Port p : n.inputs) in_specs.push_back(g.spec(p));
    Attrs resolved(*n.def);
    std::vector<TensorSpec> outs;
    try {
      resolve_call(*n.def, in_specs.data(), static_cast<int>(in_specs.size()), scratch.named.data(),
                   static_cast<int>(scratch.named.size()), resolved);
      outs.resize(static_cast<size_t>(n.def->num_outputs(resolved)));
      infer_outputs(*n.def, resolved, in_specs.data(), static_cast<int>(in_specs.size()), outs.data(),
                    static_cast<int>(outs.size()));
    } catch (const Error& e) {
      raise(Code::InvalidArgument, "{}: {}", w.str(), e.message());
    }
    if (outs.size() != stored.size())
      raise(Code::DataLoss, "{}: the file lists {} outputs, the op makes {}", w.str(), stored.size(), outs.size());
    for (size_t i = 0; i < outs.size(); ++i)
      if (!same_spec(outs[i], stored[i]))
        raise(Code::DataLoss, "{}: output {} is {} in the file but {} when inferred", w.str(), i, spec_text(stored[i]),
              spec_text(outs[i]));
    n.attrs = std::make_unique<AttrStore>(resolved);
    n.outputs = std::move(outs);
    return n;
  }

  Context& ctx_;
  const std::string& path_;
  ckpt::Reader reader_;
  std::vector<uint64_t> graph_bytes_;  // the graph FlatBuffer, 8-byte aligned for the verifier
  const std::vector<Ref<Variable>>* variables_ = nullptr;
  std::set<std::string> loaded_keys_;
};

}  // namespace

std::shared_ptr<LoadedConcretes> load_concretes(Context& ctx, const std::string& path) {
  if (path.empty()) raise(Code::InvalidArgument, "load of a function: empty path");
  auto out = std::make_shared<LoadedConcretes>();
  Loader loader(ctx, path);
  loader.load(out->name_, out->concretes_, out->variables_);
  return out;
}

std::string LoadedConcretes::signatures() const {
  std::vector<std::string> all;
  for (const auto& c : concretes_) all.push_back("(" + signature_text(c->signature()) + ")");
  return fmt::format("{}", fmt::join(all, "; "));
}

const ConcreteFunction& LoadedConcretes::match(const std::vector<Tensor>& inputs) const {
  std::vector<TensorSpec> given;
  for (const Tensor& t : inputs) given.push_back({t.dtype(), t.shape()});
  const ConcreteFunction* found = nullptr;
  for (const auto& c : concretes_) {
    const std::vector<TensorSpec>& sig = c->signature();
    if (sig.size() != given.size()) continue;
    bool exact = true, ok = true;
    for (size_t i = 0; i < sig.size() && ok; ++i) {
      ok = accepts(sig[i], given[i]);
      exact = exact && same_spec(sig[i], given[i]);
    }
    if (ok && exact) return *c;   // an exact signature wins over one with -1 dimensions
    if (ok && !found) found = c.get();
  }
  if (found) return *found;
  raise(Code::NotFound, "loaded function '{}' has no concrete function for inputs ({}); it has: {}", name_,
        signature_text(given), signatures());
}

HostFunction loaded_host_function(std::shared_ptr<LoadedConcretes> loaded) {
  // Runs while the Function traces: the loaded graph's ops are recorded into the new trace.
  return [loaded](Context& ctx, const std::vector<Tensor>& inputs) { return loaded->match(inputs).run(ctx, inputs); };
}

FunctionOptions loaded_function_options(const LoadedConcretes& loaded) {
  // No input signature, even for one stored concrete function: a call that fits none of them must
  // reach the host function, which raises NotFound listing them. A stored signature with -1
  // dimensions is therefore re-traced per input shape; that replays the stored graph (no host
  // code), so the retrace warning is off.
  (void)loaded;
  FunctionOptions o;
  o.retrace_warning = 0;
  return o;
}

LoadedFunction load_function(Context& ctx, const std::string& path) {
  LoadedFunction out;
  out.loaded = load_concretes(ctx, path);
  out.function = make_ref<Function>(ctx, out.loaded->name(), loaded_host_function(out.loaded),
                                    loaded_function_options(*out.loaded));
  return out;
}

}  // namespace cairn::graph
