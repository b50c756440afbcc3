#include "runtime/io/safetensors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/ranges.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/core/error.h"
#include "runtime/io/internal/file.h"

namespace cairn::safetensors {

namespace {

using io::internal::raise_errno;

// The reference's limit on N (MAX_HEADER_SIZE in tensor.rs): larger headers are rejected unread.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr uint64_t kLengthBytes = 8;
constexpr std::string_view kMetadataKey = "__metadata__";

// How the F8 kinds encode values (for the exact conversion to float32 / float16).
enum class F8Kind { None, E5M2, E4M3FN, E4M3FNUZ, E5M2FNUZ, E8M0 };

// Every dtype the reference knows, in the order of its `Dtype` enum: the writer sorts tensors by
// this rank, largest first (tensor.rs `prepare`), so files come out byte for byte the same.
struct DTypeInfo {
  std::string_view name;
  uint32_t bits;
  DType cairn;  // Invalid: no Cairn dtype (load raises); F8 kinds are converted instead
  F8Kind f8;
};
constexpr std::array<DTypeInfo, 22> kDTypes{{
    {"BOOL", 8, DType::Bool, F8Kind::None},
    {"F4", 4, DType::Invalid, F8Kind::None},
    {"F6_E2M3", 6, DType::Invalid, F8Kind::None},
    {"F6_E3M2", 6, DType::Invalid, F8Kind::None},
    {"U8", 8, DType::UInt8, F8Kind::None},
    {"I8", 8, DType::Int8, F8Kind::None},
    {"F8_E5M2", 8, DType::Invalid, F8Kind::E5M2},
    {"F8_E4M3", 8, DType::Invalid, F8Kind::E4M3FN},
    {"F8_E8M0", 8, DType::Invalid, F8Kind::E8M0},
    {"F8_E4M3FNUZ", 8, DType::Invalid, F8Kind::E4M3FNUZ},
    {"F8_E5M2FNUZ", 8, DType::Invalid, F8Kind::E5M2FNUZ},
    {"I16", 16, DType::Int16, F8Kind::None},
    {"U16", 16, DType::Invalid, F8Kind::None},
    {"F16", 16, DType::Float16, F8Kind::None},
    {"BF16", 16, DType::BFloat16, F8Kind::None},
    {"I32", 32, DType::Int32, F8Kind::None},
    {"U32", 32, DType::Invalid, F8Kind::None},
    {"F32", 32, DType::Float32, F8Kind::None},
    {"C64", 64, DType::Complex64, F8Kind::None},
    {"F64", 64, DType::Float64, F8Kind::None},
    {"I64", 64, DType::Int64, F8Kind::None},
    {"U64", 64, DType::Invalid, F8Kind::None},
}};

const DTypeInfo* dtype_info(std::string_view name) {
  for (const DTypeInfo& d : kDTypes)
    if (d.name == name) return &d;
  return nullptr;
}

size_t dtype_rank(DType t) {
  for (size_t i = 0; i < kDTypes.size(); ++i)
    if (kDTypes[i].cairn == t) return i;
  raise(Code::InvalidArgument, "safetensors: dtype {} has no safetensors dtype", dtype_name(t));
}

// What an F8 kind loads as: E8M0 spans 2^-127..2^127, beyond float16, so it is always float32.
DType f8_target(F8Kind kind, DType f8_as) { return kind == F8Kind::E8M0 ? DType::Float32 : f8_as; }

// The exact value of one F8 byte. Formats: OCP FP8 (E5M2 with inf/NaN as IEEE, E4M3FN with NaN
// only at S.1111.111), the FNUZ variants (bias 8/16, 0x80 is the only NaN, no -0), and E8M0 (an
// unsigned power of two, 0xFF NaN).
float f8_value(F8Kind kind, uint8_t b) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (kind == F8Kind::E8M0) return b == 0xFF ? nan : std::ldexp(1.0f, int{b} - 127);
  const bool fnuz = kind == F8Kind::E4M3FNUZ || kind == F8Kind::E5M2FNUZ;
  if (fnuz && b == 0x80) return nan;
  const int mant_bits = (kind == F8Kind::E5M2 || kind == F8Kind::E5M2FNUZ) ? 2 : 3;
  const int exp_max = (1 << (7 - mant_bits)) - 1;
  const int bias = kind == F8Kind::E5M2 ? 15 : kind == F8Kind::E4M3FN ? 7 : kind == F8Kind::E4M3FNUZ ? 8 : 16;
  const int e = (b >> mant_bits) & exp_max;
  const int m = b & ((1 << mant_bits) - 1);
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (kind == F8Kind::E5M2 && e == exp_max) return m == 0 ? sign * std::numeric_limits<float>::infinity() : nan;
  if (kind == F8Kind::E4M3FN && e == exp_max && m == (1 << mant_bits) - 1) return nan;
  if (e == 0) return sign * std::ldexp(static_cast<float>(m), 1 - bias - mant_bits);
  return sign * std::ldexp(1.0f + static_cast<float>(m) / static_cast<float>(1 << mant_bits), e - bias);
}

// Converts `n` F8 bytes into float32 or float16 (`to`) at `dst`, through a 256-entry table.
void convert_f8(F8Kind kind, DType to, const uint8_t* src, size_t n, void* dst) {
  float table[256];
  for (int i = 0; i < 256; ++i) table[i] = f8_value(kind, static_cast<uint8_t>(i));
  if (to == DType::Float32) {
    float* out = static_cast<float*>(dst);
    for (size_t i = 0; i < n; ++i) out[i] = table[src[i]];
  } else {
    float16* out = static_cast<float16*>(dst);
    for (size_t i = 0; i < n; ++i) out[i] = float16(table[src[i]]);
  }
}

std::string checksum_string(std::string_view bytes) {
  return fmt::format("xxh3:{:016x}", XXH3_64bits(bytes.data(), bytes.size()));
}

// ---- Header parsing ------------------------------------------------------------------------------
// A SAX handler instead of a DOM: it sees each key once (so duplicates are caught, which a DOM
// silently merges), rejects a shape longer than kMaxRank as soon as it appears, and allocates
// only what the header's own bytes hold.

struct RawEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> dims;
  uint64_t begin = 0, end = 0;
  bool has_dtype = false, has_shape = false, has_offsets = false;
};

