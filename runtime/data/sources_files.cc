// File sources: text_lines, csv, list_files, and the indexed-files base they share.
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/core/philox.h"
#include "runtime/data/sources.h"
#include "runtime/data/sources_internal.h"

namespace cairn::data {
namespace internal {
namespace {

[[noreturn]] void raise_os(int err, std::string_view who, std::string_view path, std::string_view what) {
  Code code = Code::Unknown;
  if (err == ENOENT || err == ENOTDIR) code = Code::NotFound;
  else if (err == EACCES || err == EPERM) code = Code::PermissionDenied;
  else if (err == EISDIR) code = Code::InvalidArgument;
  else if (err == EIO) code = Code::DataLoss;
  char buf[256];
  raise(code, "{}: {}: {}: {}", who, path, what, strerror_r(err, buf, sizeof buf));
}

}  // namespace

ReadFile::ReadFile(std::string path, std::string_view who) : path_(std::move(path)), who_(who) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) raise_os(errno, who_, path_, "open");
  struct stat st;
  if (::fstat(fd_, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
    ::close(fd_);
    raise_os(err, who_, path_, "open");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

ReadFile::~ReadFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t ReadFile::read_into(uint64_t offset, void* dst, size_t n) const {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd_, static_cast<char*>(dst) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      raise_os(errno, who_, path_, fmt::format("read at offset {}", offset + done));
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

size_t ReadFile::read_vector(uint64_t offset, const struct ::iovec* iov, int count) const {
  for (;;) {
    const ssize_t got = ::preadv(fd_, iov, count, static_cast<off_t>(offset));
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) raise_os(errno, who_, path_, fmt::format("read at offset {}", offset));
  }
}

std::string ReadFile::read(uint64_t offset, uint64_t n) const {
  std::string out(n, '\0');
  out.resize(read_into(offset, out.data(), n));
  return out;
}

std::string ReadFile::read_exact(uint64_t offset, uint64_t n) const {
  std::string out = read(offset, n);
  if (out.size() != n)
    raise(Code::DataLoss, "{}: {}: the file ends at offset {}, before the {} bytes at offset {} (was it truncated?)",
          who_, path_, offset + out.size(), n, offset);
  return out;
}

std::string paths_text(const std::vector<std::string>& paths) {
  std::string out = "[";
  const size_t shown = paths.size() > 4 ? 3 : paths.size();
  for (size_t i = 0; i < shown; ++i) out += (i ? ", '" : "'") + paths[i] + "'";
  if (shown < paths.size()) out += fmt::format(", ... ({} files)", paths.size());
  return out + "]";
}

void check_paths(const std::vector<std::string>& paths, std::string_view who) {
  if (paths.empty()) raise(Code::InvalidArgument, "{}: no paths", who);
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i].empty()) raise(Code::InvalidArgument, "{}: path {} is empty", who, i);
}

void Cycle::save(StateWriter& w) const {
  w.put_u64(file.size());
  w.put_u64(cursor);
  w.put_i64(next_file);
  for (size_t s = 0; s < file.size(); ++s) {
    w.put_i64(file[s]);
    w.put_i64(pos[s]);
  }
}

void Cycle::restore(StateReader& r, int64_t num_files) {
  if (r.get_u64() != file.size()) r.corrupt("a different number of files read at once");
  const uint64_t c = r.get_u64();
  const int64_t nf = r.get_i64();
  if (c >= file.size() || nf < 0 || nf > num_files) r.corrupt("a file position outside the files");
  std::vector<int64_t> fs(file.size()), ps(file.size());
  for (size_t s = 0; s < file.size(); ++s) {
    fs[s] = r.get_i64();
    ps[s] = r.get_i64();
    if (fs[s] < -1 || fs[s] >= nf || ps[s] < 0) r.corrupt("a file position outside the files");
  }
  cursor = c;
  next_file = nf;
  file = std::move(fs);
  pos = std::move(ps);
}

void IndexedFiles::ensure_index() const {
  if (built_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (built_.load(std::memory_order_relaxed)) return;
  std::vector<FileIndex> files;
  std::vector<int64_t> first{0};
  for (const std::string& p : paths_) {
    files.push_back(index_file(std::make_shared<ReadFile>(p, describe())));
    first.push_back(first.back() + static_cast<int64_t>(files.back().starts.size()));
  }
  const size_t n = cycle_length();
  if (n > 1) {
    order_.clear();
    order_.reserve(static_cast<size_t>(first.back()));
    Cycle cycle(n);
    size_t slot = 0;
    int64_t f = 0, r = 0;
    auto more = [&](size_t, int64_t file, int64_t rec) { return rec < static_cast<int64_t>(files[file].starts.size()); };
    while (cycle.next(static_cast<int64_t>(files.size()), more, slot, f, r)) order_.emplace_back(static_cast<uint32_t>(f), r);
  }
  files_ = std::move(files);
  first_ = std::move(first);
  built_.store(true, std::memory_order_release);
}

int64_t IndexedFiles::cardinality() const {
  ensure_index();
  return first_.back();
}

std::pair<size_t, size_t> IndexedFiles::locate(int64_t index) const {
  if (!order_.empty()) {
    const auto& [file, record] = order_[static_cast<size_t>(index)];
    return {file, static_cast<size_t>(record)};
  }
  const size_t k = static_cast<size_t>(std::upper_bound(first_.begin(), first_.end(), index) - first_.begin()) - 1;
  return {k, static_cast<size_t>(index - first_[k])};
}

void IndexedFiles::get(int64_t index, uint64_t, Element& out) const {
  ensure_index();
  if (index < 0 || index >= first_.back())
    raise(Code::OutOfRange, "{}: element {} is past the end ({} elements)", describe(), index, first_.back());
  const auto [k, r] = locate(index);
  const FileIndex& f = files_[k];
  std::vector<Element> one;
  read_records(f, r, 1, one);  // the fast way; an element that fails is read again below for its error
  if (!one.empty()) {
    out = std::move(one[0]);
    return;
  }
  const uint64_t begin = f.starts[r];
  make_element(f, r, f.file->read_exact(begin, record_end(f, r) - begin), out);
}

void IndexedFiles::get_range(int64_t begin, int64_t end, uint64_t, std::vector<Element>& out) const {
  out.clear();
  try {
    ensure_index();
    end = std::min(end, first_.back());
    if (end > begin) out.reserve(static_cast<size_t>(std::min<int64_t>(end - begin, 1024)));
    for (int64_t i = std::max<int64_t>(begin, 0); i == begin + static_cast<int64_t>(out.size()) && i < end;) {
      const auto [k, r] = locate(i);
      size_t n = 1;  // the run of consecutive records of file k from r
      if (order_.empty()) {
        n = static_cast<size_t>(std::min(end, first_[k + 1]) - i);
      } else {
        while (i + static_cast<int64_t>(n) < end && order_[static_cast<size_t>(i) + n].first == k &&
               order_[static_cast<size_t>(i) + n].second == static_cast<int64_t>(r + n))
          ++n;
      }
      const size_t before = out.size();
      read_records(files_[k], r, n, out);
      if (out.size() - before < n) return;
      i += static_cast<int64_t>(n);
    }
  } catch (...) {  // get() reports it
  }
}

void IndexedFiles::read_records(const FileIndex& f, size_t r, size_t n, std::vector<Element>& out) const {
  constexpr uint64_t kBatch = uint64_t{1} << 20;
  std::string buf;
  try {
    for (size_t j = r; j < r + n;) {
      const uint64_t base = f.starts[j];
      size_t e = j + 1;
      while (e < r + n && record_end(f, e) - base <= kBatch) ++e;
      const uint64_t len = record_end(f, e - 1) - base;
      buf.resize(len);
      if (f.file->read_into(base, buf.data(), len) != len) return;
      for (; j < e; ++j) {
        Element x;
        make_element(f, j, std::string_view(buf).substr(f.starts[j] - base, record_end(f, j) - f.starts[j]), x);
        out.push_back(std::move(x));
      }
    }
  } catch (...) {  // get() reports it
  }
}

}  // namespace internal

namespace {

using internal::IndexedFiles;
using internal::ReadFile;

// A record's bytes without its line end ("\n" or "\r\n").
std::string_view strip_line_end(std::string_view s) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

class TextLines final : public IndexedFiles {
 public:
  TextLines(Context& ctx, std::vector<std::string> paths)
      : IndexedFiles(ctx, ElementSpec{{{"line", DType::UInt8, {-1}}}}, std::move(paths)) {}
  std::string describe() const override { return "text_lines(" + internal::paths_text(paths()) + ")"; }

