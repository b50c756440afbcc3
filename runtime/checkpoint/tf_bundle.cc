// TensorFlow tensor_bundle V2 reader and writer (tf_bundle.h).
#include "runtime/checkpoint/tf_bundle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "runtime/checkpoint/format.h"  // kEnforceChecksums (off only in fuzzing builds)
#include "runtime/checkpoint/internal/io.h"
#include "runtime/checkpoint/tf_table.h"
#include "runtime/io/crc32c.h"

namespace cairn::tfckpt {

using ckpt::internal::Fd;
using ckpt::internal::raise_errno;

namespace {

constexpr int kTensorBundleVersion = 1;  // tensor_bundle.cc's kTensorBundleVersion
constexpr int32_t kMaxShards = 1 << 20;
constexpr int32_t kDtString = 7;

// TensorFlow's DataType names (types.proto) and element sizes (0: not a fixed-size dtype). Names
// make errors readable for dtypes Cairn lacks; sizes let open() check an entry's size anyway.
struct TfType {
  const char* name;
  int size;
};
constexpr TfType kTfTypes[] = {
    {"invalid", 0},    {"float32", 4},  {"float64", 8},       {"int32", 4},          {"uint8", 1},
    {"int16", 2},      {"int8", 1},     {"string", 0},        {"complex64", 8},      {"int64", 8},
    {"bool", 1},       {"qint8", 1},    {"quint8", 1},        {"qint32", 4},         {"bfloat16", 2},
    {"qint16", 2},     {"quint16", 2},  {"uint16", 2},        {"complex128", 16},    {"float16", 2},
    {"resource", 0},   {"variant", 0},  {"uint32", 4},        {"uint64", 8},         {"float8_e5m2", 1},
    {"float8_e4m3fn", 1}, {"float8_e4m3fnuz", 1}, {"float8_e4m3b11fnuz", 1}, {"float8_e5m2fnuz", 1},
    {"int4", 0},       {"uint4", 0},
};
constexpr int kNumTfTypes = sizeof(kTfTypes) / sizeof(kTfTypes[0]);

int tf_dtype_size(int32_t t) { return t > 0 && t < kNumTfTypes ? kTfTypes[t].size : 0; }

// The Cairn DType for a TensorFlow DataType number, or Invalid. The numbers are the same by design
// (runtime/core/dtype.h); only the ones Cairn has map.
DType cairn_dtype(int32_t t) {
  switch (t) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 14: case 19:
      return static_cast<DType>(t);
    default:
      return DType::Invalid;
  }
}

// ---- protobuf wire format (BundleHeaderProto, BundleEntryProto) ------------------------------------

enum Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };

// A bounded protobuf field walker; malformed input raises DataLoss naming the file, the key and the
// message being read.
struct Pb {
  const uint8_t* p;
  const uint8_t* end;
  std::string_view file;
  std::string_view key;
  const char* msg;

  [[noreturn]] void fail(const char* what) const {
    raise(Code::DataLoss, "{}: entry '{}': malformed {} ({})", file, key, msg, what);
  }
  bool more() const { return p < end; }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (p >= end) fail("truncated varint");
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  // Reads a tag; returns the field number and sets `wire`.
  uint32_t tag(uint32_t& wire) {
    const uint64_t t = varint();
    wire = static_cast<uint32_t>(t & 7);
    if ((t >> 3) == 0 || (t >> 3) > UINT32_MAX) fail("bad field number");
    return static_cast<uint32_t>(t >> 3);
  }
  Pb sub() {
    const uint64_t n = varint();
    if (n > static_cast<uint64_t>(end - p)) fail("length past the end");
    Pb s{p, p + n, file, key, msg};
    p += n;
    return s;
  }
  uint32_t fixed32() {
    if (end - p < 4) fail("truncated fixed32");
    const uint32_t v = p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
    p += 4;
    return v;
  }
  void skip(uint32_t wire) {
    switch (wire) {
      case kVarint: varint(); return;
      case kFixed64: if (end - p < 8) fail("truncated fixed64"); p += 8; return;
      case kLen: sub(); return;
      case kFixed32: fixed32(); return;
      default: fail("unsupported wire type");
    }
  }
};

struct Header {
  int32_t num_shards = 0;
  int32_t endianness = 0;
  int32_t min_consumer = 0;
};

Header parse_header(std::string_view v, std::string_view file) {
  Pb pb{reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data()) + v.size(), file, "",
        "BundleHeaderProto"};
  Header h;
  while (pb.more()) {
    uint32_t wire;
    const uint32_t f = pb.tag(wire);
    if (f == 1 && wire == kVarint) {
      h.num_shards = static_cast<int32_t>(pb.varint());
    } else if (f == 2 && wire == kVarint) {
      h.endianness = static_cast<int32_t>(pb.varint());
    } else if (f == 3 && wire == kLen) {
      Pb ver = pb.sub();
      while (ver.more()) {
        uint32_t w;
        const uint32_t g = ver.tag(w);
        if (g == 2 && w == kVarint) h.min_consumer = static_cast<int32_t>(ver.varint());
        else ver.skip(w);  // producer, bad_consumers: nothing to check for version 1
      }
    } else {
      pb.skip(wire);
    }
  }
  return h;
}

