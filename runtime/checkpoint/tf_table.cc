// LevelDB table reader and writer for TensorFlow's checkpoint index (tf_table.h).
#include "runtime/checkpoint/tf_table.h"

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/io/crc32c.h"

namespace cairn::tfckpt {
namespace {

constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;       // two handles padded to 40 bytes, then the magic
constexpr size_t kHandlesSize = 40;
constexpr size_t kTrailerSize = 5;       // compression type byte + masked CRC32C
constexpr size_t kBlockSize = 262144;    // TensorFlow's table::Options::block_size
constexpr uint8_t kNoCompression = 0;

uint32_t load_le32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }

void put_le32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
}

void put_varint(std::string& s, uint64_t v) {
  while (v >= 0x80) {
    s.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
}

// Bounded cursor over bytes; every failure is DataLoss naming the table and the part being read.
struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  std::string_view name;
  const char* part;

  uint64_t varint(int max_bytes = 10) {
    uint64_t v = 0;
    for (int shift = 0, i = 0; i < max_bytes; ++i, shift += 7) {
      if (p >= end) raise(Code::DataLoss, "{}: truncated varint in the {}", name, part);
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    raise(Code::DataLoss, "{}: varint too long in the {}", name, part);
  }
  uint32_t varint32() {
    const uint64_t v = varint(5);
    if (v > UINT32_MAX) raise(Code::DataLoss, "{}: varint32 out of range in the {}", name, part);
    return static_cast<uint32_t>(v);
  }
};

struct Handle {
  uint64_t offset = 0, size = 0;
};

Handle read_handle(Cursor& c) {
  Handle h;
  h.offset = c.varint();
  h.size = c.varint();
  return h;
}

// The contents of the block at `h`, its bounds and trailer checked.
std::string_view read_block(const uint8_t* data, size_t size, Handle h, std::string_view name, const char* what) {
  if (h.offset > size || h.size > size - h.offset || kTrailerSize > size - h.offset - h.size)
    raise(Code::DataLoss, "{}: {} block [{}, +{}) lies outside the file of {} bytes", name, what, h.offset, h.size, size);
  const uint8_t* b = data + h.offset;
  const uint8_t type = b[h.size];
  const uint32_t want = io::unmask_crc(load_le32(b + h.size + 1));
  const uint32_t got = io::crc32c_extend(io::crc32c(b, h.size), &type, 1);
  if (got != want)
    raise(Code::DataLoss, "{}: {} block at offset {}: CRC32C mismatch (stored {:08x}, computed {:08x})", name, what,
          h.offset, want, got);
  if (type != kNoCompression)
    raise(Code::Unimplemented, "{}: {} block at offset {} is compressed (type {}); TensorFlow writes them uncompressed",
          name, what, h.offset, type);
  return {reinterpret_cast<const char*>(b), h.size};
}

// Calls fn(key, value) for each entry of a block; `last` carries the previous key across blocks so
// the strict ordering check spans the whole table.
template <class Fn>
void walk_block(std::string_view block, std::string_view name, const char* what, std::string& key, bool& have_key,
                Fn&& fn) {
  if (block.size() < 4) raise(Code::DataLoss, "{}: {} block of {} bytes has no restart count", name, what, block.size());
  const auto* b = reinterpret_cast<const uint8_t*>(block.data());
  const uint32_t num_restarts = load_le32(b + block.size() - 4);
  // Every block has at least one restart point (offset 0), and the array must fit in the block.
  if (num_restarts == 0 || num_restarts > (block.size() - 4) / 4)
    raise(Code::DataLoss, "{}: {} block: bad restart count {} for {} bytes", name, what, num_restarts, block.size());
  const size_t entries_end = block.size() - 4 - 4 * static_cast<size_t>(num_restarts);
  for (uint32_t i = 0; i < num_restarts; ++i) {
    if (load_le32(b + entries_end + 4 * i) > entries_end)
      raise(Code::DataLoss, "{}: {} block: restart point {} past the entries", name, what, i);
  }
  Cursor c{b, b + entries_end, name, what};
  std::string prev;
  while (c.p < c.end) {
    const uint32_t shared = c.varint32();
    const uint32_t non_shared = c.varint32();
    const uint32_t value_len = c.varint32();
    if (shared > key.size() || (shared > 0 && !have_key))
      raise(Code::DataLoss, "{}: {} block: entry shares {} bytes with a previous key of {}", name, what, shared,
            key.size());
    if (non_shared > static_cast<size_t>(c.end - c.p) || value_len > static_cast<size_t>(c.end - c.p) - non_shared)
      raise(Code::DataLoss, "{}: {} block: entry of {}+{} bytes overruns the block", name, what, non_shared, value_len);
    prev.assign(key);
    key.resize(shared);
    key.append(reinterpret_cast<const char*>(c.p), non_shared);
    c.p += non_shared;
    if (have_key && !(prev < key))
      raise(Code::DataLoss, "{}: {} block: key '{}' does not sort after '{}'", name, what, key, prev);
    have_key = true;
    fn(std::string_view(key), std::string_view(reinterpret_cast<const char*>(c.p), value_len));
    c.p += value_len;
  }
}

}  // namespace