class HeaderHandler : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<RawEntry> entries;
  std::map<std::string, std::string> metadata;
  std::string error;                 // set when a handler call returned false
  Code error_code = Code::DataLoss;

  bool null() override {
    if (skip_) return skipped_scalar();
    if (state_ == State::TopValue && in_metadata_) {  // "__metadata__": null is allowed (Option)
      state_ = State::TopKey;
      return true;
    }
    return fail("null where {} was expected", expected());
  }
  bool boolean(bool) override { return skip_ ? skipped_scalar() : fail("a boolean where {} was expected", expected()); }
  bool number_integer(number_integer_t v) override {
    if (skip_) return skipped_scalar();
    return fail("negative number {} where {} was expected", v, expected());
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (skip_) return skipped_scalar();
    if (state_ == State::ShapeItem) {
      if (current().dims.size() >= static_cast<size_t>(kMaxRank)) {
        error_code = Code::Unimplemented;
        return fail("tensor '{}' has more than {} dimensions (Cairn's limit)", current().name, kMaxRank);
      }
      current().dims.push_back(v);
      return true;
    }
    if (state_ == State::OffsetItem) {
      if (offsets_seen_ >= 2) return fail("tensor '{}': data_offsets has more than 2 numbers", current().name);
      (offsets_seen_++ == 0 ? current().begin : current().end) = v;
      return true;
    }
    return fail("number {} where {} was expected", v, expected());
  }
  bool number_float(number_float_t, const string_t& text) override {
    if (skip_) return skipped_scalar();
    return fail("number {} (not an unsigned 64-bit integer) where {} was expected", text, expected());
  }
  bool string(string_t& s) override {
    if (skip_) return skipped_scalar();
    if (state_ == State::MetadataValue) {
      metadata[meta_key_] = std::move(s);
      state_ = State::MetadataKey;
      return true;
    }
    if (state_ == State::FieldValue && field_ == Field::DType) {
      current().dtype = std::move(s);
      current().has_dtype = true;
      state_ = State::FieldKey;
      return true;
    }
    return fail("a string where {} was expected", expected());
  }
  bool binary(binary_t&) override { return fail("binary value in a JSON header"); }

  bool start_object(std::size_t) override {
    if (skip_) return ++skip_depth_, true;
    if (state_ == State::Start) return state_ = State::TopKey, true;
    if (state_ == State::TopValue) {
      state_ = in_metadata_ ? State::MetadataKey : State::FieldKey;
      return true;
    }
    return fail("an object where {} was expected", expected());
  }
  bool key(string_t& k) override {
    if (skip_) return true;
    if (state_ == State::TopKey) {
      if (!top_keys_.insert(k).second) return fail("duplicate name '{}'", k);
      in_metadata_ = k == kMetadataKey;
      if (!in_metadata_) {
        entries.emplace_back();
        entries.back().name = std::move(k);
      }
      state_ = State::TopValue;
      return true;
    }
    if (state_ == State::MetadataKey) {
      if (metadata.count(k)) return fail("duplicate __metadata__ key '{}'", k);
      meta_key_ = std::move(k);
      state_ = State::MetadataValue;
      return true;
    }
    if (state_ == State::FieldKey) {
      RawEntry& e = current();
      bool seen;
      if (k == "dtype") {
        field_ = Field::DType, seen = e.has_dtype;
      } else if (k == "shape") {
        field_ = Field::Shape, seen = e.has_shape;
      } else if (k == "data_offsets") {
        field_ = Field::Offsets, seen = e.has_offsets;
      } else {
        // The reference ignores fields it does not know (serde's default): so do we.
        skip_ = true;
        skip_depth_ = 0;
        return true;
      }
      if (seen) return fail("tensor '{}': duplicate field '{}'", e.name, k);
      state_ = State::FieldValue;
      return true;
    }
    return fail("key '{}' where {} was expected", k, expected());
  }
  bool end_object() override {
    if (skip_) return skip_end();
    if (state_ == State::MetadataKey) return state_ = State::TopKey, true;
    if (state_ == State::FieldKey) {
      const RawEntry& e = current();
      const char* missing = !e.has_dtype ? "dtype" : !e.has_shape ? "shape" : !e.has_offsets ? "data_offsets" : nullptr;
      if (missing) return fail("tensor '{}' has no '{}'", e.name, missing);
      state_ = State::TopKey;
      return true;
    }
    if (state_ == State::TopKey) return state_ = State::Done, true;
    return fail("unexpected end of object where {} was expected", expected());
  }
  bool start_array(std::size_t) override {
    if (skip_) return ++skip_depth_, true;
    if (state_ == State::FieldValue && field_ == Field::Shape) {
      current().has_shape = true;
      return state_ = State::ShapeItem, true;
    }
    if (state_ == State::FieldValue && field_ == Field::Offsets) {
      current().has_offsets = true;
      offsets_seen_ = 0;
      return state_ = State::OffsetItem, true;
    }
    return fail("an array where {} was expected", expected());
  }
  bool end_array() override {
    if (skip_) return skip_end();
    if (state_ == State::ShapeItem) return state_ = State::FieldKey, true;
    if (state_ == State::OffsetItem) {
      if (offsets_seen_ != 2) return fail("tensor '{}': data_offsets has {} numbers, not 2", current().name, offsets_seen_);
      return state_ = State::FieldKey, true;
    }
    return fail("unexpected end of array where {} was expected", expected());
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    if (error.empty()) error = fmt::format("invalid JSON at byte {}: {}", position, ex.what());
    return false;
  }

 private:
  enum class State { Start, TopKey, TopValue, MetadataKey, MetadataValue, FieldKey, FieldValue, ShapeItem, OffsetItem, Done };
  enum class Field { DType, Shape, Offsets };

  RawEntry& current() { return entries.back(); }
  const char* expected() const {
    switch (state_) {
      case State::Start: return "the header object";
      case State::TopValue: return in_metadata_ ? "the __metadata__ object" : "a tensor object";
      case State::MetadataValue: return "a string (__metadata__ values are strings)";
      case State::FieldValue:
        return field_ == Field::DType ? "a dtype string" : field_ == Field::Shape ? "a shape array" : "a data_offsets array";
      case State::ShapeItem: return "a dimension (unsigned integer)";
      case State::OffsetItem: return "an offset (unsigned integer)";
      default: return "a key";
    }
  }
  template <class... Args>
  bool fail(fmt::format_string<Args...> f, Args&&... args) {
    if (error.empty()) error = fmt::format(f, std::forward<Args>(args)...);
    return false;
  }
  // A skipped (unknown) field's value: a scalar ends it at depth 0, containers nest.
  bool skipped_scalar() {
    if (skip_depth_ == 0) skip_ = false;
    return true;
  }
  bool skip_end() {
    if (--skip_depth_ == 0) skip_ = false;
    return true;
  }

  State state_ = State::Start;
  Field field_ = Field::DType;
  bool in_metadata_ = false;
  bool skip_ = false;
  int64_t skip_depth_ = 0;
  int offsets_seen_ = 0;
  std::string meta_key_;
  std::set<std::string, std::less<>> top_keys_;
};

}  // namespace