using Extent = std::pair<int64_t, int64_t>;  // start, length (-1: the whole dimension)

struct ParsedEntry {
  BundleEntry e;
  std::vector<std::vector<Extent>> slices;
};

ParsedEntry parse_entry(std::string_view key, std::string_view v, std::string_view file) {
  Pb pb{reinterpret_cast<const uint8_t*>(v.data()), reinterpret_cast<const uint8_t*>(v.data()) + v.size(), file, key,
        "BundleEntryProto"};
  ParsedEntry out;
  BundleEntry& e = out.e;
  e.key.assign(key);
  int64_t dims[kMaxRank];
  size_t rank = 0;
  bool unknown_rank = false;
  while (pb.more()) {
    uint32_t wire;
    const uint32_t f = pb.tag(wire);
    if (f == 1 && wire == kVarint) {
      const uint64_t t = pb.varint();
      e.tf_dtype = t > INT32_MAX ? -1 : static_cast<int32_t>(t);
    } else if (f == 2 && wire == kLen) {
      Pb shape = pb.sub();
      shape.msg = "TensorShapeProto";
      while (shape.more()) {
        uint32_t w;
        const uint32_t g = shape.tag(w);
        if (g == 2 && w == kLen) {
          Pb dim = shape.sub();
          int64_t size = 0;
          while (dim.more()) {
            uint32_t dw;
            if (dim.tag(dw) == 1 && dw == kVarint) size = static_cast<int64_t>(dim.varint());
            else dim.skip(dw);
          }
          if (rank >= static_cast<size_t>(kMaxRank))
            raise(Code::InvalidArgument, "{}: entry '{}' has rank > {}, more than Cairn's tensors hold", file, key,
                  kMaxRank);
          dims[rank++] = size;
        } else if (g == 3 && w == kVarint) {
          unknown_rank = shape.varint() != 0;
        } else {
          shape.skip(w);
        }
      }
    } else if (f == 3 && wire == kVarint) {
      e.shard_id = static_cast<int32_t>(pb.varint());
    } else if (f == 4 && wire == kVarint) {
      e.offset = static_cast<int64_t>(pb.varint());
    } else if (f == 5 && wire == kVarint) {
      e.size = static_cast<int64_t>(pb.varint());
    } else if (f == 6 && wire == kFixed32) {
      e.masked_crc32c = pb.fixed32();
    } else if (f == 7 && wire == kLen) {
      Pb slice = pb.sub();
      slice.msg = "TensorSliceProto";
      std::vector<Extent> extents;
      while (slice.more()) {
        uint32_t w;
        if (slice.tag(w) == 1 && w == kLen) {
          Pb ext = slice.sub();
          Extent x{0, -1};
          while (ext.more()) {
            uint32_t ew;
            const uint32_t h = ext.tag(ew);
            if (h == 1 && ew == kVarint) x.first = static_cast<int64_t>(ext.varint());
            else if (h == 2 && ew == kVarint) x.second = static_cast<int64_t>(ext.varint());
            else ext.skip(ew);
          }
          if (extents.size() >= static_cast<size_t>(kMaxRank)) pb.fail("slice of too many dimensions");
          extents.push_back(x);
        } else {
          slice.skip(w);
        }
      }
      out.slices.push_back(std::move(extents));
      // A hostile entry could list millions of slices; each needs its own stored entry, so the
      // table's size bounds them already, but keep the count sane for the key encoder.
      if (out.slices.size() > (1u << 20)) pb.fail("too many slices");
    } else {
      pb.skip(wire);
    }
  }
  if (unknown_rank) raise(Code::DataLoss, "{}: entry '{}' has a shape of unknown rank", file, key);
  if (e.tf_dtype <= 0) raise(Code::DataLoss, "{}: entry '{}' has no valid dtype", file, key);
  for (size_t i = 0; i < rank; ++i)
    if (dims[i] < 0) raise(Code::DataLoss, "{}: entry '{}' has a negative dimension {}", file, key, dims[i]);
  try {
    e.shape = Shape::from(dims, rank, "tf bundle entry");
  } catch (const Error& err) {
    raise(Code::DataLoss, "{}: entry '{}': bad shape: {}", file, key, err.message());
  }
  if (e.shard_id < 0 || e.offset < 0 || e.size < 0)
    raise(Code::DataLoss, "{}: entry '{}' has a negative shard, offset or size", file, key);
  e.dtype = cairn_dtype(e.tf_dtype);
  e.has_slices = !out.slices.empty();
  return out;
}

void put_varint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}

void put_len_field(std::string& s, uint32_t field, const std::string& payload) {
  put_varint(s, field << 3 | kLen);
  put_varint(s, payload.size());
  s.append(payload);
}

