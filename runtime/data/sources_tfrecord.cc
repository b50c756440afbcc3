// The TFRecord source: uncompressed files are indexable (the .cairnidx sidecar when it is valid,
// else an index built by scanning the record headers); compressed files are read as streams.
#include <sys/uio.h>

#include <algorithm>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/sources.h"
#include "runtime/data/sources_internal.h"
#include "runtime/io/crc32c.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"

namespace cairn::data {
namespace {

using internal::Cycle;
using internal::IndexedFiles;
using internal::ReadFile;

uint64_t le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t le32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

size_t cycle_of(const TfRecordOptions& o, size_t files) {
  if (o.num_parallel_reads == kAutotune) return std::max<size_t>(1, std::min<size_t>(files, 16));
  // More slots than files read the same order (the extra slots stay empty), so the cycle is the
  // smaller of the two: num_parallel_reads = INT32_MAX must not size anything by it.
  return std::max<size_t>(1, std::min<size_t>(files, static_cast<size_t>(o.num_parallel_reads)));
}

std::string tfrecord_text(const std::vector<std::string>& paths, const TfRecordOptions& o) {
  std::string extra;
  if (o.compression != io::Compression::None) extra += std::string(", ") + io::compression_name(o.compression);
  if (o.num_parallel_reads != 0) extra += fmt::format(", parallel_reads={}", cycle_of(o, paths.size()));
  return "tfrecord(" + internal::paths_text(paths) + extra + ")";
}

const ElementSpec& record_spec() {
  static const ElementSpec spec{{{"record", DType::UInt8, {-1}}}};
  return spec;
}

class TfRecordFiles final : public IndexedFiles {
 public:
  TfRecordFiles(Context& ctx, std::vector<std::string> paths, TfRecordOptions o)
      : IndexedFiles(ctx, record_spec(), std::move(paths)), o_(o) {}
  std::string describe() const override { return tfrecord_text(paths(), o_); }

 protected:
  size_t cycle_length() const override { return cycle_of(o_, paths().size()); }

  FileIndex index_file(std::shared_ptr<ReadFile> file) const override {
    FileIndex f;
    if (auto idx = io::load_record_index(file->path(), io::Compression::None)) {
      if (idx->file_size == file->size()) {
        f.starts = std::move(idx->offsets);
        f.end = idx->stream_size;
        f.file = std::move(file);
        return f;
      }
    }
    // Scan the headers, reading about 1 MiB at a time and skipping the data.
    constexpr uint64_t kChunk = uint64_t{1} << 20;
    std::string buf;
    uint64_t buf_off = 0;
    uint64_t off = 0;
    while (off < file->size()) {
      if (off < buf_off || off + io::kRecordHeaderBytes > buf_off + buf.size()) {
        buf = file->read(off, kChunk);
        buf_off = off;
      }
      if (off + io::kRecordHeaderBytes > buf_off + buf.size())
        raise(Code::DataLoss, "{}: {}: a truncated record header at offset {}", describe(), file->path(), off);
      const char* h = buf.data() + (off - buf_off);
      const uint64_t len = le64(h);
      if (io::mask_crc(io::crc32c(h, 8)) != le32(h + 8))
        raise(Code::DataLoss, "{}: {}: corrupt record length at offset {} (length checksum mismatch)", describe(),
              file->path(), off);
      const uint64_t next = off + io::kRecordHeaderBytes + len + io::kRecordFooterBytes;
      if (len > file->size() || next > file->size())
        raise(Code::DataLoss, "{}: {}: a truncated record at offset {} ({} bytes of data, the file ends at {})",
              describe(), file->path(), off, len, file->size());
      f.starts.push_back(off);
      off = next;
    }
    f.end = off;
    f.file = std::move(file);
    return f;
  }