// ---- File ----------------------------------------------------------------------------------------

struct File::Mapping {
  void* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base) ::munmap(base, size);
  }
  const uint8_t* bytes() const { return static_cast<const uint8_t*>(base); }
};

File::~File() = default;

std::shared_ptr<File> File::open(const std::string& path, const ReadOptions& options) {
  if (options.f8_as != DType::Float32 && options.f8_as != DType::Float16)
    raise(Code::InvalidArgument, "safetensors::File::open: f8_as must be float32 or float16, not {}", dtype_name(options.f8_as));
  std::shared_ptr<File> file(new File());
  file->path_ = path;
  file->options_ = options;

  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) raise_errno(errno, path, "safetensors: open");
  auto mapping = std::make_shared<Mapping>();
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    raise_errno(err, path, "safetensors: stat");
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    raise(Code::InvalidArgument, "safetensors: {}: is a directory (Model::open reads directories)", path);
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size > 0) {
    // PROT_READ: loaded tensors are immutable, and a stray write should fault, not change the file.
    void* base = ::mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      raise_errno(err, path, "safetensors: mmap");
    }
    mapping->base = base;
    mapping->size = file_size;
  }
  ::close(fd);
  file->mapping_ = mapping;
  const uint8_t* bytes = mapping->bytes();

  if (file_size < kLengthBytes)
    raise(Code::DataLoss, "safetensors: {}: file is {} bytes, shorter than the 8-byte header length", path, file_size);
  const uint64_t n = io::internal::load_le64(bytes);
  if (n > kMaxHeaderBytes)
    raise(Code::DataLoss, "safetensors: {}: header length {} is over the limit of {} bytes", path, n, kMaxHeaderBytes);
  if (n > file_size - kLengthBytes)
    raise(Code::DataLoss, "safetensors: {}: header length {} runs past the end of the {}-byte file", path, n, file_size);
  file->data_start_ = kLengthBytes + n;
  const uint64_t data_len = file_size - file->data_start_;

  HeaderHandler handler;
  const char* json = reinterpret_cast<const char*>(bytes + kLengthBytes);
  // nlohmann's lexer takes a NUL byte for the end of the input, so "{}" padded with NULs would
  // pass; no JSON text holds one (strings must escape control characters), and serde rejects it.
  if (const void* nul = std::memchr(json, 0, n))
    raise(Code::DataLoss, "safetensors: {}: header: invalid JSON: NUL byte at header byte {}", path,
          static_cast<const char*>(nul) - json);
  if (!nlohmann::json::sax_parse(json, json + n, &handler) || !handler.error.empty()) {
    raise(handler.error_code, "safetensors: {}: header: {}", path,
          handler.error.empty() ? std::string("not a JSON object") : handler.error);
  }
  file->metadata_ = std::move(handler.metadata);

  // The reference's order: by data_offsets (begin, then end), the ties between empty tensors kept
  // in header order. The offsets must then tile [0, data_len) exactly.
  std::vector<RawEntry>& raw = handler.entries;
  std::stable_sort(raw.begin(), raw.end(), [](const RawEntry& a, const RawEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t expect = 0;
  file->tensors_.reserve(raw.size());
  for (RawEntry& r : raw) {
    if (r.begin < expect)
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': data_offsets [{}, {}] overlap the previous tensor, which ends at {}",
            path, r.name, r.begin, r.end, expect);
    if (r.begin > expect)
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': data_offsets [{}, {}] leave bytes {}..{} covered by no tensor",
            path, r.name, r.begin, r.end, expect, r.begin);
    if (r.end < r.begin)
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': data_offsets [{}, {}] end before they begin", path, r.name, r.begin, r.end);
    const DTypeInfo* info = dtype_info(r.dtype);
    if (!info) raise(Code::DataLoss, "safetensors: {}: tensor '{}': unknown dtype '{}'", path, r.name, r.dtype);
    uint64_t elements = 1;
    for (uint64_t d : r.dims) {
      if (d > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || __builtin_mul_overflow(elements, d, &elements))
        raise(Code::DataLoss, "safetensors: {}: tensor '{}': shape {} overflows the element count", path, r.name,
              fmt::format("[{}]", fmt::join(r.dims, ",")));
    }
    uint64_t bits;
    if (__builtin_mul_overflow(elements, uint64_t{info->bits}, &bits) || elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': {} elements of {} overflow the byte count", path, r.name, elements, r.dtype);
    if (bits % 8 != 0)
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': {} elements of {} do not fill whole bytes", path, r.name, elements, r.dtype);
    if (r.end - r.begin != bits / 8)
      raise(Code::DataLoss, "safetensors: {}: tensor '{}': data_offsets [{}, {}] hold {} bytes, but {} {} of {} need {}", path,
            r.name, r.begin, r.end, r.end - r.begin, r.dtype, fmt::format("[{}]", fmt::join(r.dims, ",")),
            elements, bits / 8);
    expect = r.end;

    TensorEntry e;
    e.name = std::move(r.name);
    e.dtype = std::move(r.dtype);
    e.cairn_dtype = info->f8 != F8Kind::None ? f8_target(info->f8, options.f8_as) : info->cairn;
    for (uint64_t d : r.dims) e.shape.push_back(static_cast<int64_t>(d));
    e.begin = r.begin;
    e.end = r.end;
    file->tensors_.push_back(std::move(e));
  }
  if (expect > data_len)
    raise(Code::DataLoss, "safetensors: {}: tensors end at data byte {}, past the end of the data ({} bytes): truncated file?",
          path, expect, data_len);
  if (expect < data_len)
    raise(Code::DataLoss, "safetensors: {}: {} trailing bytes after the last tensor (data is {} bytes, tensors end at {})", path,
          data_len - expect, data_len, expect);

  for (size_t i = 0; i < file->tensors_.size(); ++i) file->by_name_.emplace(file->tensors_[i].name, i);
  // A malformed checksum is corruption too; a checksum of a tensor not in the file is ignored
  // (a tool that dropped tensors but kept the metadata).
  for (const auto& [key, value] : file->metadata_) {
    if (key.compare(0, kChecksumKeyPrefix.size(), kChecksumKeyPrefix) != 0) continue;
    const bool ok = value.size() == 21 && value.compare(0, 5, "xxh3:") == 0 &&
                    std::all_of(value.begin() + 5, value.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (!ok) raise(Code::DataLoss, "safetensors: {}: metadata '{}' = '{}' is not \"xxh3:<16 hex digits>\"", path, key, value);
  }
  return file;
}

const TensorEntry* File::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::string_view File::raw_bytes(const TensorEntry& e) const {
  return std::string_view(reinterpret_cast<const char*>(mapping_->bytes() + data_start_ + e.begin), e.end - e.begin);
}

bool File::verify(std::string_view name) const {
  const TensorEntry* e = find(name);
  if (!e) raise(Code::NotFound, "safetensors: {}: no tensor '{}'", path_, name);
  auto it = metadata_.find(std::string(kChecksumKeyPrefix) + e->name);
  if (it == metadata_.end()) return false;
  const std::string got = checksum_string(raw_bytes(*e));
  if (got != it->second)
    raise(Code::DataLoss, "safetensors: {}: tensor '{}': checksum mismatch (stored {}, data has {})", path_, e->name, it->second, got);
  return true;
}

Tensor File::load(std::string_view name, Device& device) const {
  const TensorEntry* e = find(name);
  if (!e) raise(Code::NotFound, "safetensors: {}: no tensor '{}'", path_, name);
  const DTypeInfo* info = dtype_info(e->dtype);
  if (e->cairn_dtype == DType::Invalid)
    raise(Code::Unimplemented, "safetensors: {}: tensor '{}' has dtype {}, which Cairn has no dtype for", path_, e->name, e->dtype);
  if (options_.verify_checksums) verify(e->name);
  const std::string_view bytes = raw_bytes(*e);
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());

  if (info->f8 != F8Kind::None) {
    if (device.is_host()) {
      Tensor t = Tensor::allocate(device, e->cairn_dtype, e->shape);
      convert_f8(info->f8, e->cairn_dtype, src, bytes.size(), t.raw_mutable_data());
      return t;
    }
    std::vector<uint8_t> staging(bytes.size() * dtype_size(e->cairn_dtype));
    convert_f8(info->f8, e->cairn_dtype, src, bytes.size(), staging.data());
    Tensor t = Tensor::allocate(device, e->cairn_dtype, e->shape);
    device.write(*t.buffer(), staging.data(), staging.size());
    return t;
  }
  const size_t elem = dtype_size(e->cairn_dtype);
  // Zero-copy needs the element alignment the kernels read with; the data section starts at 8 + N
  // (N a multiple of 8 from the reference writer) and offsets are sums of sizes, so this usually holds.
  if (device.is_host() && options_.zero_copy && reinterpret_cast<uintptr_t>(src) % elem == 0)
    return Tensor::borrow_host(device, e->cairn_dtype, e->shape, src, mapping_);
  Tensor t = Tensor::allocate(device, e->cairn_dtype, e->shape);
  if (device.is_host()) {
    if (!bytes.empty()) std::memcpy(t.raw_mutable_data(), src, bytes.size());
  } else {
    device.write(*t.buffer(), src, bytes.size());
  }
  return t;
}