// BundleEntryProto as TensorFlow serializes it: fields in number order, proto3 defaults omitted,
// the shape always present (TF sets it through mutable_shape()).
std::string encode_entry(const BundleEntry& e) {
  std::string s;
  put_varint(s, 1 << 3 | kVarint);
  put_varint(s, static_cast<uint64_t>(e.tf_dtype));
  std::string shape;
  for (int i = 0; i < e.shape.rank(); ++i) {
    std::string dim;
    if (e.shape[i] != 0) {
      put_varint(dim, 1 << 3 | kVarint);
      put_varint(dim, static_cast<uint64_t>(e.shape[i]));
    }
    put_len_field(shape, 2, dim);
  }
  put_len_field(s, 2, shape);
  if (e.shard_id != 0) { put_varint(s, 3 << 3 | kVarint); put_varint(s, static_cast<uint64_t>(e.shard_id)); }
  if (e.offset != 0) { put_varint(s, 4 << 3 | kVarint); put_varint(s, static_cast<uint64_t>(e.offset)); }
  if (e.size != 0) { put_varint(s, 5 << 3 | kVarint); put_varint(s, static_cast<uint64_t>(e.size)); }
  if (e.masked_crc32c != 0) {
    put_varint(s, 6 << 3 | kFixed32);
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(e.masked_crc32c >> (8 * i)));
  }
  return s;
}

// ---- OrderedCode keys of slices (tensorflow core/lib/strings/ordered_code.cc) ---------------------
// A partitioned variable's full entry lists its slices; each slice is stored under the key
// EncodeTensorNameSlice(name, slice): NumIncreasing(0), String(name), NumIncreasing(rank), then per
// dimension SignedNumIncreasing(start) and SignedNumIncreasing(length, -1 for the whole dimension).

void ordered_num(std::string& s, uint64_t v) {
  unsigned char buf[9];
  int n = 0;
  for (uint64_t x = v; x != 0; x >>= 8) ++n;
  buf[0] = static_cast<unsigned char>(n);
  for (int i = 0; i < n; ++i) buf[1 + i] = static_cast<unsigned char>(v >> (8 * (n - 1 - i)));
  s.append(reinterpret_cast<const char*>(buf), 1 + n);
}

void ordered_string(std::string& s, std::string_view v) {
  for (char c : v) {
    s.push_back(c);
    if (c == '\0') s.push_back('\xff');
    else if (c == '\xff') s.push_back('\0');
  }
  s.push_back('\0');
  s.push_back('\x01');
}

void ordered_signed(std::string& s, int64_t val) {
  // Length by the number of significant bits of val (or ~val when negative); the first bits of the
  // big-endian, sign-extended value are flipped to a unary length header.
  static const uint8_t kHeader[11][2] = {{0, 0},       {0x80, 0},    {0xc0, 0},    {0xe0, 0},
                                         {0xf0, 0},    {0xf8, 0},    {0xfc, 0},    {0xfe, 0},
                                         {0xff, 0},    {0xff, 0x80}, {0xff, 0xc0}};
  const uint64_t x = val < 0 ? ~static_cast<uint64_t>(val) : static_cast<uint64_t>(val);
  if (x < 64) {
    s.push_back(static_cast<char>(kHeader[1][0] ^ static_cast<uint8_t>(val)));
    return;
  }
  int bits = 0;
  for (uint64_t y = x; y != 0; y >>= 1) ++bits;   // Log2Floor(x) + 1
  const int len = bits / 7 + 1;  // TensorFlow's kBitsToLength: 7 value bits per byte, the sign bit included
  unsigned char buf[10];
  const unsigned char sign = val < 0 ? 0xff : 0;
  buf[0] = buf[1] = sign;
  for (int i = 0; i < 8; ++i) buf[2 + i] = static_cast<unsigned char>(static_cast<uint64_t>(val) >> (56 - 8 * i));
  unsigned char* begin = buf + 10 - len;
  begin[0] ^= kHeader[len][0];
  begin[1] ^= kHeader[len][1];
  s.append(reinterpret_cast<const char*>(begin), len);
}

std::string slice_key(std::string_view name, const std::vector<Extent>& extents) {
  std::string k;
  ordered_num(k, 0);
  ordered_string(k, name);
  ordered_num(k, extents.size());
  for (const Extent& x : extents) {
    ordered_signed(k, x.first);
    ordered_signed(k, x.second);
  }
  return k;
}

std::string shard_path(const std::string& prefix, int32_t shard, int32_t num_shards) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), ".data-%05d-of-%05d", shard, num_shards);
  return prefix + buf;
}

bool is_dir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string read_whole(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) raise_errno(errno, path, "open");
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) raise_errno(errno, path, "stat");
  std::string s(static_cast<size_t>(st.st_size), '\0');
  ckpt::internal::pread_exact(fd.get(), s.data(), s.size(), 0, path);
  return s;
}

}  // namespace

std::string tf_dtype_name(int32_t t) {
  if (t > 0 && t < kNumTfTypes) return kTfTypes[t].name;
  return "DataType(" + std::to_string(t) + ")";
}

BundleReader::~BundleReader() {
  for (int fd : shard_fds_)
    if (fd >= 0) ::close(fd);
}