  void make_element(const FileIndex& f, size_t r, std::string_view bytes, Element& out) const override {
    const uint64_t off = f.starts[r];
    if (bytes.size() < io::kRecordHeaderBytes + io::kRecordFooterBytes)
      raise(Code::DataLoss, "{}: {}: a record smaller than its framing at offset {}", describe(), f.file->path(), off);
    const uint64_t len = le64(bytes.data());
    if (len != bytes.size() - io::kRecordHeaderBytes - io::kRecordFooterBytes ||
        io::mask_crc(io::crc32c(bytes.data(), 8)) != le32(bytes.data() + 8))
      raise(Code::DataLoss, "{}: {}: corrupt record header at offset {} (the file changed since it was indexed?)",
            describe(), f.file->path(), off);
    const std::string_view data = bytes.substr(io::kRecordHeaderBytes, len);
    if (io::mask_crc(io::crc32c(data.data(), data.size())) != le32(bytes.data() + io::kRecordHeaderBytes + len))
      raise(Code::DataLoss, "{}: {}: corrupt record data at offset {} (checksum mismatch)", describe(), f.file->path(),
            off);
    out.assign(1, byte_vector(context(), data));
  }

  // Straight into the tensors: one preadv per group of records, each record's data into its own
  // tensor and its framing beside it, so the bytes are copied once (by the kernel) and never zeroed.
  void read_records(const FileIndex& f, size_t r, size_t n, std::vector<Element>& out) const override {
    constexpr size_t kGroup = 256;                  // records per preadv: 3 buffers each, under IOV_MAX (1024)
    // Checked while still in the core's L2 cache: a group's checksums run right after its read.
    constexpr uint64_t kGroupBytes = uint64_t{1} << 20;
    struct Framing {
      char head[io::kRecordHeaderBytes];
      char foot[io::kRecordFooterBytes];
    };
    std::vector<Framing> framing(std::min(n, kGroup));
    std::vector<::iovec> iov;
    std::vector<Tensor> data;
    try {
      for (size_t j = r; j < r + n;) {
        iov.clear();
        data.clear();
        uint64_t bytes = 0;
        for (size_t e = j; e < r + n && data.size() < kGroup && (data.empty() || bytes < kGroupBytes); ++e) {
          const uint64_t size = record_end(f, e) - f.starts[e];
          if (size < io::kRecordHeaderBytes + io::kRecordFooterBytes) break;
          Framing& fr = framing[data.size()];
          data.push_back(Tensor::allocate(context().cpu(), DType::UInt8,
                                          Shape{static_cast<int64_t>(size - io::kRecordHeaderBytes - io::kRecordFooterBytes)}));
          iov.push_back({fr.head, sizeof fr.head});
          if (data.back().nbytes()) iov.push_back({data.back().raw_mutable_data(), data.back().nbytes()});
          iov.push_back({fr.foot, sizeof fr.foot});
          bytes += size;
        }
        if (data.empty() || f.file->read_vector(f.starts[j], iov.data(), static_cast<int>(iov.size())) != bytes) return;
        for (size_t k = 0; k < data.size(); ++k, ++j) {
          const Framing& fr = framing[k];
          const size_t len = data[k].nbytes();
          if (le64(fr.head) != len || io::mask_crc(io::crc32c(fr.head, 8)) != le32(fr.head + 8) ||
              io::mask_crc(io::crc32c(data[k].raw_data(), len)) != le32(fr.foot))
            return;  // get() reads it again and says what is wrong
          Element x;
          x.push_back(std::move(data[k]));
          out.push_back(std::move(x));
        }
      }
    } catch (...) {  // get() reports it
    }
  }

 private:
  const TfRecordOptions o_;
};

// Compressed files: records in Cycle order from one reader per slot. State: the cycle (which
// file each slot reads and how many of its records it has read); a restore reopens the files and
// skips that many records.
class TfRecordStream final : public Dataset {
 public:
  TfRecordStream(Context& ctx, std::vector<std::string> paths, TfRecordOptions o)
      : Dataset(ctx, record_spec()), paths_(std::move(paths)), o_(o) {}
  std::string describe() const override { return tfrecord_text(paths_, o_); }
  int64_t cardinality() const override { return kUnknown; }
  std::unique_ptr<Iterator> make_iterator(uint64_t) const override {
    return std::make_unique<It>(std::static_pointer_cast<const TfRecordStream>(shared_from_this()));
  }

