// Shared by the file sources (sources_*.cc): an open file read with pread from several threads,
// the list of paths in descriptions, and the base of sources whose files are indexed on first use.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/data/dataset.h"

struct iovec;

namespace cairn::data::internal {

// A file opened for reading; read() is thread-safe (pread).
class ReadFile {
 public:
  // Throws "<who>: <path>: open: <strerror>" (NotFound for a missing file).
  ReadFile(std::string path, std::string_view who);
  ~ReadFile();
  ReadFile(const ReadFile&) = delete;
  ReadFile& operator=(const ReadFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }  // when opened
  // Up to n bytes at `offset` (fewer only at the end of the file).
  std::string read(uint64_t offset, uint64_t n) const;
  // Up to n bytes at `offset` into dst (fewer only at the end of the file): the count.
  size_t read_into(uint64_t offset, void* dst, size_t n) const;
  // One preadv of `count` buffers at `offset`: the bytes read (fewer at the end of the file, or
  // after an interrupted call; errors throw as read's).
  size_t read_vector(uint64_t offset, const struct ::iovec* iov, int count) const;
  // Exactly n bytes at `offset`; DataLoss "<who>: <path>: ... (offset N)" when the file ended.
  std::string read_exact(uint64_t offset, uint64_t n) const;
  // Calls fn(offset, chunk) for the whole file in order, in chunks of about 1 MiB.
  template <class F>
  void scan(F&& fn) const {
    constexpr uint64_t kChunk = uint64_t{1} << 20;
    for (uint64_t off = 0; off < size_; off += kChunk) fn(off, std::string_view(read(off, kChunk)));
  }

 private:
  std::string path_;
  std::string who_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// "['a.txt', 'b.txt']"; past four paths, the first three and a count.
std::string paths_text(const std::vector<std::string>& paths);

// Throws InvalidArgument "<who>: ..." for no paths or an empty one.
void check_paths(const std::vector<std::string>& paths, std::string_view who);

// The fixed order in which `n` files are read at once (TensorFlow's interleave over files with
// cycle_length n, block_length 1): slot after slot, one record each; a slot whose file ends is left
// empty and takes the next unopened file the next time the cycle reaches it. n = 1 reads the files
// one after another.
struct Cycle {
  explicit Cycle(size_t n) : file(n, -1), pos(n, 0) {}
  std::vector<int64_t> file;  // the file each slot reads, -1 for an empty slot
  std::vector<int64_t> pos;   // the next record of each slot's file
  size_t cursor = 0;
  int64_t next_file = 0;

  // The next (slot, file, record): `more(slot, file, record)` says whether that record exists (a
  // stream reads it then). False at the end.
  template <class More>
  bool next(int64_t num_files, More&& more, size_t& slot, int64_t& f, int64_t& record) {
    const size_t n = file.size();
    for (;;) {
      const size_t s = cursor;
      if (file[s] >= 0) {
        if (more(s, file[s], pos[s])) {
          slot = s;
          f = file[s];
          record = pos[s]++;
          cursor = (s + 1) % n;
          return true;
        }
        file[s] = -1;
        cursor = (s + 1) % n;
      } else if (next_file < num_files) {
        file[s] = next_file++;
        pos[s] = 0;
      } else {
        bool any = false;
        for (int64_t x : file) any = any || x >= 0;
        if (!any) return false;
        cursor = (s + 1) % n;
      }
    }
  }
  void save(StateWriter& w) const;
  void restore(StateReader& r, int64_t num_files);
};

// Indexable sources over files whose records are found by scanning each file once, the first
// time the size or an element is needed (from any thread; a failed scan is retried next time).
class IndexedFiles : public Dataset {
 public:
  IndexedFiles(Context& ctx, ElementSpec spec, std::vector<std::string> paths)
      : Dataset(ctx, std::move(spec)), paths_(std::move(paths)) {}

  int64_t cardinality() const override;
  bool random_access() const override { return true; }
  void get(int64_t index, uint64_t epoch, Element& out) const override;
  // Runs of consecutive records of one file are read by read_records.
  void get_range(int64_t begin, int64_t end, uint64_t epoch, std::vector<Element>& out) const override;

 protected:
  // One file's records: record r is bytes [starts[r], starts[r + 1]) (the last ends at `end`).
  struct FileIndex {
    std::shared_ptr<ReadFile> file;
    std::vector<uint64_t> starts;
    std::vector<int64_t> lines;  // 1-based line of each record (kept only when the subclass asks)
    uint64_t end = 0;
  };
  // Finds the records of `file`.
  virtual FileIndex index_file(std::shared_ptr<ReadFile> file) const = 0;
  // > 1: the files are read `n` at a time in Cycle order (the default is one after another).
  virtual size_t cycle_length() const { return 1; }
  // Makes the element of one record (its bytes, terminator included) of file `f`.
  virtual void make_element(const FileIndex& f, size_t record, std::string_view bytes, Element& out) const = 0;
  // Appends the elements of records [r, r + n) of file f to `out`, stopping before a record that
  // cannot be read or made (get() then reports it); never throws. The default reads about 1 MiB of
  // records with one pread and calls make_element for each.
  virtual void read_records(const FileIndex& f, size_t r, size_t n, std::vector<Element>& out) const;
  // Where record r of f ends.
  static uint64_t record_end(const FileIndex& f, size_t r) { return r + 1 < f.starts.size() ? f.starts[r + 1] : f.end; }

  const std::vector<std::string>& paths() const { return paths_; }

 private:
  void ensure_index() const;
  // The file and record of element `index` (0 <= index < the total).
  std::pair<size_t, size_t> locate(int64_t index) const;

  const std::vector<std::string> paths_;
  mutable std::mutex mu_;
  mutable std::atomic<bool> built_{false};
  mutable std::vector<FileIndex> files_;
  mutable std::vector<int64_t> first_;  // global index of each file's first record, then the total
  mutable std::vector<std::pair<uint32_t, int64_t>> order_;  // (file, record) of each index, with a cycle
};

}  // namespace cairn::data::internal
