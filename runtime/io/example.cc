// tf.train.Example / SequenceExample on the wire. A small pointer-based reader walks the protobuf
// bytes directly (bench/example_bench.cc measures it against a reader built on nanopb's pb_decode
// primitives over the same records); batched parsing never builds the message structure: it
// finds each spec's feature in a record, decodes its list into reused scratch vectors and copies
// the values into the outputs.
#include "runtime/io/example.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <unordered_map>
#include <utility>

#include "runtime/core/error.h"
#include "runtime/io/proto/example.pb.h"
#include "runtime/io/proto/feature.pb.h"

namespace cairn::io {

static_assert(sizeof(float) == 4, "float lists are IEEE single precision");

const char* feature_kind_name(FeatureKind kind) {
  switch (kind) {
    case FeatureKind::None: return "none";
    case FeatureKind::Bytes: return "bytes";
    case FeatureKind::Float: return "float";
    case FeatureKind::Int64: return "int64";
  }
  return "unknown";
}

const char* spec_kind_name(SpecKind kind) {
  switch (kind) {
    case SpecKind::FixedLen: return "FixedLen";
    case SpecKind::VarLen: return "VarLen";
    case SpecKind::FixedLenSequence: return "FixedLenSequence";
    case SpecKind::VarLenSequence: return "VarLenSequence";
  }
  return "unknown";
}

int spec_outputs(SpecKind kind) {
  switch (kind) {
    case SpecKind::FixedLen: return 1;
    case SpecKind::VarLen: return 2;
    case SpecKind::FixedLenSequence: return 2;
    case SpecKind::VarLenSequence: return 3;
  }
  return 0;
}

Feature Feature::bytes(std::vector<std::string> values) {
  Feature f;
  f.kind = FeatureKind::Bytes;
  f.bytes_list = std::move(values);
  return f;
}

Feature Feature::floats(std::vector<float> values) {
  Feature f;
  f.kind = FeatureKind::Float;
  f.float_list = std::move(values);
  return f;
}

Feature Feature::int64s(std::vector<int64_t> values) {
  Feature f;
  f.kind = FeatureKind::Int64;
  f.int64_list = std::move(values);
  return f;
}

size_t Feature::size() const {
  switch (kind) {
    case FeatureKind::Bytes: return bytes_list.size();
    case FeatureKind::Float: return float_list.size();
    case FeatureKind::Int64: return int64_list.size();
    case FeatureKind::None: break;
  }
  return 0;
}

bool Feature::operator==(const Feature& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case FeatureKind::Bytes: return bytes_list == o.bytes_list;
    case FeatureKind::Float:  // bitwise, so NaNs round-trip equal
      return float_list.size() == o.float_list.size() &&
             (float_list.empty() ||
              std::memcmp(float_list.data(), o.float_list.data(), float_list.size() * sizeof(float)) == 0);
    case FeatureKind::Int64: return int64_list == o.int64_list;
    case FeatureKind::None: break;
  }
  return true;
}

