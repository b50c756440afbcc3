// Element specs, iterator state encoding and the defaults of Dataset.
#include "runtime/data/dataset.h"

#include <cstring>

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace cairn::data {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  return "[" + fmt::format("{}", fmt::join(dims, ",")) + "]";
}

std::string component_text(const ComponentSpec& c) { return std::string(dtype_name(c.dtype)) + dims_text(c.dims); }

}  // namespace

int ElementSpec::index_of(std::string_view name) const {
  for (size_t i = 0; i < components.size(); ++i)
    if (components[i].name == name) return static_cast<int>(i);
  return -1;
}

std::string ElementSpec::text() const {
  std::string out;
  for (const auto& c : components) {
    if (!out.empty()) out += ", ";
    out += c.name + ": " + component_text(c);
  }
  return out;
}

void ElementSpec::check(const std::vector<Tensor>& element, std::string_view who, int64_t index) const {
  if (element.size() != components.size())
    raise(Code::InvalidArgument, "{} (element {}): {} components, expected {} ({})", who, index, element.size(),
          components.size(), text());
  for (size_t i = 0; i < components.size(); ++i) {
    const ComponentSpec& c = components[i];
    const Tensor& t = element[i];
    bool ok = t.valid() && t.dtype() == c.dtype && t.rank() == static_cast<int>(c.dims.size());
    for (size_t d = 0; ok && d < c.dims.size(); ++d) ok = c.dims[d] < 0 || c.dims[d] == t.shape().dim(static_cast<int>(d));
    if (!ok)
      raise(Code::InvalidArgument, "{}: component '{}' (element {}) is {}, expected {}", who, c.name, index,
            t.valid() ? std::string(dtype_name(t.dtype())) + t.shape().str() : std::string("missing"),
            component_text(c));
  }
}

// ---- StateWriter / StateReader ----

void StateWriter::put_u64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  bytes_.append(b, 8);
}

void StateWriter::put_i64(int64_t v) { put_u64(static_cast<uint64_t>(v)); }

void StateWriter::put_bytes(std::string_view b) {
  put_u64(b.size());
  bytes_.append(b.data(), b.size());
}

void StateWriter::put_tensor(const Tensor& t) {
  if (t.dtype() == DType::String || !t.valid()) raise(Code::Internal, "iterator state: cannot save {}", t.valid() ? t.debug_string() : "an empty tensor");
  if (t.device() != nullptr && !t.device()->is_host())
    raise(Code::Internal, "iterator state: tensor {} is not on the CPU", t.debug_string());
  put_u64(static_cast<uint64_t>(t.dtype()));
  put_u64(static_cast<uint64_t>(t.rank()));
  for (int d = 0; d < t.rank(); ++d) put_i64(t.shape().dim(d));
  put_bytes(std::string_view(static_cast<const char*>(t.raw_data()), t.nbytes()));
}

void StateWriter::put_element(const Element& e) {
  put_u64(e.size());
  for (const Tensor& t : e) put_tensor(t);
}

StateReader::StateReader(std::string_view bytes, std::string what, Context& ctx)
    : bytes_(bytes), what_(std::move(what)), ctx_(&ctx) {}

void StateReader::corrupt(std::string_view why) const {
  raise(Code::DataLoss, "{}: corrupt iterator state: {} (at byte {})", what_, why, pos_);
}

uint64_t StateReader::get_u64() {
  if (bytes_.size() - pos_ < 8) corrupt("truncated");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
  pos_ += 8;
  return v;
}

int64_t StateReader::get_i64() { return static_cast<int64_t>(get_u64()); }

std::string StateReader::get_bytes() {
  const uint64_t n = get_u64();
  if (n > bytes_.size() - pos_) corrupt("a length past the end");
  std::string out(bytes_.substr(pos_, n));
  pos_ += n;
  return out;
}

Tensor StateReader::get_tensor() {
  const auto dtype = static_cast<DType>(get_u64());
  if (!dtype_is_valid(dtype) || dtype == DType::String) corrupt("a bad dtype");
  const uint64_t rank = get_u64();
  if (rank > static_cast<uint64_t>(kMaxRank)) corrupt("a bad rank");
  std::vector<int64_t> dims(rank);
  for (auto& d : dims) d = get_i64();
  Shape shape;
  try {
    shape = Shape::from(dims.data(), dims.size(), "iterator state");
  } catch (const Error&) {
    corrupt("a bad shape");
  }
  const uint64_t n = get_u64();
  if (n != static_cast<uint64_t>(shape.num_elements()) * dtype_size(dtype) || n > bytes_.size() - pos_)
    corrupt("a tensor size that does not match its shape");
  Tensor t = Tensor::allocate(ctx_->cpu(), dtype, shape);
  if (n) std::memcpy(t.raw_mutable_data(), bytes_.data() + pos_, n);
  pos_ += n;
  return t;
}

Element StateReader::get_element() {
  const uint64_t n = get_u64();
  if (n > 4096) corrupt("too many components");
  Element e;
  e.reserve(n);
  for (uint64_t i = 0; i < n; ++i) e.push_back(get_tensor());
  return e;
}

// ---- Dataset defaults ----

void Dataset::get(int64_t, uint64_t, Element&) const {
  raise(Code::Internal, "{}: not indexable", describe());
}

void Dataset::get_range(int64_t, int64_t, uint64_t, std::vector<Element>& out) const { out.clear(); }

std::unique_ptr<Iterator> Dataset::make_iterator(uint64_t epoch) const {
  if (!random_access()) raise(Code::Internal, "{}: a stream dataset must make its own iterator", describe());
  return make_index_iterator(shared_from_this(), epoch);
}

}  // namespace cairn::data