std::shared_ptr<BundleReader> BundleReader::open(const std::string& prefix_or_dir) {
  std::string prefix = prefix_or_dir;
  if (is_dir(prefix)) {
    std::optional<std::string> latest = latest_checkpoint(prefix);
    if (!latest)
      raise(Code::NotFound, "BundleReader::open: directory '{}' has no `checkpoint` file naming an existing checkpoint",
            prefix);
    prefix = *latest;
  } else if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".index") == 0) {
    prefix.resize(prefix.size() - 6);
  }
  std::shared_ptr<BundleReader> r(new BundleReader());
  r->prefix_ = prefix;
  r->read_index(prefix + ".index");
  return r;
}

void BundleReader::read_index(const std::string& index_path) {
  const std::string index = read_whole(index_path);
  bool have_header = false;
  Header header;
  std::map<std::string, BundleEntry> slice_entries;
  std::vector<ParsedEntry> parsed;
  read_table(reinterpret_cast<const uint8_t*>(index.data()), index.size(), index_path,
             [&](std::string_view key, std::string_view value) {
               if (key.empty()) {
                 header = parse_header(value, index_path);
                 have_header = true;
                 return;
               }
               if (!have_header)
                 raise(Code::DataLoss, "{}: the header entry (key \"\") is missing", index_path);
               ParsedEntry pe = parse_entry(key, value, index_path);
               if (key[0] == '\0') slice_entries.emplace(std::string(key), std::move(pe.e));
               else parsed.push_back(std::move(pe));
             });
  if (!have_header) raise(Code::DataLoss, "{}: the header entry (key \"\") is missing", index_path);
  if (header.num_shards < 1 || header.num_shards > kMaxShards)
    raise(Code::DataLoss, "{}: header says {} shards", index_path, header.num_shards);
  if (header.endianness != 0)
    raise(Code::Unimplemented, "{}: the bundle was written big-endian (endianness {}); Cairn reads little-endian ones",
          index_path, header.endianness);
  if (header.min_consumer > kTensorBundleVersion)
    raise(Code::InvalidArgument, "{}: the bundle needs a reader of version {} (this one reads version {})", index_path,
          header.min_consumer, kTensorBundleVersion);
  num_shards_ = header.num_shards;
  shard_fds_.assign(static_cast<size_t>(num_shards_), -1);
  std::vector<int64_t> shard_sizes(static_cast<size_t>(num_shards_), -1);
  // Stored values never overlap (TensorFlow appends each once), so together they fit in the shards.
  // Checking that bounds every allocation a load makes by the data actually on disk, whatever
  // shapes, slice lists or offsets a hostile index claims.
  int64_t stored_total = 0, shards_total = 0;

  // Every stored value must lie inside its shard, and a fixed-size dtype's size must match its shape.
  auto check_stored = [&](const BundleEntry& e) {
    if (e.shard_id >= num_shards_)
      raise(Code::DataLoss, "{}: entry '{}' is in shard {} of {}", index_path, e.key, e.shard_id, num_shards_);
    const size_t s = static_cast<size_t>(e.shard_id);
    if (shard_fds_[s] < 0) {
      const std::string path = shard_path(prefix_, e.shard_id, num_shards_);
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) raise_errno(errno, path, "open data shard");
      shard_fds_[s] = fd;
      struct stat st;
      if (::fstat(fd, &st) != 0) raise_errno(errno, path, "stat");
      shard_sizes[s] = st.st_size;
      shards_total += st.st_size;
    }
    if (e.offset > shard_sizes[s] || e.size > shard_sizes[s] - e.offset)
      raise(Code::DataLoss, "{}: entry '{}' [{}, +{}) lies outside its data shard of {} bytes", index_path, e.key,
            e.offset, e.size, shard_sizes[s]);
    stored_total += e.size;
    if (stored_total > shards_total)
      raise(Code::DataLoss, "{}: entries up to '{}' store {} bytes, more than the {} bytes of their data shards",
            index_path, e.key, stored_total, shards_total);
    const int es = tf_dtype_size(e.tf_dtype);
    if (es > 0 && e.shape.num_elements() > INT64_MAX / es)
      raise(Code::DataLoss, "{}: entry '{}' of shape {} is too large", index_path, e.key, e.shape.str());
    if (es > 0 && e.size != e.shape.num_elements() * es)
      raise(Code::DataLoss, "{}: entry '{}' is {}{} ({} bytes) but stores {} bytes", index_path, e.key,
            tf_dtype_name(e.tf_dtype), e.shape.str(), e.shape.num_elements() * es, e.size);
    // A string tensor stores at least a 1-byte varint per element and the 4-byte length checksum.
    if (e.tf_dtype == kDtString && e.shape.num_elements() > 0 && (e.size < 4 || e.size - 4 < e.shape.num_elements()))
      raise(Code::DataLoss, "{}: string entry '{}' of {} elements stores only {} bytes", index_path, e.key,
            e.shape.num_elements(), e.size);
  };

  entries_.reserve(parsed.size());
  for (ParsedEntry& pe : parsed) {
    if (pe.e.has_slices) {
      // The value is assembled from slices, each stored under its own key: check they all exist,
      // fit the full shape and hold the same dtype.
      if (tf_dtype_size(pe.e.tf_dtype) == 0)
        raise(Code::Unimplemented, "{}: partitioned entry '{}' of dtype {} is not supported", index_path, pe.e.key,
              tf_dtype_name(pe.e.tf_dtype));
      int64_t covered = 0;
      auto& extents = slice_extents_[pe.e.key];
      for (auto& sl : pe.slices) {
        if (sl.size() != static_cast<size_t>(pe.e.shape.rank()))
          raise(Code::DataLoss, "{}: entry '{}': a slice has {} dimensions, the value {}", index_path, pe.e.key,
                sl.size(), pe.e.shape.rank());
        const std::string k = slice_key(pe.e.key, sl);
        auto it = slice_entries.find(k);
        if (it == slice_entries.end())
          raise(Code::DataLoss, "{}: entry '{}': a slice's stored entry is missing", index_path, pe.e.key);
        const BundleEntry& se = it->second;
        int64_t n = 1;
        for (size_t d = 0; d < sl.size(); ++d) {
          const int64_t full = pe.e.shape[static_cast<int>(d)];
          if (sl[d].second == -1) sl[d] = {0, full};
          if (sl[d].first < 0 || sl[d].second < 0 || sl[d].first > full || sl[d].second > full - sl[d].first ||
              se.shape.rank() != pe.e.shape.rank() || se.shape[static_cast<int>(d)] != sl[d].second)
            raise(Code::DataLoss, "{}: entry '{}': a slice does not fit the value's shape {}", index_path, pe.e.key,
                  pe.e.shape.str());
          n *= sl[d].second;
        }
        if (se.tf_dtype != pe.e.tf_dtype)
          raise(Code::DataLoss, "{}: entry '{}': a slice holds {}, the value {}", index_path, pe.e.key,
                tf_dtype_name(se.tf_dtype), tf_dtype_name(pe.e.tf_dtype));
        check_stored(se);
        covered += n;
        extents.push_back(sl);
        slices_.emplace(pe.e.key, se);
      }
      if (covered != pe.e.shape.num_elements())
        raise(Code::DataLoss, "{}: entry '{}': its slices hold {} of {} elements", index_path, pe.e.key, covered,
              pe.e.shape.num_elements());
    } else {
      check_stored(pe.e);
    }
    entries_.push_back(std::move(pe.e));
  }
}