size_t read_table(const uint8_t* data, size_t size, std::string_view name,
                const std::function<void(std::string_view, std::string_view)>& fn) {
  if (size < kFooterSize) raise(Code::DataLoss, "{}: {} bytes is too short for a table footer", name, size);
  const uint8_t* footer = data + size - kFooterSize;
  const uint64_t magic = load_le32(footer + kHandlesSize) | static_cast<uint64_t>(load_le32(footer + kHandlesSize + 4)) << 32;
  if (magic != kTableMagic) raise(Code::DataLoss, "{}: bad table magic {:016x} (not a checkpoint index)", name, magic);
  Cursor fc{footer, footer + kHandlesSize, name, "footer"};
  const Handle meta = read_handle(fc);
  const Handle index = read_handle(fc);
  // The metaindex is checked (CRC, layout) but TensorFlow stores nothing in it.
  {
    std::string k;
    bool have = false;
    walk_block(read_block(data, size, meta, name, "metaindex"), name, "metaindex", k, have,
               [](std::string_view, std::string_view) {});
  }
  std::string index_key, data_key;
  bool have_index = false, have_data = false;
  size_t blocks = 0;
  walk_block(read_block(data, size, index, name, "index"), name, "index", index_key, have_index,
             [&](std::string_view sep, std::string_view value) {
               Cursor hc{reinterpret_cast<const uint8_t*>(value.data()),
                         reinterpret_cast<const uint8_t*>(value.data()) + value.size(), name, "index entry"};
               const Handle h = read_handle(hc);
               std::string_view block = read_block(data, size, h, name, "data");
               ++blocks;
               walk_block(block, name, "data", data_key, have_data, [&](std::string_view k, std::string_view v) {
                 // The separator bounds its block from above (TableBuilder's FindShortestSeparator).
                 if (k > sep)
                   raise(Code::DataLoss, "{}: key '{}' sorts after its index separator '{}'", name, k, sep);
                 fn(k, v);
               });
             });
  return blocks;
}

// ---- writer ---------------------------------------------------------------------------------------

void TableWriter::Block::add(std::string_view key, std::string_view value) {
  size_t shared = 0;
  if (counter < interval) {
    const size_t n = std::min(last_key.size(), key.size());
    while (shared < n && last_key[shared] == key[shared]) ++shared;
  } else {
    restarts.push_back(static_cast<uint32_t>(buf.size()));
    counter = 0;
  }
  put_varint(buf, shared);
  put_varint(buf, key.size() - shared);
  put_varint(buf, value.size());
  buf.append(key.substr(shared));
  buf.append(value);
  last_key.assign(key);
  ++counter;
}

std::string TableWriter::Block::finish() {
  std::string out = std::move(buf);
  for (uint32_t r : restarts) put_le32(out, r);
  put_le32(out, static_cast<uint32_t>(restarts.size()));
  buf.clear();
  last_key.clear();
  restarts.assign(1, 0);
  counter = 0;
  return out;
}

std::string TableWriter::write_block(const std::string& block) {
  std::string handle;
  put_varint(handle, out_.size());
  put_varint(handle, block.size());
  out_.append(block);
  const uint8_t type = kNoCompression;
  out_.push_back(static_cast<char>(type));
  put_le32(out_, io::mask_crc(io::crc32c_extend(io::crc32c(block.data(), block.size()), &type, 1)));
  return handle;
}

void TableWriter::flush_block() {
  if (data_.empty()) return;
  pending_handle_ = write_block(data_.finish());
  pending_index_ = true;
}

void TableWriter::add(std::string_view key, std::string_view value) {
  if (entries_ > 0 && !(std::string_view(last_key_) < key))
    raise(Code::InvalidArgument, "TableWriter::add: key '{}' does not sort after '{}'", key, last_key_);
  if (pending_index_) {
    // The shortest key k with last_key_ <= k < key (LevelDB's bytewise FindShortestSeparator).
    const size_t n = std::min(last_key_.size(), key.size());
    size_t i = 0;
    while (i < n && last_key_[i] == key[i]) ++i;
    if (i < n) {
      const auto b = static_cast<uint8_t>(last_key_[i]);
      if (b < 0xff && b + 1 < static_cast<uint8_t>(key[i])) {
        last_key_[i] = static_cast<char>(b + 1);
        last_key_.resize(i + 1);
      }
    }
    index_.add(last_key_, pending_handle_);
    pending_index_ = false;
  }
  last_key_.assign(key);
  ++entries_;
  data_.add(key, value);
  if (data_.estimated_size() >= kBlockSize) flush_block();
}

std::string TableWriter::finish() {
  flush_block();
  const std::string meta = write_block(Block(16).finish());
  if (pending_index_) {
    // The shortest key >= the last key (FindShortSuccessor): bump the first byte that is not 0xff.
    for (size_t i = 0; i < last_key_.size(); ++i) {
      const auto b = static_cast<uint8_t>(last_key_[i]);
      if (b != 0xff) {
        last_key_[i] = static_cast<char>(b + 1);
        last_key_.resize(i + 1);
        break;
      }
    }
    index_.add(last_key_, pending_handle_);
    pending_index_ = false;
  }
  const std::string index = write_block(index_.finish());
  std::string footer = meta + index;
  footer.resize(kHandlesSize, '\0');
  put_le32(footer, static_cast<uint32_t>(kTableMagic));
  put_le32(footer, static_cast<uint32_t>(kTableMagic >> 32));
  out_.append(footer);
  return std::move(out_);
}

}  // namespace cairn::tfckpt