// ---- Writer --------------------------------------------------------------------------------------

namespace {

// JSON string escaping as serde_json writes it: the two-character escapes for \" \\ \b \f \n \r \t,
// \u00xx (lowercase) for other control characters, everything else (UTF-8 included) as is.
void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          out += fmt::format("\\u{:04x}", u);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Names and metadata must be UTF-8: the header is JSON, and readers (ours included) reject it
// otherwise. nlohmann's serializer checks the encoding.
void check_utf8(std::string_view s, const char* fn, const char* what) {
  try {
    (void)nlohmann::json(std::string(s)).dump();
  } catch (const nlohmann::json::exception&) {
    raise(Code::InvalidArgument, "{}: {} '{}' is not valid UTF-8", fn, what, s);
  }
}

struct Prepared {
  std::string header;  // the 8-byte length, the JSON and its padding
  // Tensors in file order, with their bytes (a host pointer, or staged from another device).
  std::vector<std::string_view> data;
  std::vector<std::vector<uint8_t>> staging;
  uint64_t data_bytes = 0;
};

Prepared prepare(const std::vector<std::pair<std::string, Tensor>>& tensors, const WriteOptions& options,
                 const char* fn) {
  struct Item {
    const std::string* name;
    const Tensor* tensor;
    size_t rank;
  };
  std::vector<Item> items;
  items.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    if (!t.valid()) raise(Code::InvalidArgument, "{}: tensor '{}' is empty (no buffer)", fn, name);
    if (name == kMetadataKey) raise(Code::InvalidArgument, "{}: a tensor cannot be named '{}'", fn, kMetadataKey);
    check_utf8(name, fn, "tensor name");
    if (t.dtype() == DType::String) raise(Code::InvalidArgument, "{}: tensor '{}' is a string tensor: safetensors holds numbers only", fn, name);
    size_t rank;
    try {
      rank = dtype_rank(t.dtype());
    } catch (const Error&) {
      raise(Code::InvalidArgument, "{}: tensor '{}' has dtype {}, which safetensors has no dtype for", fn, name, dtype_name(t.dtype()));
    }
    items.push_back({&name, &t, rank});
  }
  // tensor.rs `prepare`: descending dtype (the enum order, a proxy for alignment), then by name.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.rank != b.rank ? a.rank > b.rank : *a.name < *b.name;
  });
  for (size_t i = 1; i < items.size(); ++i)
    if (*items[i].name == *items[i - 1].name) raise(Code::InvalidArgument, "{}: duplicate tensor name '{}'", fn, *items[i].name);

  std::map<std::string, std::string> metadata = options.metadata;
  for (const auto& [k, v] : metadata) {
    check_utf8(k, fn, "metadata key");
    check_utf8(v, fn, "metadata value");
  }
  Prepared p;
  p.staging.resize(items.size());
  p.data.reserve(items.size());
  std::string json = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor& t = *items[i].tensor;
    const size_t n = static_cast<size_t>(t.num_elements()) * dtype_size(t.dtype());
    const char* src;
    if (t.device()->is_host()) {
      src = static_cast<const char*>(t.raw_data());
    } else {
      p.staging[i].resize(n);
      t.device()->read(*t.buffer(), p.staging[i].data(), n);
      src = reinterpret_cast<const char*>(p.staging[i].data());
    }
    p.data.emplace_back(src, n);
    if (options.checksums) metadata[std::string(kChecksumKeyPrefix) + *items[i].name] = checksum_string(p.data.back());
  }
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) json.push_back(',');
      first = false;
      append_json_string(json, k);
      json.push_back(':');
      append_json_string(json, v);
    }
    json += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor& t = *items[i].tensor;
    if (!metadata.empty() || i > 0) json.push_back(',');
    append_json_string(json, *items[i].name);
    json += fmt::format(R"(:{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", kDTypes[items[i].rank].name,
                        fmt::join(t.shape().dims(), t.shape().dims() + t.rank(), ","), offset, offset + p.data[i].size());
    offset += p.data[i].size();
  }
  json += "}";
  json.resize((json.size() + 7) / 8 * 8, ' ');
  if (json.size() > kMaxHeaderBytes)
    raise(Code::InvalidArgument, "{}: the header would be {} bytes, over safetensors' limit of {}", fn, json.size(), kMaxHeaderBytes);
  p.header.resize(kLengthBytes);
  io::internal::store_le64(reinterpret_cast<uint8_t*>(p.header.data()), json.size());
  p.header += json;
  p.data_bytes = offset;
  return p;
}