const BundleEntry* BundleReader::find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const BundleEntry& e, std::string_view k) { return e.key < k; });
  return it != entries_.end() && it->key == key ? &*it : nullptr;
}

const BundleEntry& BundleReader::info(std::string_view key) const {
  const BundleEntry* e = find(key);
  if (!e) raise(Code::NotFound, "{}: no key named '{}'", prefix_, key);
  return *e;
}

void BundleReader::read_bytes(const BundleEntry& e, uint8_t* dst) const {
  const size_t s = static_cast<size_t>(e.shard_id);
  if (s >= shard_fds_.size() || shard_fds_[s] < 0)
    raise(Code::InvalidArgument, "{}: entry '{}' does not belong to this reader", prefix_, e.key);
  ckpt::internal::pread_exact(shard_fds_[s], dst, static_cast<size_t>(e.size), static_cast<uint64_t>(e.offset),
                              shard_path(prefix_, e.shard_id, num_shards_));
}

void BundleReader::check_crc(const BundleEntry& e, uint32_t crc) const {
  if (crc != io::unmask_crc(e.masked_crc32c) && ckpt::kEnforceChecksums)
    raise(Code::DataLoss, "{}: entry '{}': CRC32C mismatch (stored {:08x}, computed {:08x})", prefix_, e.key,
          io::unmask_crc(e.masked_crc32c), crc);
}

void BundleReader::assemble(const BundleEntry& e, uint8_t* dst) const {
  const size_t es = static_cast<size_t>(tf_dtype_size(e.tf_dtype));
  const int rank = e.shape.rank();
  int64_t stride[kMaxRank];
  for (int d = rank - 1, s = 1; d >= 0; --d) {
    stride[d] = s;
    s *= e.shape[d];
  }
  auto range = slices_.equal_range(e.key);
  const auto& extents = slice_extents_.at(e.key);
  size_t i = 0;
  std::vector<uint8_t> buf;
  for (auto it = range.first; it != range.second; ++it, ++i) {
    const BundleEntry& se = it->second;
    const auto& ext = extents[i];
    buf.resize(static_cast<size_t>(se.size));
    read_bytes(se, buf.data());
    check_crc(se, io::crc32c(buf.data(), buf.size()));
    if (se.size == 0) continue;
    if (rank == 0) {
      std::memcpy(dst, buf.data(), es);
      continue;
    }
    // Copy rows (runs along the last dimension) to their place in the full value.
    const int64_t row = ext[static_cast<size_t>(rank - 1)].second;
    const int64_t rows = se.shape.num_elements() / row;
    int64_t idx[kMaxRank] = {0};
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += (ext[static_cast<size_t>(d)].first + idx[d]) * stride[d];
      std::memcpy(dst + off * es, buf.data() + r * row * es, static_cast<size_t>(row) * es);
      for (int d = rank - 2; d >= 0; --d) {
        if (++idx[d] < ext[static_cast<size_t>(d)].second) break;
        idx[d] = 0;
      }
    }
  }
}