 protected:
  FileIndex index_file(std::shared_ptr<ReadFile> file) const override {
    FileIndex f;
    f.end = file->size();
    if (f.end > 0) f.starts.push_back(0);
    file->scan([&](uint64_t off, std::string_view chunk) {
      for (size_t p = chunk.find('\n'); p != std::string_view::npos; p = chunk.find('\n', p + 1))
        if (off + p + 1 < f.end) f.starts.push_back(off + p + 1);
    });
    f.file = std::move(file);
    return f;
  }
  void make_element(const FileIndex&, size_t, std::string_view bytes, Element& out) const override {
    out.assign(1, byte_vector(context(), strip_line_end(bytes)));
  }
};

// ---- CSV ----

const char* csv_dtype_name(DType t) { return t == DType::String ? "string" : dtype_name(t); }

bool csv_dtype_ok(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::Int64 || t == DType::String;
}

// Parses `text` as a scalar of `dtype` into `out` (a tensor on the CPU); false when it does not parse.
bool parse_scalar(Context& ctx, DType dtype, const std::string& text, Tensor& out) {
  if (dtype == DType::String) {
    out = byte_vector(ctx, text);
    return true;
  }
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  Tensor t = Tensor::allocate(ctx.cpu(), dtype, Shape{});
  switch (dtype) {
    case DType::Float32: *t.mutable_data<float>() = std::strtof(s, &end); break;
    case DType::Float64: *t.mutable_data<double>() = std::strtod(s, &end); break;
    case DType::Int32: {
      const long long v = std::strtoll(s, &end, 10);
      if (v < INT32_MIN || v > INT32_MAX) return false;
      *t.mutable_data<int32_t>() = static_cast<int32_t>(v);
      break;
    }
    case DType::Int64: *t.mutable_data<int64_t>() = std::strtoll(s, &end, 10); break;
    default: return false;
  }
  const bool int_overflow = errno == ERANGE && (dtype == DType::Int32 || dtype == DType::Int64);
  if (end != s + text.size() || int_overflow) return false;
  out = std::move(t);
  return true;
}

// Splits one CSV record (RFC 4180: quoted fields, "" inside quotes) into fields. `quoted` tells
// which fields were quoted. Returns an error text, or "" on success.
std::string split_record(std::string_view rec, char delim, std::vector<std::string>& fields, std::vector<bool>& quoted) {
  fields.clear();
  quoted.clear();
  size_t i = 0;
  for (;;) {
    std::string field;
    bool q = false;
    if (i < rec.size() && rec[i] == '"') {
      q = true;
      ++i;
      for (;;) {
        if (i >= rec.size()) return fmt::format("field {} has an unterminated quote", fields.size());
        if (rec[i] == '"') {
          if (i + 1 < rec.size() && rec[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += rec[i++];
      }
      if (i < rec.size() && rec[i] != delim)
        return fmt::format("field {} has '{}' after its closing quote", fields.size(), rec[i]);
    } else {
      const size_t e = std::min(rec.find(delim, i), rec.size());
      field.assign(rec.substr(i, e - i));
      i = e;
    }
    fields.push_back(std::move(field));
    quoted.push_back(q);
    if (i >= rec.size()) return "";
    ++i;  // the delimiter
  }
}

class Csv final : public IndexedFiles {
 public:
  Csv(Context& ctx, ElementSpec spec, std::vector<std::string> paths, CsvOptions o, std::vector<Tensor> defaults,
      std::vector<int64_t> file_columns)
      : IndexedFiles(ctx, std::move(spec), std::move(paths)), o_(std::move(o)), defaults_(std::move(defaults)),
        file_columns_(std::move(file_columns)) {}

  std::string describe() const override {
    std::vector<std::string> types;
    for (DType t : o_.column_dtypes) types.push_back(csv_dtype_name(t));
    std::string extra;
    if (o_.header) extra += ", header";
    if (!o_.select_columns.empty()) extra += fmt::format(", select=[{}]", fmt::join(o_.select_columns, ","));
    if (o_.delimiter != ',') extra += fmt::format(", delimiter='{}'", o_.delimiter);
    return fmt::format("csv({}, [{}]{})", internal::paths_text(paths()), fmt::join(types, ","), extra);
  }

 protected:
  FileIndex index_file(std::shared_ptr<ReadFile> file) const override {
    FileIndex f;
    f.end = file->size();
    bool in_quotes = false;
    bool at_start = true;  // the next byte starts a record
    int64_t line = 1;
    uint64_t start = 0;
    int64_t start_line = 1;
    bool header_pending = o_.header;
    auto finish = [&](uint64_t end) {  // the record [start, end) ends: keep it unless header or blank
      if (end - start <= 2 && blank_record(*file, start, end)) return;
      if (header_pending) {
        header_pending = false;
        return;
      }
      f.starts.push_back(start);
      f.lines.push_back(start_line);
    };
    file->scan([&](uint64_t off, std::string_view chunk) {
      for (size_t p = 0; p < chunk.size(); ++p) {
        const char c = chunk[p];
        if (at_start) {
          start = off + p;
          start_line = line;
          at_start = false;
        }
        if (c == '"') in_quotes = !in_quotes;
        if (c == '\n') {
          ++line;
          if (!in_quotes) {
            finish(off + p + 1);
            at_start = true;
          }
        }
      }
    });
    if (!at_start) finish(f.end);
    f.file = std::move(file);
    return f;
  }

  void make_element(const FileIndex& f, size_t r, std::string_view bytes, Element& out) const override {
    const std::string where = fmt::format("{}:{}", f.file->path(), f.lines[r]);
    // A record's range runs to the next record's start, over any blank lines: cut it at its own end.
    std::string_view rec = record_only(bytes);
    std::vector<std::string> fields;
    std::vector<bool> quoted;
    const std::string err = split_record(rec, o_.delimiter, fields, quoted);
    if (!err.empty()) raise(Code::InvalidArgument, "{}: {}: {}", describe(), where, err);
    const int64_t need = o_.select_columns.empty() ? static_cast<int64_t>(o_.column_dtypes.size())
                                                   : o_.select_columns.back() + 1;
    if (o_.select_columns.empty() ? static_cast<int64_t>(fields.size()) != need
                                  : static_cast<int64_t>(fields.size()) < need)
      raise(Code::InvalidArgument, "{}: {}: {} fields, expected {}{}", describe(), where, fields.size(),
            o_.select_columns.empty() ? "" : "at least ", need);
    out.resize(o_.column_dtypes.size());
    const ElementSpec& sp = spec();
    for (size_t c = 0; c < o_.column_dtypes.size(); ++c) {
      const size_t fc = static_cast<size_t>(file_columns_[c]);
      const std::string& text = fields[fc];
      const bool missing = (text.empty() && !quoted[fc]) || (o_.na_value && text == *o_.na_value) ||
                           (text.empty() && o_.column_dtypes[c] != DType::String);
      if (missing) {
        if (!defaults_[c].valid())
          raise(Code::InvalidArgument, "{}: {}: field {} ('{}') is empty and the column has no default", describe(),
                where, fc, sp.components[c].name);
        out[c] = defaults_[c];
        continue;
      }
      if (!parse_scalar(context(), o_.column_dtypes[c], text, out[c]))
        raise(Code::InvalidArgument, "{}: {}: field {} ('{}'): \"{}\" is not a valid {}", describe(), where, fc,
              sp.components[c].name, text, csv_dtype_name(o_.column_dtypes[c]));
    }
  }

 private:
  static bool blank_record(const ReadFile& file, uint64_t start, uint64_t end) {
    const std::string s = file.read(start, end - start);
    return strip_line_end(s).empty();
  }
  // The first record of `bytes`: up to the first line end outside quotes, without it.
  static std::string_view record_only(std::string_view bytes) {
    bool in_quotes = false;
    for (size_t p = 0; p < bytes.size(); ++p) {
      if (bytes[p] == '"') in_quotes = !in_quotes;
      if (bytes[p] == '\n' && !in_quotes) return strip_line_end(bytes.substr(0, p + 1));
    }
    return strip_line_end(bytes);
  }

  const CsvOptions o_;
  const std::vector<Tensor> defaults_;       // invalid where the column is required
  const std::vector<int64_t> file_columns_;  // the file column of each output column
};

// The first record of the file at `path`, split (for header names).
std::vector<std::string> read_header(const std::string& path, char delim, std::string_view who) {
  ReadFile f(path, who);
  std::string head;
  bool in_quotes = false;
  for (uint64_t off = 0; off < f.size(); off += 4096) {
    const std::string chunk = f.read(off, 4096);
    for (char c : chunk) {
      if (c == '"') in_quotes = !in_quotes;
      if (c == '\n' && !in_quotes) {
        if (!strip_line_end(head).empty()) goto done;
        head.clear();  // blank lines before the header are skipped, as by the index
        continue;
      }
      head += c;
    }
  }
done:
  std::vector<std::string> fields;
  std::vector<bool> quoted;
  const std::string err = split_record(strip_line_end(head), delim, fields, quoted);
  if (!err.empty()) raise(Code::InvalidArgument, "{}: {}:1: header: {}", who, path, err);
  return fields;
}

// ---- list_files ----

class ListFiles final : public Dataset {
 public:
  ListFiles(Context& ctx, std::vector<std::string> patterns, std::vector<std::string> files, bool shuffle, int64_t seed)
      : Dataset(ctx, ElementSpec{{{"filename", DType::UInt8, {-1}}}}), patterns_(std::move(patterns)),
        files_(std::move(files)), shuffle_(shuffle), seed_(seed) {}

  std::string describe() const override {
    return fmt::format("list_files({}{})", internal::paths_text(patterns_),
                       shuffle_ ? fmt::format(", shuffle, seed={}", seed_) : "");
  }
  int64_t cardinality() const override { return static_cast<int64_t>(files_.size()); }
  bool random_access() const override { return true; }
  void get(int64_t index, uint64_t epoch, Element& out) const override {
    if (index < 0 || index >= cardinality())
      raise(Code::OutOfRange, "{}: element {} is past the end ({} files)", describe(), index, files_.size());
    const size_t i = shuffle_ ? (*permutation(epoch))[static_cast<size_t>(index)] : static_cast<size_t>(index);
    out.assign(1, byte_vector(context(), files_[i]));
  }

 private:
  // The order of iteration `epoch`: a Fisher-Yates shuffle keyed by (seed, epoch). The last one is cached.
  std::shared_ptr<const std::vector<size_t>> permutation(uint64_t epoch) const {
    std::lock_guard<std::mutex> lock(mu_);
    if (perm_ && perm_epoch_ == epoch) return perm_;
    auto p = std::make_shared<std::vector<size_t>>(files_.size());
    for (size_t i = 0; i < p->size(); ++i) (*p)[i] = i;
    const uint64_t key = philox::mix64(philox::mix64(static_cast<uint64_t>(seed_)) ^ epoch);
    for (size_t i = p->size(); i > 1; --i) std::swap((*p)[i - 1], (*p)[philox::mix64(key + i) % i]);
    perm_ = p;
    perm_epoch_ = epoch;
    return perm_;
  }

  const std::vector<std::string> patterns_;
  const std::vector<std::string> files_;
  const bool shuffle_;
  const int64_t seed_;
  mutable std::mutex mu_;
  mutable std::shared_ptr<const std::vector<size_t>> perm_;
  mutable uint64_t perm_epoch_ = 0;
};

}  // namespace

DatasetPtr text_lines(Context& ctx, std::vector<std::string> paths) {
  internal::check_paths(paths, "text_lines");
  return std::make_shared<TextLines>(ctx, std::move(paths));
}

DatasetPtr csv(Context& ctx, std::vector<std::string> paths, CsvOptions o) {
  const char* fn = "csv";
  internal::check_paths(paths, fn);
  const size_t n = o.column_dtypes.size();
  if (n == 0) raise(Code::InvalidArgument, "{}: no columns (column_dtypes is empty)", fn);
  for (size_t c = 0; c < n; ++c)
    if (!csv_dtype_ok(o.column_dtypes[c]))
      raise(Code::InvalidArgument, "{}: column {} has dtype {}; expected float32, float64, int32, int64 or string", fn,
            c, dtype_name(o.column_dtypes[c]));
  if (!o.column_defaults.empty() && o.column_defaults.size() != n)
    raise(Code::InvalidArgument, "{}: {} column defaults for {} columns", fn, o.column_defaults.size(), n);
  if (!o.column_names.empty() && o.column_names.size() != n)
    raise(Code::InvalidArgument, "{}: {} column names for {} columns", fn, o.column_names.size(), n);
  if (!o.select_columns.empty()) {
    if (o.select_columns.size() != n)
      raise(Code::InvalidArgument, "{}: {} select_columns for {} columns", fn, o.select_columns.size(), n);
    for (size_t c = 0; c < n; ++c)
      if (o.select_columns[c] < 0 || (c && o.select_columns[c] <= o.select_columns[c - 1]))
        raise(Code::InvalidArgument, "{}: select_columns must be increasing non-negative indexes (entry {} is {})", fn,
              c, o.select_columns[c]);
  }
  if (o.delimiter == '"' || o.delimiter == '\n' || o.delimiter == '\r' || o.delimiter == '\0')
    raise(Code::InvalidArgument, "{}: the delimiter cannot be a quote, a line end or NUL", fn);
  std::vector<int64_t> file_columns(n);
  for (size_t c = 0; c < n; ++c) file_columns[c] = o.select_columns.empty() ? static_cast<int64_t>(c) : o.select_columns[c];

  std::vector<std::string> names = o.column_names;
  if (names.empty() && o.header) {
    const std::vector<std::string> header = read_header(paths[0], o.delimiter, fn);
    for (size_t c = 0; c < n; ++c) {
      if (file_columns[c] >= static_cast<int64_t>(header.size()))
        raise(Code::InvalidArgument, "{}: {}:1: the header has {} fields, but column {} is file column {}", fn,
              paths[0], header.size(), c, file_columns[c]);
      names.push_back(header[static_cast<size_t>(file_columns[c])]);
    }
  }
  if (names.empty())
    for (size_t c = 0; c < n; ++c) names.push_back(std::to_string(c));
  check_component_names(names, fn);

  std::vector<Tensor> defaults(n);
  ElementSpec spec;
  for (size_t c = 0; c < n; ++c) {
    const DType t = o.column_dtypes[c];
    spec.components.push_back({names[c], t == DType::String ? DType::UInt8 : t,
                               t == DType::String ? std::vector<int64_t>{-1} : std::vector<int64_t>{}});
    if (!o.column_defaults.empty() && o.column_defaults[c] &&
        !parse_scalar(ctx, t, *o.column_defaults[c], defaults[c]))
      raise(Code::InvalidArgument, "{}: the default of column {} ('{}'), \"{}\", is not a valid {}", fn, c, names[c],
            *o.column_defaults[c], csv_dtype_name(t));
  }
  return std::make_shared<Csv>(ctx, std::move(spec), std::move(paths), std::move(o), std::move(defaults),
                               std::move(file_columns));
}

DatasetPtr list_files(Context& ctx, std::vector<std::string> patterns, bool shuffle, int64_t seed) {
  const char* fn = "list_files";
  internal::check_paths(patterns, fn);
  std::set<std::string> found;
  for (const std::string& p : patterns) {
    glob_t g{};
    const int rc = ::glob(p.c_str(), 0, nullptr, &g);
    if (rc == 0)
      for (size_t i = 0; i < g.gl_pathc; ++i) found.insert(g.gl_pathv[i]);
    ::globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH)
      raise(Code::Unknown, "{}: glob of '{}' failed ({})", fn, p, rc == GLOB_NOSPACE ? "out of memory" : "a read error");
  }
  if (found.empty()) raise(Code::NotFound, "{}: no files match {}", fn, internal::paths_text(patterns));
  return std::make_shared<ListFiles>(ctx, std::move(patterns), std::vector<std::string>(found.begin(), found.end()),
                                     shuffle, seed);
}

}  // namespace cairn::data
