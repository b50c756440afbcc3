// The index FlatBuffer: building it from validated entries, and turning untrusted bytes back into
// entries, graph and metadata. Everything the reader later trusts is checked here.
#include <algorithm>
#include <cstring>
#include <limits>

#include "runtime/checkpoint/internal/index.h"
#include "runtime/core/error.h"
#include "schemas/checkpoint_generated.h"

namespace cairn::ckpt {
namespace internal {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using NodesOffset = Offset<flatbuffers::Vector<Offset<fb::ObjectNode>>>;

uint32_t key_position(const std::vector<std::string_view>& sorted_keys, const std::string& key) {
  auto it = std::lower_bound(sorted_keys.begin(), sorted_keys.end(), std::string_view(key));
  if (it == sorted_keys.end() || *it != key)
    raise(Code::InvalidArgument, "checkpoint: an attribute refers to key '{}', which is not being saved", key);
  return static_cast<uint32_t>(it - sorted_keys.begin());
}

NodesOffset build_nodes(FlatBufferBuilder& fbb, const ObjectGraph& graph, const std::vector<std::string_view>& keys) {
  if (graph.nodes.empty()) return 0;
  std::vector<Offset<fb::ObjectNode>> nodes;
  nodes.reserve(graph.nodes.size());
  for (const Node& node : graph.nodes) {
    Offset<flatbuffers::Vector<Offset<fb::ChildEdge>>> children = 0;
    Offset<flatbuffers::Vector<Offset<fb::VariableAttr>>> attributes = 0;
    Offset<flatbuffers::Vector<Offset<fb::SlotRef>>> slots = 0;
    if (!node.children.empty()) {
      std::vector<Offset<fb::ChildEdge>> v;
      for (const ChildEdge& c : node.children) {
        auto name = fbb.CreateString(c.name);
        v.push_back(fb::CreateChildEdge(fbb, name, c.node_id));
      }
      children = fbb.CreateVector(v);
    }
    if (!node.attributes.empty()) {
      std::vector<Offset<fb::VariableAttr>> v;
      for (const Attribute& a : node.attributes) {
        auto name = fbb.CreateString(a.name);
        auto key = fbb.CreateString(a.key);
        v.push_back(fb::CreateVariableAttr(fbb, name, key, key_position(keys, a.key)));
      }
      attributes = fbb.CreateVector(v);
    }
    if (!node.slots.empty()) {
      std::vector<Offset<fb::SlotRef>> v;
      for (const SlotRef& s : node.slots) {
        auto name = fbb.CreateString(s.slot_name);
        v.push_back(fb::CreateSlotRef(fbb, s.optimizer_node, s.variable_node, name, s.slot_node));
      }
      slots = fbb.CreateVector(v);
    }
    nodes.push_back(fb::CreateObjectNode(fbb, node.kind, children, attributes, slots));
  }
  return fbb.CreateVector(nodes);
}

// Copies strings out of an untrusted buffer under a byte budget: a hostile index can point many
// edges at one long string, which would otherwise multiply memory.
class StringBudget {
 public:
  StringBudget(uint64_t bytes, std::string_view path) : left_(bytes), path_(path) {}
  std::string take(const flatbuffers::String* s, const char* part) {
    if (s == nullptr) return std::string();
    if (s->size() > left_) raise(Code::DataLoss, "{}: {}: index strings exceed the index size (shared strings?)", path_, part);
    left_ -= s->size();
    return std::string(s->c_str(), s->size());
  }