namespace {

// Field numbers, from the generated code of runtime/io/proto (TensorFlow's numbers).
constexpr uint32_t kListValue = tfpb_FloatList_value_tag;            // BytesList/FloatList/Int64List.value
constexpr uint32_t kMapEntry = tfpb_Features_feature_tag;            // Features.feature, FeatureLists.feature_list
constexpr uint32_t kEntryKey = tfpb_Features_FeatureEntry_key_tag;
constexpr uint32_t kEntryValue = tfpb_Features_FeatureEntry_value_tag;
constexpr uint32_t kStep = tfpb_FeatureList_feature_tag;             // FeatureList.feature
constexpr uint32_t kExampleFeatures = tfpb_Example_features_tag;
constexpr uint32_t kContext = tfpb_SequenceExample_context_tag;
constexpr uint32_t kFeatureLists = tfpb_SequenceExample_feature_lists_tag;
static_assert(tfpb_BytesList_value_tag == kListValue && tfpb_Int64List_value_tag == kListValue);
static_assert(tfpb_FeatureLists_feature_list_tag == kMapEntry &&
              tfpb_FeatureLists_FeatureListEntry_key_tag == kEntryKey &&
              tfpb_FeatureLists_FeatureListEntry_value_tag == kEntryValue);
static_assert(static_cast<int>(FeatureKind::Bytes) == tfpb_Feature_bytes_list_tag &&
              static_cast<int>(FeatureKind::Float) == tfpb_Feature_float_list_tag &&
              static_cast<int>(FeatureKind::Int64) == tfpb_Feature_int64_list_tag);

// ---------------------------------------------------------------------------------------------
// Wire reading

// Thrown by the reader, turned into DataLoss naming the function (and example) by `guarded`.
struct Malformed {
  const char* what;
  size_t offset;  // from the start of the record
};

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;             // kVarint
  const uint8_t* data = nullptr;  // kLen, kFixed32, kFixed64: the payload
  size_t size = 0;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t size, const uint8_t* base) : p_(data), end_(data + size), base_(base) {}
  bool more() const { return p_ < end_; }

  uint64_t varint() {
    if (p_ < end_ && *p_ < 0x80) return *p_++;
    return varint_slow();
  }

  void next(Field& f) {
    const uint64_t tag = varint();
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint32_t>(tag & 7);
    if (f.number == 0 || tag > 0xFFFFFFFFu) fail("invalid field number", -1);
    switch (f.wire) {
      case kVarint: f.value = varint(); return;
      case kFixed64: take(f, 8); return;
      case kFixed32: take(f, 4); return;
      case kLen: {
        const uint64_t n = varint();
        if (n > static_cast<uint64_t>(end_ - p_)) fail("length past the end of its message", -1);
        take(f, static_cast<size_t>(n));
        return;
      }
      default: fail("invalid wire type", -1);
    }
  }

  [[noreturn]] void fail(const char* what, ptrdiff_t back) const {
    throw Malformed{what, static_cast<size_t>(p_ - base_ + back)};
  }

 private:
  void take(Field& f, size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) fail("truncated field", 0);
    f.data = p_;
    f.size = n;
    p_ += n;
  }
  uint64_t varint_slow() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) fail("truncated varint", 0);
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    fail("varint longer than 10 bytes", 0);
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* base_;
};

// One feature's values, decoded into vectors reused from record to record. Byte strings point into
// the record.
struct Values {
  FeatureKind kind = FeatureKind::None;
  std::vector<std::string_view> bytes;
  size_t nbytes = 0;  // total length of `bytes`
  std::vector<float> floats;
  std::vector<int64_t> int64s;

  void reset(FeatureKind k) {
    kind = k;
    bytes.clear();
    nbytes = 0;
    floats.clear();
    int64s.clear();
  }
};

void read_list(FeatureKind kind, const Field& list, const uint8_t* base, Values& v) {
  Reader r(list.data, list.size, base);
  Field f;
  while (r.more()) {
    r.next(f);
    if (f.number != kListValue) continue;
    if (kind == FeatureKind::Bytes) {
      if (f.wire != kLen) continue;
      v.bytes.emplace_back(reinterpret_cast<const char*>(f.data), f.size);
      v.nbytes += f.size;
    } else if (kind == FeatureKind::Float) {
      if (f.wire == kLen) {  // packed
        if (f.size % 4 != 0) throw Malformed{"packed floats not a multiple of 4 bytes", size_t(f.data - base)};
        const size_t old = v.floats.size();
        v.floats.resize(old + f.size / 4);
        if (f.size) std::memcpy(v.floats.data() + old, f.data, f.size);
      } else if (f.wire == kFixed32) {
        float x;
        std::memcpy(&x, f.data, 4);
        v.floats.push_back(x);
      }
    } else {
      if (f.wire == kLen) {  // packed
        Reader packed(f.data, f.size, base);
        while (packed.more()) v.int64s.push_back(static_cast<int64_t>(packed.varint()));
      } else if (f.wire == kVarint) {
        v.int64s.push_back(static_cast<int64_t>(f.value));
      }
    }
  }
}

// Feature{oneof kind {bytes_list = 1; float_list = 2; int64_list = 3}}. A oneof field seen again
// merges into the list; another kind replaces it (protobuf's rules).
void read_feature(const uint8_t* data, size_t size, const uint8_t* base, Values& v) {
  v.reset(FeatureKind::None);
  Reader r(data, size, base);
  Field f;
  while (r.more()) {
    r.next(f);
    if (f.wire != kLen || f.number < 1 || f.number > 3) continue;
    const auto kind = static_cast<FeatureKind>(f.number);
    if (kind != v.kind) v.reset(kind);
    read_list(kind, f, base, v);
  }
}

// A map entry {key = 1, value = 2}; a missing value is an empty message.
struct Entry {
  std::string_view key;
  const uint8_t* value = nullptr;
  size_t value_size = 0;
};