// Writes `p` to a temporary file beside `path` and renames it into place.
void write_prepared(const std::string& path, const Prepared& p) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) raise_errno(errno, path, "safetensors::write_file: create temporary file");
  try {
    if (::fchmod(fd, 0644) != 0) raise_errno(errno, tmp, "safetensors::write_file: chmod");
    io::internal::write_all(fd, p.header.data(), p.header.size(), tmp);
    for (std::string_view d : p.data) io::internal::write_all(fd, d.data(), d.size(), tmp);
    if (::fsync(fd) != 0) raise_errno(errno, tmp, "safetensors::write_file: fsync");
    int rc = ::close(fd);
    fd = -1;
    if (rc != 0 && errno != EINTR) raise_errno(errno, tmp, "safetensors::write_file: close");
    if (::rename(tmp.c_str(), path.c_str()) != 0) raise_errno(errno, path, "safetensors::write_file: rename into place");
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace

std::string serialize(const std::vector<std::pair<std::string, Tensor>>& tensors, const WriteOptions& options) {
  Prepared p = prepare(tensors, options, "safetensors::serialize");
  std::string out = p.header;
  out.reserve(out.size() + p.data_bytes);
  for (std::string_view d : p.data) out.append(d.data(), d.size());
  return out;
}

void write_file(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                const WriteOptions& options) {
  write_prepared(path, prepare(tensors, options, "safetensors::write_file"));
}

// ---- Sharded models ------------------------------------------------------------------------------

namespace {

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
std::string parent_dir(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}
std::string join(const std::string& dir, std::string_view name) { return dir + "/" + std::string(name); }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The whole index file; bounded like a header, since it is one JSON object of names.
std::string read_index_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) raise_errno(errno, path, "safetensors: open index");
  std::string text;
  try {
    const uint64_t size = io::internal::file_size(fd, path);
    if (size > kMaxHeaderBytes)
      raise(Code::DataLoss, "safetensors: {}: index is {} bytes, over the limit of {}", path, size, kMaxHeaderBytes);
    text.resize(size);
    text.resize(io::internal::pread_full(fd, text.data(), size, 0, path));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

// "model-00002-of-00005.safetensors": the names write_sharded makes (and removes when stale).
bool is_shard_name(std::string_view name) {
  constexpr std::string_view kPrefix = "model-", kMid = "-of-", kSuffix = ".safetensors";
  if (name.size() != kPrefix.size() + 5 + kMid.size() + 5 + kSuffix.size()) return false;
  if (name.substr(0, kPrefix.size()) != kPrefix || name.substr(kPrefix.size() + 5, kMid.size()) != kMid ||
      !ends_with(name, kSuffix))
    return false;
  auto digits = [](std::string_view d) { return std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; }); };
  return digits(name.substr(kPrefix.size(), 5)) && digits(name.substr(kPrefix.size() + 5 + kMid.size(), 5));
}

}  // namespace