 private:
  uint64_t left_;
  std::string_view path_;
};

void convert_nodes(const flatbuffers::Vector<Offset<fb::ObjectNode>>* in, StringBudget& budget, std::vector<Node>& out) {
  if (in == nullptr) return;
  out.resize(in->size());
  for (flatbuffers::uoffset_t i = 0; i < in->size(); ++i) {
    const fb::ObjectNode* n = in->Get(i);
    Node& node = out[i];
    node.kind = n->kind();
    if (auto* v = n->children()) {
      node.children.reserve(v->size());
      for (const fb::ChildEdge* c : *v) node.children.push_back({budget.take(c->name(), "child edge"), c->node_id()});
    }
    if (auto* v = n->attributes()) {
      node.attributes.reserve(v->size());
      for (const fb::VariableAttr* a : *v)
        node.attributes.push_back({budget.take(a->name(), "attribute"), budget.take(a->checkpoint_key(), "attribute")});
    }
    if (auto* v = n->slots()) {
      node.slots.reserve(v->size());
      for (const fb::SlotRef* s : *v)
        node.slots.push_back({s->optimizer_node(), s->variable_node(), budget.take(s->slot_name(), "slot"), s->slot_node()});
    }
  }
}

flatbuffers::Verifier::Options verifier_options(size_t size) {
  flatbuffers::Verifier::Options opts;
  opts.max_depth = 16;
  // Every table takes at least 4 bytes, so this bounds the verifier's work on DAG-shaped input.
  opts.max_tables = static_cast<flatbuffers::uoffset_t>(std::min<size_t>(size / 4 + 64, 1u << 30));
  opts.check_alignment = true;
  opts.check_nested_flatbuffers = false;
  return opts;
}

void check_buffer_size(size_t size, std::string_view path, const char* what) {
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) raise(Code::DataLoss, "{}: {} is too large ({} bytes)", path, what, size);
}

// `a` + `b` <= `limit` without overflow.
bool fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

void check_entry(const TensorInfo& e, uint64_t payload_end, std::string_view path) {
  if (!dtype_is_valid(e.dtype))
    raise(Code::DataLoss, "{}: key '{}' has an invalid dtype ({})", path, e.key, static_cast<int>(e.dtype));
  if (e.codec != Codec::None && e.codec != Codec::Zstd && e.codec != Codec::ZstdShuffle)
    raise(Code::DataLoss, "{}: key '{}' has an unknown codec ({})", path, e.key, static_cast<int>(e.codec));
  if (e.dtype == DType::String) {
    if (e.shape.rank() != 0) raise(Code::DataLoss, "{}: string key '{}' is not a scalar", path, e.key);
    if (e.codec == Codec::ZstdShuffle) raise(Code::DataLoss, "{}: string key '{}' cannot use a byte shuffle", path, e.key);
  } else {
    // Shape::from has already bounded the element count; the product cannot overflow here.
    uint64_t want = static_cast<uint64_t>(e.shape.num_elements()) * dtype_size(e.dtype);
    if (e.raw_size != want)
      raise(Code::DataLoss, "{}: key '{}' has raw size {} but {}{} takes {} bytes", path, e.key, e.raw_size,
            dtype_name(e.dtype), e.shape.str(), want);
  }
  if (e.offset % kPayloadAlignment != 0 || e.offset < kHeaderSize || !fits(e.offset, e.stored_size, payload_end))
    raise(Code::DataLoss, "{}: key '{}' has payload [{}, +{}) outside the payload area [{}, {})", path, e.key, e.offset,
          e.stored_size, kHeaderSize, payload_end);
  if (e.codec == Codec::None) {
    if (e.stored_size != e.raw_size || e.checksum != e.raw_checksum)
      raise(Code::DataLoss, "{}: uncompressed key '{}' has inconsistent sizes or checksums", path, e.key);
  } else if (e.stored_size == 0 || e.raw_size / kMaxZstdExpansion > e.stored_size) {
    raise(Code::DataLoss, "{}: compressed key '{}' claims {} raw bytes from {} stored bytes", path, e.key, e.raw_size,
          e.stored_size);
  }
}

}  // namespace