Entry read_entry(const Field& entry, const uint8_t* base) {
  Entry e;
  Reader r(entry.data, entry.size, base);
  Field f;
  while (r.more()) {
    r.next(f);
    if (f.wire != kLen) continue;
    if (f.number == kEntryKey) {
      e.key = std::string_view(reinterpret_cast<const char*>(f.data), f.size);
    } else if (f.number == kEntryValue) {
      e.value = f.data;
      e.value_size = f.size;
    }
  }
  return e;
}

// Calls fn(entry) for every map entry of a Features or FeatureLists message.
template <class Fn>
void for_each_entry(const Field& map, const uint8_t* base, Fn&& fn) {
  Reader r(map.data, map.size, base);
  Field f;
  while (r.more()) {
    r.next(f);
    if (f.number == kMapEntry && f.wire == kLen) fn(read_entry(f, base));
  }
}

// Calls fn(field) for every field of wire type LEN in the message [data, data + size).
template <class Fn>
void for_each_len(const uint8_t* data, size_t size, const uint8_t* base, Fn&& fn) {
  Reader r(data, size, base);
  Field f;
  while (r.more()) {
    r.next(f);
    if (f.wire == kLen) fn(f);
  }
}

// The same for the fields numbered `number` only.
template <class Fn>
void for_each_len(const uint8_t* data, size_t size, const uint8_t* base, uint32_t number, Fn&& fn) {
  for_each_len(data, size, base, [&](const Field& f) {
    if (f.number == number) fn(f);
  });
}

Feature to_feature(const Values& v) {
  Feature out;
  out.kind = v.kind;
  switch (v.kind) {
    case FeatureKind::Bytes: out.bytes_list.assign(v.bytes.begin(), v.bytes.end()); break;
    case FeatureKind::Float: out.float_list = v.floats; break;
    case FeatureKind::Int64: out.int64_list = v.int64s; break;
    case FeatureKind::None: break;
  }
  return out;
}

void read_feature_map(const Field& map, const uint8_t* base, Values& scratch, FeatureMap& out) {
  for_each_entry(map, base, [&](const Entry& e) {
    read_feature(e.value, e.value_size, base, scratch);
    out.insert_or_assign(std::string(e.key), to_feature(scratch));
  });
}

template <class F>
auto guarded(const char* fn, int64_t index, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Malformed& m) {
    if (index < 0) raise(Code::DataLoss, "{}: malformed protobuf: {} at byte {}", fn, m.what, m.offset);
    raise(Code::DataLoss, "{}: example {}: malformed protobuf: {} at byte {}", fn, index, m.what, m.offset);
  }
}