Tensor BundleReader::load(const BundleEntry& e, Device& device) const {
  if (e.tf_dtype == kDtString)
    raise(Code::InvalidArgument, "{}: entry '{}' is a string tensor; read it with load_strings", prefix_, e.key);
  if (e.dtype == DType::Invalid)
    raise(Code::Unimplemented, "{}: entry '{}' has TensorFlow dtype {} (DataType {}), which Cairn has no dtype for",
          prefix_, e.key, tf_dtype_name(e.tf_dtype), e.tf_dtype);
  Tensor t = Tensor::allocate(device, e.dtype, e.shape);
  const size_t nbytes = static_cast<size_t>(e.shape.num_elements()) * dtype_size(e.dtype);
  std::vector<uint8_t> staging;
  uint8_t* dst = nullptr;
  if (device.is_host()) {
    dst = static_cast<uint8_t*>(t.raw_mutable_data());
  } else {
    staging.resize(nbytes);
    dst = staging.data();
  }
  if (e.has_slices) {
    assemble(e, dst);
  } else {
    read_bytes(e, dst);
    check_crc(e, io::crc32c(dst, static_cast<size_t>(e.size)));
  }
  if (!device.is_host()) device.write(*t.buffer(), dst, nbytes);
  return t;
}

std::vector<std::string> BundleReader::load_strings(const BundleEntry& e) const {
  if (e.tf_dtype != kDtString)
    raise(Code::InvalidArgument, "{}: entry '{}' is {}, not a string tensor", prefix_, e.key, tf_dtype_name(e.tf_dtype));
  if (e.has_slices)
    raise(Code::Unimplemented, "{}: entry '{}' is a partitioned string tensor, which Cairn does not read", prefix_,
          e.key);
  const int64_t n = e.shape.num_elements();
  std::vector<std::string> out;
  if (e.size == 0 && n == 0) return out;
  // open() checked that size >= n + 4 and that the bytes are in the file, so these allocations are
  // bounded by the file.
  std::vector<uint8_t> buf(static_cast<size_t>(e.size));
  read_bytes(e, buf.data());
  const uint8_t* p = buf.data();
  const uint8_t* end = p + buf.size();
  std::vector<uint64_t> lens(static_cast<size_t>(n));
  uint32_t crc = 0;
  uint64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t v = 0;
    int shift = 0;
    for (;; shift += 7) {
      if (p >= end || shift >= 70) raise(Code::DataLoss, "{}: string entry '{}': bad length varint", prefix_, e.key);
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    lens[static_cast<size_t>(i)] = v;
    // The checksum covers each length as a little-endian uint32 (uint64 past 4 GiB), not the varint.
    uint8_t le[8];
    const size_t w = v <= UINT32_MAX ? 4 : 8;
    for (size_t k = 0; k < w; ++k) le[k] = static_cast<uint8_t>(v >> (8 * k));
    crc = io::crc32c_extend(crc, le, w);
    if (v > static_cast<uint64_t>(end - p) || total + v > static_cast<uint64_t>(end - p))
      raise(Code::DataLoss, "{}: string entry '{}': lengths exceed the stored {} bytes", prefix_, e.key, e.size);
    total += v;
  }
  if (end - p < 4) raise(Code::DataLoss, "{}: string entry '{}': missing length checksum", prefix_, e.key);
  const uint32_t stored = p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
  if (io::unmask_crc(stored) != crc && ckpt::kEnforceChecksums)
    raise(Code::DataLoss, "{}: string entry '{}': length checksum mismatch", prefix_, e.key);
  crc = io::crc32c_extend(crc, p, 4);
  p += 4;
  if (static_cast<uint64_t>(end - p) != total)
    raise(Code::DataLoss, "{}: string entry '{}': {} bytes of strings stored, lengths add up to {}", prefix_, e.key,
          end - p, total);
  crc = io::crc32c_extend(crc, p, static_cast<size_t>(total));
  check_crc(e, crc);
  out.reserve(static_cast<size_t>(n));
  for (uint64_t len : lens) {
    out.emplace_back(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
    p += len;
  }
  return out;
}

void BundleReader::verify(const BundleEntry& e) const {
  if (e.tf_dtype == kDtString) {
    (void)load_strings(e);
    return;
  }
  if (e.has_slices) {
    for (auto [it, last] = slices_.equal_range(e.key); it != last; ++it) verify(it->second);
    return;
  }
  // Through a bounded buffer: verifying needs no room for the whole value.
  constexpr size_t kChunk = 4 << 20;
  std::vector<uint8_t> buf(std::min<size_t>(kChunk, static_cast<size_t>(e.size)));
  const size_t s = static_cast<size_t>(e.shard_id);
  if (s >= shard_fds_.size() || shard_fds_[s] < 0)
    raise(Code::InvalidArgument, "{}: entry '{}' does not belong to this reader", prefix_, e.key);
  const std::string path = shard_path(prefix_, e.shard_id, num_shards_);
  uint32_t crc = 0;
  for (int64_t done = 0; done < e.size;) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(buf.size()), e.size - done));
    ckpt::internal::pread_exact(shard_fds_[s], buf.data(), n, static_cast<uint64_t>(e.offset + done), path);
    crc = io::crc32c_extend(crc, buf.data(), n);
    done += static_cast<int64_t>(n);
  }
  check_crc(e, crc);
}