std::vector<uint8_t> build_index(const std::vector<TensorInfo>& entries, const ObjectGraph& graph,
                                 const Metadata& metadata, uint32_t format_version) {
  std::vector<std::string_view> keys;
  keys.reserve(entries.size());
  for (const TensorInfo& e : entries) keys.push_back(e.key);

  FlatBufferBuilder fbb(1024 + entries.size() * 160);
  std::vector<Offset<fb::TensorEntry>> tensors;
  tensors.reserve(entries.size());
  for (const TensorInfo& e : entries) {
    auto key = fbb.CreateString(e.key);
    Offset<flatbuffers::Vector<int64_t>> shape = 0;
    if (e.shape.rank() > 0) shape = fbb.CreateVector(e.shape.dims(), static_cast<size_t>(e.shape.rank()));
    tensors.push_back(fb::CreateTensorEntry(fbb, key, static_cast<int32_t>(e.dtype), shape, e.offset, e.stored_size,
                                            e.raw_size, static_cast<fb::Codec>(e.codec), e.checksum, e.raw_checksum));
  }
  auto tensors_vec = fbb.CreateVector(tensors);
  NodesOffset nodes = build_nodes(fbb, graph, keys);

  Offset<flatbuffers::String> library_version = 0;
  if (!metadata.library_version.empty()) library_version = fbb.CreateString(metadata.library_version);
  Offset<flatbuffers::Vector<Offset<fb::KeyValue>>> user = 0;
  if (!metadata.user.empty()) {
    std::vector<Offset<fb::KeyValue>> kvs;
    for (const auto& [k, v] : metadata.user) {  // std::map: already sorted by key bytes
      auto ko = fbb.CreateString(k);
      auto vo = fbb.CreateString(v);
      kvs.push_back(fb::CreateKeyValue(fbb, ko, vo));
    }
    user = fbb.CreateVector(kvs);
  }
  auto meta = fb::CreateMetadata(fbb, metadata.save_counter, library_version, user);
  fb::FinishIndexBuffer(fbb, fb::CreateIndex(fbb, format_version, tensors_vec, nodes, meta));
  check_buffer_size(fbb.GetSize(), "checkpoint", "the index");
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

std::string build_object_graph(const ObjectGraph& graph, const std::vector<std::string_view>& sorted_keys) {
  FlatBufferBuilder fbb(256 + graph.nodes.size() * 64);
  NodesOffset nodes = build_nodes(fbb, graph, sorted_keys);
  fbb.Finish(fb::CreateObjectGraph(fbb, nodes), kObjectGraphIdentifier);
  check_buffer_size(fbb.GetSize(), "checkpoint", "the object graph");
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

ParsedIndex parse_index(const uint8_t* data, size_t size, uint64_t payload_end, uint32_t format_version,
                        std::string_view path) {
  check_buffer_size(size, path, "the index");
  flatbuffers::Verifier verifier(data, size, verifier_options(size));
  if (!fb::VerifyIndexBuffer(verifier)) raise(Code::DataLoss, "{}: the index is not a valid checkpoint index", path);
  const fb::Index* index = fb::GetIndex(data);
  if (index->format_version() != format_version)
    raise(Code::DataLoss, "{}: the index says format version {}, the header {}", path, index->format_version(),
          format_version);

  StringBudget budget(size, path);
  ParsedIndex out;
  if (const auto* tensors = index->tensors()) {
    out.entries.reserve(tensors->size());
    for (const fb::TensorEntry* t : *tensors) {
      TensorInfo e;
      e.key = budget.take(t->key(), "tensor entry");
      if (e.key.empty() || std::memchr(e.key.data(), 0, e.key.size()) != nullptr)
        raise(Code::DataLoss, "{}: entry {} has an empty key or a key with a NUL byte", path, out.entries.size());
      if (!out.entries.empty() && !(out.entries.back().key < e.key))
        raise(Code::DataLoss, "{}: keys are not sorted and unique at '{}'", path, e.key);
      e.dtype = static_cast<DType>(t->dtype());
      if (const auto* dims = t->shape()) {
        if (dims->size() > static_cast<flatbuffers::uoffset_t>(kMaxRank))
          raise(Code::DataLoss, "{}: key '{}' has rank {} (at most {})", path, e.key, dims->size(), kMaxRank);
        // FlatBuffers 2.0.8's verifier checks a vector's alignment to 4 bytes only, so 8-byte
        // elements may sit misaligned: copy them out instead of reading them in place.
        int64_t d[kMaxRank];
        if (dims->size() > 0) std::memcpy(d, dims->Data(), dims->size() * sizeof(int64_t));
        try {
          e.shape = Shape::from(d, dims->size(), "shape");
        } catch (const Error& err) {
          raise(Code::DataLoss, "{}: key '{}' has an invalid {}", path, e.key, err.message());
        }
      }
      e.offset = t->offset();
      e.stored_size = t->stored_size();
      e.raw_size = t->raw_size();
      e.codec = static_cast<Codec>(t->codec());
      e.checksum = t->checksum();
      e.raw_checksum = t->raw_checksum();
      check_entry(e, payload_end, path);
      out.entries.push_back(std::move(e));
    }
  }

  convert_nodes(index->nodes(), budget, out.graph.nodes);
  try {
    validate_object_graph(out.graph, path);
  } catch (const Error& err) {
    raise(Code::DataLoss, "{}", err.message());
  }
  const auto* nodes = index->nodes();
  for (size_t i = 0; i < out.graph.nodes.size(); ++i) {
    const auto* attrs = nodes->Get(static_cast<flatbuffers::uoffset_t>(i))->attributes();
    for (size_t j = 0; j < out.graph.nodes[i].attributes.size(); ++j) {
      uint32_t t = attrs->Get(static_cast<flatbuffers::uoffset_t>(j))->tensor();
      const Attribute& a = out.graph.nodes[i].attributes[j];
      if (t >= out.entries.size() || out.entries[t].key != a.key)
        raise(Code::DataLoss, "{}: node {} attribute '{}' points at entry {}, which is not key '{}'", path, i, a.name, t,
              a.key);
    }
  }

  if (const fb::Metadata* m = index->metadata()) {
    out.metadata.save_counter = m->save_counter();
    out.metadata.library_version = budget.take(m->library_version(), "metadata");
    if (const auto* user = m->user()) {
      std::string prev;
      for (const fb::KeyValue* kv : *user) {
        std::string k = budget.take(kv->key(), "metadata");
        if (!out.metadata.user.empty() && !(prev < k))
          raise(Code::DataLoss, "{}: metadata keys are not sorted and unique at '{}'", path, k);
        prev = k;
        out.metadata.user.emplace(std::move(k), budget.take(kv->value(), "metadata"));
      }
    }
  }
  return out;
}

}  // namespace internal

ObjectGraph parse_object_graph(std::string_view bytes, std::string_view what) {
  internal::check_buffer_size(bytes.size(), what, "the object graph");
  // The verifier wants 4-byte alignment relative to the buffer; a std::string's data may not be.
  std::vector<uint32_t> aligned((bytes.size() + 3) / 4);
  if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
  const uint8_t* data = reinterpret_cast<const uint8_t*>(aligned.data());
  flatbuffers::Verifier verifier(data, bytes.size(), internal::verifier_options(bytes.size()));
  if (!verifier.VerifyBuffer<fb::ObjectGraph>(kObjectGraphIdentifier))
    raise(Code::DataLoss, "{}: not a valid object graph", what);
  ObjectGraph graph;
  internal::StringBudget budget(bytes.size(), what);
  internal::convert_nodes(flatbuffers::GetRoot<fb::ObjectGraph>(data)->nodes(), budget, graph.nodes);
  try {
    validate_object_graph(graph, what);
  } catch (const Error& err) {
    raise(Code::DataLoss, "{}", err.message());
  }
  return graph;
}

}  // namespace cairn::ckpt