const uint8_t* bytes_of(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// ---------------------------------------------------------------------------------------------
// Wire writing: sizes first, then one pass into a buffer of exactly that size. Every field number
// here is below 16, so every tag is one byte.
static_assert(kListValue < 16 && kMapEntry < 16 && kEntryKey < 16 && kEntryValue < 16 && kStep < 16 &&
              kExampleFeatures < 16 && kContext < 16 && kFeatureLists < 16);

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

size_t len_field_size(size_t payload) { return 1 + varint_size(payload) + payload; }

size_t int64s_payload(const std::vector<int64_t>& values) {
  size_t n = 0;
  for (int64_t x : values) n += varint_size(static_cast<uint64_t>(x));
  return n;
}

size_t list_size(const Feature& f) {
  switch (f.kind) {
    case FeatureKind::Bytes: {
      size_t n = 0;
      for (const std::string& s : f.bytes_list) n += len_field_size(s.size());
      return n;
    }
    case FeatureKind::Float: return f.float_list.empty() ? 0 : len_field_size(4 * f.float_list.size());
    case FeatureKind::Int64: return f.int64_list.empty() ? 0 : len_field_size(int64s_payload(f.int64_list));
    case FeatureKind::None: break;
  }
  return 0;
}

size_t feature_size(const Feature& f) { return f.kind == FeatureKind::None ? 0 : len_field_size(list_size(f)); }

size_t steps_size(const std::vector<Feature>& steps) {
  size_t n = 0;
  for (const Feature& f : steps) n += len_field_size(feature_size(f));
  return n;
}

size_t entry_size(const std::string& key, size_t value_size) {
  return len_field_size(key.size()) + len_field_size(value_size);
}

size_t feature_map_size(const FeatureMap& m) {
  size_t n = 0;
  for (const auto& [key, f] : m) n += len_field_size(entry_size(key, feature_size(f)));
  return n;
}

size_t feature_list_map_size(const FeatureListMap& m) {
  size_t n = 0;
  for (const auto& [key, steps] : m) n += len_field_size(entry_size(key, steps_size(steps)));
  return n;
}

class Writer {
 public:
  explicit Writer(std::string& out) : p_(reinterpret_cast<uint8_t*>(out.data())) {}
  uint8_t* position() const { return p_; }

  void varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<uint8_t>(v);
  }
  void len_header(uint32_t number, size_t payload) {
    *p_++ = static_cast<uint8_t>(number << 3 | kLen);
    varint(payload);
  }
  void raw(const void* data, size_t n) {
    if (n) std::memcpy(p_, data, n);
    p_ += n;
  }

  void feature(const Feature& f) {
    if (f.kind == FeatureKind::None) return;
    len_header(static_cast<uint32_t>(f.kind), list_size(f));
    switch (f.kind) {
      case FeatureKind::Bytes:
        for (const std::string& s : f.bytes_list) {
          len_header(kListValue, s.size());
          raw(s.data(), s.size());
        }
        break;
      case FeatureKind::Float:
        if (f.float_list.empty()) break;
        len_header(kListValue, 4 * f.float_list.size());
        raw(f.float_list.data(), 4 * f.float_list.size());
        break;
      case FeatureKind::Int64:
        if (f.int64_list.empty()) break;
        len_header(kListValue, int64s_payload(f.int64_list));
        for (int64_t x : f.int64_list) varint(static_cast<uint64_t>(x));
        break;
      case FeatureKind::None: break;
    }
  }

  void entry_header(const std::string& key, size_t value_size) {
    len_header(kMapEntry, entry_size(key, value_size));
    len_header(kEntryKey, key.size());
    raw(key.data(), key.size());
    len_header(kEntryValue, value_size);
  }

  void feature_map(uint32_t number, const FeatureMap& m) {
    if (m.empty()) return;
    len_header(number, feature_map_size(m));
    for (const auto& [key, f] : m) {
      entry_header(key, feature_size(f));
      feature(f);
    }
  }

  void feature_list_map(uint32_t number, const FeatureListMap& m) {
    if (m.empty()) return;
    len_header(number, feature_list_map_size(m));
    for (const auto& [key, steps] : m) {
      entry_header(key, steps_size(steps));
      for (const Feature& f : steps) {
        len_header(kStep, feature_size(f));
        feature(f);
      }
    }
  }

 private:
  uint8_t* p_;
};

size_t map_field_size(size_t payload, bool empty) { return empty ? 0 : len_field_size(payload); }

}  // namespace

std::string serialize(const Example& example) {
  std::string out(map_field_size(feature_map_size(example.features), example.features.empty()), '\0');
  Writer w(out);
  w.feature_map(kExampleFeatures, example.features);
  return out;
}

std::string serialize(const SequenceExample& example) {
  std::string out(map_field_size(feature_map_size(example.context), example.context.empty()) +
                      map_field_size(feature_list_map_size(example.feature_lists), example.feature_lists.empty()),
                  '\0');
  Writer w(out);
  w.feature_map(kContext, example.context);
  w.feature_list_map(kFeatureLists, example.feature_lists);
  return out;
}

namespace {

// Decodes a message's top-level LEN fields with body(field, base, scratch, out).
template <class Message, class Body>
Message parse_message(const char* fn, std::string_view bytes, Body&& body) {
  return guarded(fn, -1, [&] {
    Message out;
    Values scratch;
    const uint8_t* base = bytes_of(bytes);
    for_each_len(base, bytes.size(), base, [&](const Field& f) { body(f, base, scratch, out); });
    return out;
  });
}

}  // namespace

Example parse_example(std::string_view bytes) {
  return parse_message<Example>("parse_example", bytes,
                                [](const Field& f, const uint8_t* base, Values& scratch, Example& out) {
                                  if (f.number == kExampleFeatures) read_feature_map(f, base, scratch, out.features);
                                });
}