// ---- checkpoint state file -------------------------------------------------------------------------

namespace {

// A text-format string literal: "..." or '...' with C escapes (protobuf's text format).
bool parse_quoted(std::string_view s, std::string& out) {
  if (s.size() < 2 || (s[0] != '"' && s[0] != '\'') || s.back() != s[0]) return false;
  out.clear();
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i + 1 > s.size() - 1) return false;
    c = s[i];
    switch (c) {
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case 'r': out.push_back('\r'); break;
      case '\\': case '"': case '\'': out.push_back(c); break;
      case 'x': {
        int v = 0, k = 0;
        while (k < 2 && i + 1 < s.size() - 1 && std::isxdigit(static_cast<unsigned char>(s[i + 1]))) {
          v = v * 16 + std::stoi(std::string(1, s[++i]), nullptr, 16);
          ++k;
        }
        if (k == 0) return false;
        out.push_back(static_cast<char>(v));
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          int v = c - '0', k = 1;
          while (k < 3 && i + 1 < s.size() - 1 && s[i + 1] >= '0' && s[i + 1] <= '7') {
            v = v * 8 + (s[++i] - '0');
            ++k;
          }
          out.push_back(static_cast<char>(v));
        } else {
          return false;
        }
    }
  }
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", u);
      out += buf;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

std::string join_dir(const std::string& dir, const std::string& p) {
  if (!p.empty() && p[0] == '/') return p;
  return dir.empty() || dir.back() == '/' ? dir + p : dir + "/" + p;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::optional<std::string> latest_checkpoint(const std::string& dir) {
  const std::string path = join_dir(dir, "checkpoint");
  if (!exists(path)) return std::nullopt;
  const std::string text = read_whole(path);
  std::optional<std::string> latest;
  std::istringstream in(text);
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const size_t colon = t.find(':');
    if (colon == std::string::npos)
      raise(Code::DataLoss, "{}:{}: not a CheckpointState text proto line: '{}'", path, lineno, t);
    const std::string field = trim(std::string_view(t).substr(0, colon));
    const std::string value = trim(std::string_view(t).substr(colon + 1));
    if (field == "model_checkpoint_path") {
      std::string p;
      if (!parse_quoted(value, p)) raise(Code::DataLoss, "{}:{}: bad string {}", path, lineno, value);
      latest = p;
    }
    // all_model_checkpoint_paths, the timestamps and last_preserved_timestamp are not needed here.
  }
  if (!latest || latest->empty()) return std::nullopt;
  std::string prefix = join_dir(dir, *latest);
  if (!exists(prefix + ".index")) return std::nullopt;
  return prefix;
}

namespace {

std::atomic<uint64_t> g_temp_counter{0};

// A file written under a temporary name and renamed into place; removed if never committed.
struct TempFile {
  std::string final_path, path;
  Fd fd;
  bool committed = false;
  explicit TempFile(std::string p) : final_path(std::move(p)) {
    path = final_path + ".tempstate" + std::to_string(::getpid()) + "-" + std::to_string(g_temp_counter++);
    fd = Fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (!fd.valid()) raise_errno(errno, path, "create");
  }
  ~TempFile() {
    if (!committed) ::unlink(path.c_str());
  }
  void close_and_sync() {
    ckpt::internal::fsync_fd(fd.get(), path);
    fd.close_checked(path);
  }
  void commit() {
    if (::rename(path.c_str(), final_path.c_str()) != 0) raise_errno(errno, final_path, "rename into place");
    committed = true;
  }
};

}  // namespace

void write_checkpoint_state(const std::string& dir, const std::string& latest, const std::vector<std::string>& all) {
  std::string text = "model_checkpoint_path: " + quote(latest) + "\n";
  for (const std::string& p : all) text += "all_model_checkpoint_paths: " + quote(p) + "\n";
  TempFile f(join_dir(dir, "checkpoint"));
  ckpt::internal::pwrite_all(f.fd.get(), text.data(), text.size(), 0, f.path);
  f.close_and_sync();
  f.commit();
  ckpt::internal::fsync_parent_dir(f.final_path);
}

// ---- writer ----------------------------------------------------------------------------------------

// Values go to the temporary data file as they are added (in add order, as TensorFlow's writer
// does), so a writer never holds more than one value; the index is built, sorted, by finish().
struct BundleWriter::State {
  TempFile data;
  ckpt::internal::BufferedFile out;
  std::map<std::string, BundleEntry> entries;
  explicit State(const std::string& prefix)
      : data(shard_path(prefix, 0, 1)), out(data.fd.get(), data.path, 8 << 20, 1 << 20) {}
};