 private:
  class It final : public Iterator {
   public:
    explicit It(std::shared_ptr<const TfRecordStream> ds)
        : ds_(std::move(ds)), cycle_(cycle_of(ds_->o_, ds_->paths_.size())), readers_(cycle_.file.size()),
          reader_file_(cycle_.file.size(), -1) {}

    bool next(Element& out) override {
      std::string_view rec;
      auto more = [&](size_t slot, int64_t file, int64_t) { return read(slot, file, &rec); };
      size_t slot = 0;
      int64_t f = 0, r = 0;
      if (!cycle_.next(static_cast<int64_t>(ds_->paths_.size()), more, slot, f, r)) return false;
      out.assign(1, byte_vector(ds_->context(), rec));
      return true;
    }

    void save(StateWriter& w) override { cycle_.save(w); }

    void restore(StateReader& r) override {
      Cycle c(cycle_.file.size());
      c.restore(r, static_cast<int64_t>(ds_->paths_.size()));
      std::vector<std::unique_ptr<io::RecordReader>> readers(c.file.size());
      std::vector<int64_t> reader_file(c.file.size(), -1);
      for (size_t s = 0; s < c.file.size(); ++s) {
        if (c.file[s] < 0) continue;
        readers[s] = open(c.file[s]);
        reader_file[s] = c.file[s];
        std::string_view rec;
        for (int64_t k = 0; k < c.pos[s]; ++k)
          if (!readers[s]->next(&rec))
            raise(Code::DataLoss, "{}: {}: has fewer than the {} records the iterator state says were read",
                  ds_->describe(), ds_->paths_[static_cast<size_t>(c.file[s])], c.pos[s]);
      }
      cycle_ = std::move(c);
      readers_ = std::move(readers);
      reader_file_ = std::move(reader_file);
    }

   private:
    std::unique_ptr<io::RecordReader> open(int64_t file) const {
      io::RecordReaderOptions ro;
      ro.compression = ds_->o_.compression;
      ro.read_ahead = false;
      ro.buffer_size = ds_->o_.buffer_size ? ds_->o_.buffer_size : (size_t{1} << 20);
      try {
        return io::RecordReader::open(ds_->paths_[static_cast<size_t>(file)], ro);
      } catch (const Error& e) {
        raise(e.code(), "{}: {}", ds_->describe(), e.message());
      }
    }

    bool read(size_t slot, int64_t file, std::string_view* rec) {
      if (reader_file_[slot] != file) {
        readers_[slot] = open(file);
        reader_file_[slot] = file;
      }
      bool got = false;
      try {
        got = readers_[slot]->next(rec);
      } catch (const Error& e) {
        raise(e.code(), "{}: {}", ds_->describe(), e.message());
      }
      if (!got && readers_[slot]->partial())
        raise(Code::DataLoss, "{}: {}: a truncated record at offset {}", ds_->describe(),
              ds_->paths_[static_cast<size_t>(file)], readers_[slot]->offset());
      if (!got) {
        readers_[slot].reset();
        reader_file_[slot] = -1;
      }
      return got;
    }

    const std::shared_ptr<const TfRecordStream> ds_;
    Cycle cycle_;
    std::vector<std::unique_ptr<io::RecordReader>> readers_;
    std::vector<int64_t> reader_file_;
  };

  const std::vector<std::string> paths_;
  const TfRecordOptions o_;
};

}  // namespace

DatasetPtr tfrecord(Context& ctx, std::vector<std::string> paths, TfRecordOptions o) {
  const char* fn = "tfrecord";
  internal::check_paths(paths, fn);
  if (o.compression != io::Compression::None && o.compression != io::Compression::Zlib &&
      o.compression != io::Compression::Gzip)
    raise(Code::InvalidArgument, "{}: unknown compression {}", fn, static_cast<int>(o.compression));
  if (o.num_parallel_reads < 0 && o.num_parallel_reads != kAutotune)
    raise(Code::InvalidArgument, "{}: num_parallel_reads is {} (expected >= 0 or AUTOTUNE)", fn, o.num_parallel_reads);
  if (o.compression == io::Compression::None) return std::make_shared<TfRecordFiles>(ctx, std::move(paths), o);
  return std::make_shared<TfRecordStream>(ctx, std::move(paths), o);
}

}  // namespace cairn::data