Model Model::open(const std::string& path_or_dir, const ReadOptions& options) {
  Model m;
  std::string index_path, single_path;
  if (is_directory(path_or_dir)) {
    if (exists(join(path_or_dir, kIndexFileName))) {
      index_path = join(path_or_dir, kIndexFileName);
    } else if (exists(join(path_or_dir, kSingleFileName))) {
      single_path = join(path_or_dir, kSingleFileName);
    } else {
      raise(Code::NotFound, "safetensors::Model::open: {} holds neither {} nor {}", path_or_dir, kIndexFileName, kSingleFileName);
    }
  } else if (ends_with(path_or_dir, ".json")) {
    index_path = path_or_dir;
  } else {
    single_path = path_or_dir;
  }
  if (!single_path.empty()) {
    m.files_.push_back(File::open(single_path, options));
    for (const TensorEntry& e : m.files_[0]->tensors()) m.file_index_.emplace(e.name, 0);
    return m;
  }

  // The weight map, with duplicate names caught while parsing (a DOM keeps only the last one).
  const std::string text = read_index_text(index_path);
  std::string duplicate;
  std::string top_key;
  std::set<std::string> seen;
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      if (event == nlohmann::json::parse_event_t::key) {
        if (depth == 1) top_key = parsed.get<std::string>();
        if (depth == 2 && top_key == "weight_map" && !seen.insert(parsed.get<std::string>()).second && duplicate.empty())
          duplicate = parsed.get<std::string>();
      }
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    raise(Code::DataLoss, "safetensors: {}: index is not valid JSON: {}", index_path, e.what());
  }
  if (!duplicate.empty()) raise(Code::DataLoss, "safetensors: {}: weight_map names tensor '{}' twice", index_path, duplicate);
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    raise(Code::DataLoss, "safetensors: {}: index has no \"weight_map\" object", index_path);

  const std::string dir = parent_dir(index_path);
  std::map<std::string, size_t> shard_of_file;
  std::vector<std::pair<std::string, std::string>> wanted;  // tensor, shard file name
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) raise(Code::DataLoss, "safetensors: {}: weight_map['{}'] is not a file name", index_path, name);
    const std::string f = file.get<std::string>();
    // Shards live beside the index: a path elsewhere would let an index read any file.
    if (f.empty() || f == "." || f == ".." || f.find('/') != std::string::npos || f.find('\0') != std::string::npos)
      raise(Code::DataLoss, "safetensors: {}: weight_map['{}'] = '{}' is not a file name in the index's directory", index_path,
            name, f);
    shard_of_file.emplace(f, 0);
    wanted.emplace_back(name, f);
  }
  for (auto& [f, position] : shard_of_file) {  // in name order, which is shard order
    position = m.files_.size();
    m.files_.push_back(File::open(join(dir, f), options));
  }
  for (const auto& [name, f] : wanted) {
    const size_t position = shard_of_file.at(f);
    if (!m.files_[position]->find(name))
      raise(Code::DataLoss, "safetensors: {}: weight_map puts tensor '{}' in {}, which has no such tensor", index_path, name, f);
    m.file_index_.emplace(name, position);
  }
  return m;
}