BundleWriter::BundleWriter(std::string prefix) : prefix_(std::move(prefix)) {
  if (prefix_.empty()) raise(Code::InvalidArgument, "BundleWriter: empty prefix");
  state_ = std::make_unique<State>(prefix_);
}

BundleWriter::~BundleWriter() = default;

BundleEntry& BundleWriter::new_entry(const std::string& key, int32_t tf_dtype, const Shape& shape) {
  if (!state_) raise(Code::FailedPrecondition, "BundleWriter({}): add after finish", prefix_);
  if (key.empty()) raise(Code::InvalidArgument, "BundleWriter({}): empty key (reserved for the header)", prefix_);
  if (key[0] == '\0')
    raise(Code::InvalidArgument, "BundleWriter({}): keys starting with a zero byte are slice keys", prefix_);
  auto [it, added] = state_->entries.try_emplace(key);
  if (!added) raise(Code::InvalidArgument, "BundleWriter({}): key '{}' added twice", prefix_, key);
  BundleEntry& e = it->second;
  e.key = key;
  e.tf_dtype = tf_dtype;
  e.dtype = cairn_dtype(tf_dtype);
  e.shape = shape;
  e.offset = static_cast<int64_t>(state_->out.position());
  return e;
}

void BundleWriter::add(const std::string& key, const Tensor& value) {
  if (!value.valid()) raise(Code::InvalidArgument, "BundleWriter({}): key '{}': empty tensor", prefix_, key);
  if (value.dtype() == DType::String)
    raise(Code::InvalidArgument, "BundleWriter({}): key '{}': write strings with add_strings", prefix_, key);
  BundleEntry& e = new_entry(key, static_cast<int32_t>(value.dtype()), value.shape());
  const size_t n = static_cast<size_t>(value.num_elements()) * dtype_size(value.dtype());
  const uint8_t* bytes = static_cast<const uint8_t*>(value.raw_data());
  std::vector<uint8_t> staging;
  if (n > 0 && !value.device()->is_host()) {
    staging.resize(n);
    value.device()->read(*value.buffer(), staging.data(), n);
    bytes = staging.data();
  }
  e.masked_crc32c = io::mask_crc(io::crc32c(bytes, n));
  state_->out.write(bytes, n);
  e.size = static_cast<int64_t>(n);
}

void BundleWriter::add_strings(const std::string& key, const Shape& shape, const std::vector<std::string>& values) {
  if (static_cast<int64_t>(values.size()) != shape.num_elements())
    raise(Code::InvalidArgument, "BundleWriter({}): key '{}': {} strings for shape {}", prefix_, key, values.size(),
          shape.str());
  BundleEntry& e = new_entry(key, kDtString, shape);
  // [varint64 lengths][masked CRC32C of the lengths as uint32/uint64][bytes]; the entry's CRC covers
  // the lengths (same encoding), the length checksum and the bytes.
  std::string lengths;
  uint32_t crc = 0;
  for (const std::string& s : values) {
    put_varint(lengths, s.size());
    uint8_t le[8];
    const size_t w = s.size() <= UINT32_MAX ? 4 : 8;
    for (size_t k = 0; k < w; ++k) le[k] = static_cast<uint8_t>(static_cast<uint64_t>(s.size()) >> (8 * k));
    crc = io::crc32c_extend(crc, le, w);
  }
  uint8_t masked[4];
  const uint32_t m = io::mask_crc(crc);
  for (int k = 0; k < 4; ++k) masked[k] = static_cast<uint8_t>(m >> (8 * k));
  crc = io::crc32c_extend(crc, masked, 4);
  state_->out.write(lengths.data(), lengths.size());
  state_->out.write(masked, 4);
  for (const std::string& s : values) {
    state_->out.write(s.data(), s.size());
    crc = io::crc32c_extend(crc, s.data(), s.size());
  }
  e.size = static_cast<int64_t>(state_->out.position()) - e.offset;
  e.masked_crc32c = io::mask_crc(crc);
}

void BundleWriter::finish() {
  if (!state_) raise(Code::FailedPrecondition, "BundleWriter({}): finish called twice", prefix_);
  // Whatever happens next, the writer is spent; its temporary files go with the state.
  std::unique_ptr<State> st = std::move(state_);
  TableWriter table;
  {
    // Header: one shard, little-endian, producer version 1 (min_consumer 0 is the proto default).
    std::string h;
    put_varint(h, 1 << 3 | kVarint);
    put_varint(h, 1);
    std::string version;
    put_varint(version, 1 << 3 | kVarint);
    put_varint(version, kTensorBundleVersion);
    put_len_field(h, 3, version);
    table.add("", h);
  }
  for (const auto& [key, e] : st->entries) table.add(key, encode_entry(e));
  st->out.finish();
  st->data.close_and_sync();
  TempFile index(prefix_ + ".index");
  const std::string bytes = table.finish();
  ckpt::internal::pwrite_all(index.fd.get(), bytes.data(), bytes.size(), 0, index.path);
  index.close_and_sync();
  // Data first: an index never names a data file that is not in place.
  st->data.commit();
  index.commit();
  ckpt::internal::fsync_parent_dir(index.final_path);
}

}  // namespace cairn::tfckpt