SequenceExample parse_sequence_example(std::string_view bytes) {
  return parse_message<SequenceExample>(
      "parse_sequence_example", bytes, [](const Field& f, const uint8_t* base, Values& scratch, SequenceExample& out) {
        if (f.number == kContext) {
          read_feature_map(f, base, scratch, out.context);
        } else if (f.number == kFeatureLists) {
          for_each_entry(f, base, [&](const Entry& e) {
            std::vector<Feature> steps;
            for_each_len(e.value, e.value_size, base, kStep, [&](const Field& step) {
              read_feature(step.data, step.size, base, scratch);
              steps.push_back(to_feature(scratch));
            });
            out.feature_lists.insert_or_assign(std::string(e.key), std::move(steps));
          });
        }
      });
}

// -------------------------------------------------------------------------------------------------
// Batched parsing into tensors

namespace {

bool is_sequence(SpecKind k) { return k == SpecKind::FixedLenSequence || k == SpecKind::VarLenSequence; }

FeatureKind list_kind(DType t) {
  switch (t) {
    case DType::Float32: return FeatureKind::Float;
    case DType::Int64: return FeatureKind::Int64;
    default: return FeatureKind::Bytes;
  }
}

// Where a feature sits in a record, found by the key scan; `found` is reset for every record.
struct Span {
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool found = false;
};

// Per spec: its checked settings, and FixedLen's output, which every block fills in place.
struct SpecPlan {
  const FeatureSpec* spec = nullptr;
  size_t elem = 0;            // dtype size
  int64_t numel = 0;          // FixedLen: values per example; FixedLenSequence: per step
  std::vector<uint8_t> fill;  // numel values: FixedLen's default, FixedLenSequence's padding
  bool has_default = false;
  Tensor fixed;               // FixedLen's output
};

// What one block of records gave a spec (the kinds other than FixedLen).
struct Collected {
  std::vector<uint8_t> values;   // raw values
  std::vector<int64_t> lengths;  // VarLen: per example; FixedLenSeq: steps per example; VarLenSeq: per step
  std::vector<int64_t> steps;    // VarLenSequence: steps per example
  Span span;
};

// One block's results and its scratch.
struct Partial {
  std::vector<Collected> specs;
  Values scratch;
};

// Finds a spec by key: a scan for the usual handful of specs, a hash table beyond.
class KeyIndex {
 public:
  void add(std::string_view key, int spec) {
    keys_.emplace_back(key, spec);
    if (keys_.size() > 8) map_.emplace(key, spec);
    if (keys_.size() == 9)
      for (const auto& [k, j] : keys_) map_.emplace(k, j);
  }
  bool contains(std::string_view key) const { return find(key) >= 0; }
  int find(std::string_view key) const {
    if (keys_.size() > 8) {
      auto it = map_.find(key);
      return it == map_.end() ? -1 : it->second;
    }
    for (const auto& [k, j] : keys_)
      if (k.size() == key.size() && std::memcmp(k.data(), key.data(), key.size()) == 0) return j;
    return -1;
  }
  bool empty() const { return keys_.empty(); }

 private:
  std::vector<std::pair<std::string_view, int>> keys_;
  std::unordered_map<std::string_view, int> map_;
};

// Checks the specs and allocates FixedLen outputs once; then parses blocks of records, each into
// its own Partial (blocks may run on several threads), and joins the blocks in order.
class BatchParser {
 public:
  BatchParser(const char* fn, Device& host, size_t n, const std::vector<FeatureSpec>& specs, bool sequence)
      : fn_(fn), host_(host), n_(n), sequence_(sequence) {
    if (!host.is_host()) raise(Code::InvalidArgument, "{}: device {} is not a host device", fn, host.name());
    plans_.resize(specs.size());
    for (size_t j = 0; j < specs.size(); ++j) plan(j, specs[j]);
  }

  // Parses records [begin, end) into `out`.
  void parse_range(const std::string_view* records, size_t begin, size_t end, Partial& out) const {
    out.specs.resize(plans_.size());
    for (size_t i = begin; i < end; ++i) {
      for (Collected& c : out.specs) c.span.found = false;
      const std::string_view record = records[i];
      guarded(fn_, static_cast<int64_t>(i), [&] {
        const uint8_t* base = bytes_of(record);
        if (sequence_) {
          for_each_len(base, record.size(), base, [&](const Field& f) {
            if (f.number == kContext && !context_.empty()) find(f, base, context_, out);
            if (f.number == kFeatureLists && !lists_.empty()) find(f, base, lists_, out);
          });
        } else {
          for_each_len(base, record.size(), base, kExampleFeatures,
                       [&](const Field& features) { find(features, base, context_, out); });
        }
        for (size_t j = 0; j < plans_.size(); ++j) collect(i, plans_[j], out.specs[j], out.scratch, base);
      });
    }
  }