std::vector<std::string> Model::names() const {
  std::vector<std::string> out;
  out.reserve(file_index_.size());
  for (const auto& kv : file_index_) out.push_back(kv.first);
  return out;
}

const File* Model::file_of(std::string_view name) const {
  auto it = file_index_.find(name);
  return it == file_index_.end() ? nullptr : files_[it->second].get();
}

const TensorEntry* Model::find(std::string_view name) const {
  const File* f = file_of(name);
  return f ? f->find(name) : nullptr;
}

Tensor Model::load(std::string_view name, Device& device) const {
  const File* f = file_of(name);
  if (!f) raise(Code::NotFound, "safetensors::Model::load: no tensor '{}'", name);
  return f->load(name, device);
}

const std::map<std::string, std::string>& Model::metadata() const {
  static const std::map<std::string, std::string> kEmpty;
  return files_.empty() ? kEmpty : files_[0]->metadata();
}

void write_sharded(const std::string& dir, const std::vector<std::pair<std::string, Tensor>>& tensors,
                   uint64_t max_shard_bytes, const WriteOptions& options) {
  if (max_shard_bytes == 0) raise(Code::InvalidArgument, "safetensors::write_sharded: max_shard_bytes must be positive");
  if (!is_directory(dir)) raise(Code::NotFound, "safetensors::write_sharded: {} is not a directory", dir);
  // Greedy, in the caller's order, as huggingface_hub's split_state_dict_into_shards does.
  std::vector<std::vector<std::pair<std::string, Tensor>>> shards(1);
  uint64_t shard_bytes = 0, total = 0;
  for (const auto& item : tensors) {
    const uint64_t n = static_cast<uint64_t>(item.second.num_elements()) * dtype_size(item.second.dtype());
    if (!shards.back().empty() && shard_bytes + n > max_shard_bytes) {
      shards.emplace_back();
      shard_bytes = 0;
    }
    shards.back().push_back(item);
    shard_bytes += n;
    total += n;
  }
  if (shards.size() > 99999) raise(Code::InvalidArgument, "safetensors::write_sharded: {} shards is over 99999", shards.size());

  std::set<std::string> written;
  if (shards.size() == 1) {
    write_file(join(dir, kSingleFileName), shards[0], options);
    written.insert(std::string(kSingleFileName));
  } else {
    nlohmann::json weight_map = nlohmann::json::object();
    std::vector<std::string> names;
    for (size_t k = 0; k < shards.size(); ++k)
      names.push_back(fmt::format("model-{:05d}-of-{:05d}.safetensors", k + 1, shards.size()));
    // Checks names (duplicates across shards too) before any file is written.
    for (size_t k = 0; k < shards.size(); ++k)
      for (const auto& item : shards[k])
        if (!weight_map.emplace(item.first, names[k]).second)
          raise(Code::InvalidArgument, "safetensors::write_sharded: duplicate tensor name '{}'", item.first);
    for (size_t k = 0; k < shards.size(); ++k) {
      write_file(join(dir, names[k]), shards[k], options);
      written.insert(names[k]);
    }
    nlohmann::json index = {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}};
    // As transformers writes it: json.dumps(index, indent=2, sort_keys=True) + "\n".
    Prepared p;
    p.header = index.dump(2) + "\n";
    write_prepared(join(dir, kIndexFileName), p);
    written.insert(std::string(kIndexFileName));
  }
  // What an earlier write left that the new set does not replace: an index would shadow
  // model.safetensors, and old shards would sit beside the new ones.
  std::vector<std::string> stale;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* ent = ::readdir(d)) {
      std::string name = ent->d_name;
      if (written.count(name)) continue;
      if (is_shard_name(name) || name == kIndexFileName || name == kSingleFileName) stale.push_back(name);
    }
    ::closedir(d);
  }
  for (const std::string& name : stale) ::unlink(join(dir, name).c_str());
}

}  // namespace cairn::safetensors
