// The C API of TFRecord files (runtime/io): writer, reader, counts, the index sidecar, shards.
#include <memory>
#include <string_view>

#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/io/record.h"
#include "runtime/io/record_index.h"
#include "runtime/io/record_reader.h"

struct cairn_record_writer {
  std::unique_ptr<cairn::io::RecordWriter> w;
};

struct cairn_record_reader {
  std::unique_ptr<cairn::io::RecordReader> r;
};

namespace cairn::capi {
namespace {

io::Compression compression(cairn_compression c, const char* fn) {
  if (c != CAIRN_COMPRESSION_NONE && c != CAIRN_COMPRESSION_ZLIB && c != CAIRN_COMPRESSION_GZIP)
    raise(Code::InvalidArgument, "{}: unknown compression {}", fn, static_cast<int>(c));
  return static_cast<io::Compression>(c);
}

io::RecordReaderOptions reader_options(const cairn_record_reader_options* user, const char* fn) {
  const cairn_record_reader_options o = read_options(user, fn);
  io::RecordReaderOptions out;
  out.compression = compression(o.compression, fn);
  out.verify_checksums = o.verify_checksums != 0;
  out.read_ahead = o.read_ahead != 0;
  out.buffer_size = static_cast<size_t>(o.buffer_size);
  return out;
}

uint64_t non_negative(int64_t v, const char* fn, const char* what) {
  if (v < 0) raise(Code::InvalidArgument, "{}: {} is negative ({})", fn, what, v);
  return static_cast<uint64_t>(v);
}

}  // namespace
}  // namespace cairn::capi

using cairn::capi::require;

extern "C" {

cairn_status* cairn_record_writer_open(const char* path, const cairn_record_writer_options* user_opts,
                                       cairn_record_writer** out) {
  constexpr const char* fn = "cairn_record_writer_open";
  CAIRN_API_BEGIN
  require(path, fn, "path");
  require(out, fn, "out");
  const cairn_record_writer_options o = cairn::capi::read_options(user_opts, fn);
  cairn::io::RecordWriterOptions opts;
  opts.compression = cairn::capi::compression(o.compression, fn);
  opts.level = o.level;
  opts.write_index = o.write_index != 0;
  opts.append = o.append != 0;
  *out = new cairn_record_writer{cairn::io::RecordWriter::open(path, opts)};
  CAIRN_API_END
}

cairn_status* cairn_record_writer_write(cairn_record_writer* w, const void* data, size_t n) {
  CAIRN_API_BEGIN
  require(w, "cairn_record_writer_write", "writer")->w->write(data, n);
  CAIRN_API_END
}

cairn_status* cairn_record_writer_flush(cairn_record_writer* w) {
  CAIRN_API_BEGIN
  require(w, "cairn_record_writer_flush", "writer")->w->flush();
  CAIRN_API_END
}

cairn_status* cairn_record_writer_sync(cairn_record_writer* w) {
  CAIRN_API_BEGIN
  require(w, "cairn_record_writer_sync", "writer")->w->sync();
  CAIRN_API_END
}

cairn_status* cairn_record_writer_close(cairn_record_writer* w) {
  CAIRN_API_BEGIN
  require(w, "cairn_record_writer_close", "writer")->w->close();
  CAIRN_API_END
}

int64_t cairn_record_writer_count(const cairn_record_writer* w) {
  return w ? static_cast<int64_t>(w->w->records()) : 0;
}

void cairn_record_writer_free(cairn_record_writer* w) { delete w; }

cairn_status* cairn_record_reader_open(const char* path, const cairn_record_reader_options* opts,
                                       cairn_record_reader** out) {
  constexpr const char* fn = "cairn_record_reader_open";
  CAIRN_API_BEGIN
  require(path, fn, "path");
  require(out, fn, "out");
  *out = new cairn_record_reader{cairn::io::RecordReader::open(path, cairn::capi::reader_options(opts, fn))};
  CAIRN_API_END
}

cairn_status* cairn_record_reader_next(cairn_record_reader* r, const void** data, size_t* n, cairn_bool* got) {
  constexpr const char* fn = "cairn_record_reader_next";
  CAIRN_API_BEGIN
  require(r, fn, "reader");
  require(data, fn, "data");
  require(n, fn, "n");
  require(got, fn, "got");
  std::string_view rec;
  bool ok = r->r->next(&rec);
  *data = ok ? rec.data() : nullptr;
  *n = ok ? rec.size() : 0;
  *got = ok ? CAIRN_TRUE : CAIRN_FALSE;
  CAIRN_API_END
}

int64_t cairn_record_reader_offset(const cairn_record_reader* r) {
  return r ? static_cast<int64_t>(r->r->offset()) : -1;
}

cairn_bool cairn_record_reader_partial(const cairn_record_reader* r) {
  return r && r->r->partial() ? CAIRN_TRUE : CAIRN_FALSE;
}

cairn_status* cairn_record_reader_seek(cairn_record_reader* r, int64_t offset) {
  constexpr const char* fn = "cairn_record_reader_seek";
  CAIRN_API_BEGIN
  require(r, fn, "reader")->r->seek(cairn::capi::non_negative(offset, fn, "offset"));
  CAIRN_API_END
}

cairn_status* cairn_record_reader_seek_record(cairn_record_reader* r, int64_t index) {
  constexpr const char* fn = "cairn_record_reader_seek_record";
  CAIRN_API_BEGIN
  require(r, fn, "reader")->r->seek_record(cairn::capi::non_negative(index, fn, "index"));
  CAIRN_API_END
}

void cairn_record_reader_free(cairn_record_reader* r) { delete r; }

cairn_status* cairn_record_file_count(const char* path, const cairn_record_reader_options* opts, int64_t* out) {
  constexpr const char* fn = "cairn_record_file_count";
  CAIRN_API_BEGIN
  require(path, fn, "path");
  require(out, fn, "out");
  *out = static_cast<int64_t>(cairn::io::count_records(path, cairn::capi::reader_options(opts, fn)));
  CAIRN_API_END
}

cairn_status* cairn_record_index_build(const char* path, const cairn_record_reader_options* opts, int64_t* count_out) {
  constexpr const char* fn = "cairn_record_index_build";
  CAIRN_API_BEGIN
  require(path, fn, "path");
  cairn::io::RecordIndex idx = cairn::io::build_record_index(path, cairn::capi::reader_options(opts, fn));
  if (count_out) *count_out = static_cast<int64_t>(idx.count());
  CAIRN_API_END
}

cairn_status* cairn_record_shard_range(int64_t count, int64_t num_shards, int64_t shard, int64_t* begin,
                                       int64_t* end) {
  constexpr const char* fn = "cairn_record_shard_range";
  CAIRN_API_BEGIN
  require(begin, fn, "begin");
  require(end, fn, "end");
  uint64_t c = cairn::capi::non_negative(count, fn, "count");
  if (num_shards <= 0 || shard < 0 || shard >= num_shards)
    cairn::raise(cairn::Code::InvalidArgument, "{}: shard {} of {} does not exist", fn, shard, num_shards);
  auto range = cairn::io::shard_range(c, static_cast<uint64_t>(num_shards), static_cast<uint64_t>(shard));
  *begin = static_cast<int64_t>(range.first);
  *end = static_cast<int64_t>(range.second);
  CAIRN_API_END
}

}  // extern "C"