  std::vector<Tensor> finish(const std::vector<Partial>& parts) {
    std::vector<Tensor> out;
    for (size_t j = 0; j < plans_.size(); ++j) {
      SpecPlan& p = plans_[j];
      const DType dtype = p.spec->dtype;
      auto values = [&] { return join(parts, j, &Collected::values, dtype, p.elem); };
      auto lengths = [&] { return join(parts, j, &Collected::lengths, DType::Int64, sizeof(int64_t)); };
      switch (p.spec->kind) {
        case SpecKind::FixedLen: out.push_back(std::move(p.fixed)); break;
        case SpecKind::VarLen:
          out.push_back(values());
          out.push_back(lengths());
          break;
        case SpecKind::FixedLenSequence:
          out.push_back(padded(p, parts, j));
          out.push_back(lengths());
          break;
        case SpecKind::VarLenSequence:
          out.push_back(values());
          out.push_back(lengths());
          out.push_back(join(parts, j, &Collected::steps, DType::Int64, sizeof(int64_t)));
          break;
      }
    }
    return out;
  }

 private:
  void plan(size_t j, const FeatureSpec& spec) {
    SpecPlan& s = plans_[j];
    s.spec = &spec;
    const int kind = static_cast<int>(spec.kind);
    if (kind < 1 || kind > 4)
      raise(Code::InvalidArgument, "{}: spec {} ('{}'): unknown spec kind {}", fn_, j, spec.key, kind);
    if (is_sequence(spec.kind) && !sequence_)
      raise(Code::InvalidArgument, "{}: spec {} ('{}'): {} specs are for sequence examples", fn_, j, spec.key,
            spec_kind_name(spec.kind));
    if (spec.dtype != DType::Float32 && spec.dtype != DType::Int64 && spec.dtype != DType::UInt8)
      raise(Code::InvalidArgument, "{}: spec {} ('{}'): dtype {} is not float32, int64 or uint8", fn_, j, spec.key,
            dtype_name(spec.dtype));
    s.elem = dtype_size(spec.dtype);
    const bool fixed = spec.kind == SpecKind::FixedLen || spec.kind == SpecKind::FixedLenSequence;
    if (fixed) {
      const int outer = spec.kind == SpecKind::FixedLen ? 1 : 2;
      if (spec.shape.rank() + outer > kMaxRank)
        raise(Code::InvalidArgument, "{}: spec {} ('{}'): shape {} has more than {} dims", fn_, j, spec.key,
              spec.shape.str(), kMaxRank - outer);
      s.numel = spec.shape.num_elements();
      s.fill.assign(static_cast<size_t>(s.numel) * s.elem, 0);
    }
    if (spec.default_value && spec.default_value->valid()) {
      const Tensor& d = *spec.default_value;
      if (!fixed)
        raise(Code::InvalidArgument, "{}: spec {} ('{}'): {} specs take no default", fn_, j, spec.key,
              spec_kind_name(spec.kind));
      if (d.dtype() != spec.dtype)
        raise(Code::InvalidArgument, "{}: spec {} ('{}'): default is {}, the spec {}", fn_, j, spec.key,
              dtype_name(d.dtype()), dtype_name(spec.dtype));
      if (d.num_elements() != 1 && d.num_elements() != s.numel)
        raise(Code::InvalidArgument, "{}: spec {} ('{}'): default has {} elements; shape {} needs {} (or 1)", fn_, j,
              spec.key, d.num_elements(), spec.shape.str(), s.numel);
      if (!d.device() || !d.device()->is_host())
        raise(Code::InvalidArgument, "{}: spec {} ('{}'): default is not a host tensor", fn_, j, spec.key);
      const auto* src = static_cast<const uint8_t*>(d.raw_data());
      for (int64_t e = 0; e < s.numel; ++e)
        std::memcpy(s.fill.data() + e * s.elem, src + (d.num_elements() == 1 ? 0 : e * s.elem), s.elem);
      s.has_default = true;
    }
    KeyIndex& index = is_sequence(spec.kind) ? lists_ : context_;
    if (index.contains(spec.key))
      raise(Code::InvalidArgument, "{}: spec {} ('{}'): another spec has the same key", fn_, j, spec.key);
    index.add(spec.key, static_cast<int>(j));
    if (spec.kind == SpecKind::FixedLen) {
      Shape shape;
      shape.push_back(static_cast<int64_t>(n_));
      for (int a = 0; a < spec.shape.rank(); ++a) shape.push_back(spec.shape[a]);
      s.fixed = Tensor::allocate(host_, spec.dtype, shape);
    }
  }

