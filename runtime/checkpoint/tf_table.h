// The LevelDB table format that TensorFlow's checkpoint `.index` files use (tensorflow
// core/lib/io/table_builder.cc, format.h; leveldb doc/table_format.md): data blocks of
// prefix-compressed sorted entries with restart points, an index block of separator keys and block
// handles, an empty metaindex block, and a 48-byte footer ending in a magic number. TensorFlow
// writes blocks uncompressed, so snappy blocks are refused. Our own reader and writer: libleveldb is
// a shared library we do not want in libcairn.so, and an index is small enough to parse whole.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::tfckpt {

// Calls fn(key, value) for every entry of the table held in `data`, in key order. Checks the
// footer, every block handle against the file, every block's CRC32C, the block layout and that keys
// strictly increase; anything else raises DataLoss naming `name` (Unimplemented for compressed
// blocks). `value` points into `data`; `key` is rebuilt from prefix compression and lives only until
// fn returns. Nothing is allocated beyond the keys' own sizes. Returns the number of data blocks.
size_t read_table(const uint8_t* data, size_t size, std::string_view name,
                const std::function<void(std::string_view key, std::string_view value)>& fn);

// Builds a table the way TensorFlow's TableBuilder does (block size 262,144, a restart every 16
// keys, shortest separators in the index), so the same entries give the same bytes.
class TableWriter {
 public:
  // Keys must be added in strictly increasing byte order (InvalidArgument otherwise).
  void add(std::string_view key, std::string_view value);
  // The whole table; the writer is spent.
  std::string finish();

 private:
  void flush_block();
  // Appends a finished block with its 5-byte trailer; returns its handle encoded as two varints.
  std::string write_block(const std::string& block);
  // One block being built: entries, then the restart offsets and their count.
  struct Block {
    explicit Block(int interval) : interval(interval) {}
    int interval;                          // keys between restart points
    std::string buf;
    std::string last_key;
    std::vector<uint32_t> restarts{0};
    int counter = 0;
    void add(std::string_view key, std::string_view value);
    std::string finish();  // the block's bytes; resets
    bool empty() const { return buf.empty(); }
    size_t estimated_size() const { return buf.size() + 4 * restarts.size() + 4; }
  };
  std::string out_;
  Block data_{16};
  Block index_{1};  // TensorFlow restarts at every index entry, as LevelDB does
  std::string last_key_;
  bool pending_index_ = false;
  std::string pending_handle_;
  int64_t entries_ = 0;
};

}  // namespace cairn::tfckpt