  // Records where each wanted key's value sits; a key given twice: the last entry wins.
  static void find(const Field& map, const uint8_t* base, const KeyIndex& index, Partial& out) {
    for_each_entry(map, base, [&](const Entry& e) {
      const int j = index.find(e.key);
      if (j >= 0) out.specs[j].span = Span{e.value, e.value_size, true};
    });
  }

  void collect(size_t i, const SpecPlan& p, Collected& c, Values& scratch, const uint8_t* base) const {
    const FeatureSpec& spec = *p.spec;
    switch (spec.kind) {
      case SpecKind::FixedLen: {
        auto* dst = static_cast<uint8_t*>(p.fixed.raw_mutable_data()) + i * p.numel * p.elem;
        if (!c.span.found) {
          if (!p.has_default)
            raise(Code::InvalidArgument, "{}: example {}: feature '{}' is missing and its FixedLen spec has no default",
                  fn_, i, spec.key);
          if (!p.fill.empty()) std::memcpy(dst, p.fill.data(), p.fill.size());
          return;
        }
        const size_t count = decode(i, -1, p, c.span.data, c.span.size, base, scratch);
        check_count(i, -1, p, count);
        copy_values(dst, spec.dtype, scratch);
        return;
      }
      case SpecKind::VarLen: {
        size_t count = 0;
        if (c.span.found) {
          count = decode(i, -1, p, c.span.data, c.span.size, base, scratch);
          append_values(p, c, scratch);
        }
        c.lengths.push_back(static_cast<int64_t>(count));
        return;
      }
      case SpecKind::FixedLenSequence:
      case SpecKind::VarLenSequence: {
        int64_t steps = 0;
        if (c.span.found) {
          for_each_len(c.span.data, c.span.size, base, kStep, [&](const Field& step) {
            const size_t count = decode(i, steps, p, step.data, step.size, base, scratch);
            if (spec.kind == SpecKind::FixedLenSequence) {
              check_count(i, steps, p, count);
            } else {
              c.lengths.push_back(static_cast<int64_t>(count));
            }
            append_values(p, c, scratch);
            ++steps;
          });
        }
        (spec.kind == SpecKind::FixedLenSequence ? c.lengths : c.steps).push_back(steps);
        return;
      }
    }
  }

  std::string where(size_t i, int64_t step, const SpecPlan& p) const {
    if (step < 0) return fmt::format("{}: example {}: feature '{}'", fn_, i, p.spec->key);
    return fmt::format("{}: example {}: feature list '{}' step {}", fn_, i, p.spec->key, step);
  }

  // Decodes one Feature into `scratch`; returns its value count in the spec's dtype.
  size_t decode(size_t i, int64_t step, const SpecPlan& p, const uint8_t* data, size_t size, const uint8_t* base,
                Values& scratch) const {
    read_feature(data, size, base, scratch);
    const FeatureKind want = list_kind(p.spec->dtype);
    if (scratch.kind != want && scratch.kind != FeatureKind::None)
      raise(Code::InvalidArgument, "{} is a {} list, but its spec asks for {} (which reads {} lists)", where(i, step, p),
            feature_kind_name(scratch.kind), dtype_name(p.spec->dtype), feature_kind_name(want));
    return count_of(scratch, p.spec->dtype);
  }

  static size_t count_of(const Values& v, DType dtype) {
    return dtype == DType::Float32 ? v.floats.size() : dtype == DType::Int64 ? v.int64s.size() : v.nbytes;
  }

  void check_count(size_t i, int64_t step, const SpecPlan& p, size_t count) const {
    if (static_cast<int64_t>(count) != p.numel)
      raise(Code::InvalidArgument, "{}: expected {} values for shape {}, got {}", where(i, step, p), p.numel,
            p.spec->shape.str(), count);
  }

  static void copy_values(uint8_t* dst, DType dtype, const Values& v) {
    switch (dtype) {
      case DType::Float32:
        if (!v.floats.empty()) std::memcpy(dst, v.floats.data(), v.floats.size() * 4);
        break;
      case DType::Int64:
        if (!v.int64s.empty()) std::memcpy(dst, v.int64s.data(), v.int64s.size() * 8);
        break;
      default:
        for (std::string_view b : v.bytes) {
          if (!b.empty()) std::memcpy(dst, b.data(), b.size());
          dst += b.size();
        }
    }
  }

  static void append_values(const SpecPlan& p, Collected& c, const Values& v) {
    const size_t old = c.values.size();
    c.values.resize(old + count_of(v, p.spec->dtype) * p.elem);
    copy_values(c.values.data() + old, p.spec->dtype, v);
  }

  // A rank-1 tensor of the blocks' `member` vectors, one after the other.
  template <class T>
  Tensor join(const std::vector<Partial>& parts, size_t j, std::vector<T> Collected::*member, DType dtype,
              size_t elem) {
    size_t bytes = 0;
    for (const Partial& part : parts) bytes += (part.specs[j].*member).size() * sizeof(T);
    Tensor t = Tensor::allocate(host_, dtype, Shape{static_cast<int64_t>(bytes / elem)});
    auto* dst = static_cast<uint8_t*>(t.raw_mutable_data());
    for (const Partial& part : parts) {
      const std::vector<T>& v = part.specs[j].*member;
      if (!v.empty()) std::memcpy(dst, v.data(), v.size() * sizeof(T));
      dst += v.size() * sizeof(T);
    }
    return t;
  }

  // [batch, max_steps, shape...]: each example's steps, then the padding.
  Tensor padded(const SpecPlan& p, const std::vector<Partial>& parts, size_t j) {
    int64_t max_steps = 0;
    for (const Partial& part : parts)
      for (int64_t k : part.specs[j].lengths) max_steps = std::max(max_steps, k);
    Shape shape{static_cast<int64_t>(n_), max_steps};
    for (int a = 0; a < p.spec->shape.rank(); ++a) shape.push_back(p.spec->shape[a]);
    Tensor t = Tensor::allocate(host_, p.spec->dtype, shape);
    const size_t step_bytes = static_cast<size_t>(p.numel) * p.elem;
    if (step_bytes == 0) return t;
    auto* dst = static_cast<uint8_t*>(t.raw_mutable_data());
    for (const Partial& part : parts) {
      const uint8_t* src = part.specs[j].values.data();
      for (int64_t steps : part.specs[j].lengths) {
        const size_t have = static_cast<size_t>(steps) * step_bytes;
        if (have) std::memcpy(dst, src, have);
        dst += have;
        src += have;
        for (int64_t k = steps; k < max_steps; ++k, dst += step_bytes) std::memcpy(dst, p.fill.data(), step_bytes);
      }
    }
    return t;
  }

  const char* fn_;
  Device& host_;
  size_t n_;
  bool sequence_;
  std::vector<SpecPlan> plans_;
  KeyIndex context_, lists_;
};

// Records per block: blocks are the unit of parallel work, and each has its own result vectors.
constexpr size_t kBlock = 64;

std::vector<Tensor> parse_batch(const char* fn, Device& host, const std::string_view* records, size_t n,
                                const std::vector<FeatureSpec>& specs, ThreadPool* pool, bool sequence) {
  BatchParser parser(fn, host, n, specs, sequence);
  const bool parallel = pool && pool->num_threads() > 1 && n > kBlock;
  std::vector<Partial> parts(parallel ? (n + kBlock - 1) / kBlock : 1);
  if (!parallel) {
    parser.parse_range(records, 0, n, parts[0]);
    return parser.finish(parts);
  }
  // Every block runs; the error of the first failing block is the one the serial loop would raise.
  std::vector<std::exception_ptr> errors(parts.size());
  pool->run(static_cast<int64_t>(parts.size()), 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      try {
        const size_t begin = static_cast<size_t>(b) * kBlock;
        parser.parse_range(records, begin, std::min(n, begin + kBlock), parts[b]);
      } catch (...) {
        errors[b] = std::current_exception();
      }
    }
  });
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return parser.finish(parts);
}

}  // namespace

std::vector<Tensor> parse_examples(Device& host, const std::string_view* records, size_t n,
                                   const std::vector<FeatureSpec>& specs, ThreadPool* pool) {
  return parse_batch("parse_examples", host, records, n, specs, pool, false);
}

std::vector<Tensor> parse_sequence_examples(Device& host, const std::string_view* records, size_t n,
                                            const std::vector<FeatureSpec>& specs, ThreadPool* pool) {
  return parse_batch("parse_sequence_examples", host, records, n, specs, pool, true);
}

}  // namespace cairn::io
