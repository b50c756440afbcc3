// The C API of datasets and iterators (runtime/data): the dataset handle, the sources, iterators.
// Transformations live in data_transform.cc and data_parallel.cc.
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capi/internal/data_handles.h"
#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "runtime/data/iterator_object.h"
#include "runtime/data/sources.h"

namespace cairn::capi {

const data::DatasetPtr& require_dataset(const cairn_dataset* h, const char* fn, const char* what) {
  if (h == nullptr || !h->ds) raise(Code::InvalidArgument, "{}: {} is NULL", fn, what);
  return h->ds;
}

std::vector<std::string> component_names(const char* const* names, size_t n, const char* fn) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (names && !names[i]) raise(Code::InvalidArgument, "{}: names[{}] is NULL", fn, i);
    out.push_back(names ? std::string(names[i]) : std::to_string(i));
  }
  data::check_component_names(out, fn);
  return out;
}

data::ElementSpec element_spec(const char* const* names, const cairn_tensor_spec* specs, size_t n, const char* fn) {
  if (n == 0) raise(Code::InvalidArgument, "{}: no components", fn);
  require(specs, fn, "specs");
  std::vector<std::string> ns = component_names(names, n, fn);
  data::ElementSpec spec;
  for (size_t i = 0; i < n; ++i) {
    const cairn_tensor_spec s = read_array_element(specs, i, fn);
    const auto dtype = static_cast<DType>(cairn::capi::enum_bits(s.dtype));
    if (!dtype_is_valid(dtype) || dtype == DType::Invalid || dtype == DType::String)
      raise(Code::InvalidArgument, "{}: specs[{}] ('{}') has dtype {}; expected a numeric or bool dtype", fn, i, ns[i],
            static_cast<int>(dtype));
    if (s.rank > static_cast<size_t>(kMaxRank))
      raise(Code::InvalidArgument, "{}: specs[{}] ('{}') has rank {} (at most {})", fn, i, ns[i], s.rank, kMaxRank);
    if (s.rank) require(s.shape, fn, "specs shape");
    std::vector<int64_t> dims(s.shape, s.shape + s.rank);
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d] < -1)
        raise(Code::InvalidArgument, "{}: specs[{}] ('{}') dim {} is {} (expected >= 0, or -1 for any)", fn, i, ns[i],
              d, dims[d]);
    spec.components.push_back({ns[i], dtype, std::move(dims)});
  }
  return spec;
}

namespace {

Context& require_context(cairn_context* ctx, const char* fn) { return *require(ctx, fn, "ctx")->ctx; }

data::Element tensors(cairn_tensor* const* ts, size_t n, const char* fn) {
  if (n == 0) raise(Code::InvalidArgument, "{}: n is 0 (at least one tensor is needed)", fn);
  require(ts, fn, "tensors");
  data::Element out;
  for (size_t i = 0; i < n; ++i) {
    if (!ts[i]) raise(Code::InvalidArgument, "{}: tensors[{}] is NULL", fn, i);
    out.push_back(ts[i]->t);
  }
  return out;
}

data::IteratorObject& require_iterator(const cairn_object* h, const char* fn) {
  return static_cast<data::IteratorObject&>(require_kind(h, ObjectKind::Iterator, fn, "it"));
}

void set_out(cairn_dataset** out, data::DatasetPtr ds) { *out = new_dataset(std::move(ds)); }

std::vector<std::string> strings(const char* const* items, size_t n, const char* fn, const char* what) {
  if (n) require(items, fn, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (!items[i]) raise(Code::InvalidArgument, "{}: {}[{}] is NULL", fn, what, i);
    out.emplace_back(items[i]);
  }
  return out;
}

data::CsvOptions csv_options(const cairn_csv_options* user, const char* fn) {
  require(user, fn, "opts");
  const cairn_csv_options o = read_options(user, fn);
  data::CsvOptions out;
  if (o.n_columns) require(o.column_dtypes, fn, "column_dtypes");
  for (size_t c = 0; c < o.n_columns; ++c) out.column_dtypes.push_back(static_cast<DType>(cairn::capi::enum_bits(o.column_dtypes[c])));
  if (o.column_defaults)
    for (size_t c = 0; c < o.n_columns; ++c)
      out.column_defaults.push_back(o.column_defaults[c] ? std::optional<std::string>(o.column_defaults[c]) : std::nullopt);
  if (o.column_names) out.column_names = strings(o.column_names, o.n_columns, fn, "column_names");
  if (o.select_columns) out.select_columns.assign(o.select_columns, o.select_columns + o.n_columns);
  out.header = o.header != 0;
  if (o.delimiter <= 0 || o.delimiter > 127)
    raise(Code::InvalidArgument, "{}: delimiter {} is not one ASCII character", fn, o.delimiter);
  out.delimiter = static_cast<char>(o.delimiter);
  if (o.na_value) out.na_value = std::string(o.na_value);
  return out;
}

data::TfRecordOptions tfrecord_options(const cairn_tfrecord_options* user, const char* fn) {
  const cairn_tfrecord_options o = read_options(user, fn);
  data::TfRecordOptions out;
  if (o.compression != CAIRN_COMPRESSION_NONE && o.compression != CAIRN_COMPRESSION_ZLIB &&
      o.compression != CAIRN_COMPRESSION_GZIP)
    raise(Code::InvalidArgument, "{}: unknown compression {}", fn, static_cast<int>(o.compression));
  out.compression = static_cast<io::Compression>(o.compression);
  out.num_parallel_reads = o.num_parallel_reads;
  out.buffer_size = o.buffer_size;
  return out;
}

// A C generator and what it needs; `release` runs when the last dataset using it goes.
struct CGenerator {
  cairn_generator_fn fn = nullptr;
  void* user_data = nullptr;
  void (*release)(void*) = nullptr;
  cairn_context ctx;
  std::vector<std::string> names;
  ~CGenerator() {
    if (release) release(user_data);
  }
};

bool call_generator(CGenerator& g, int64_t index, data::Element& out) {
  const size_t n = g.names.size();
  std::vector<cairn_tensor*> outs(n, nullptr);
  cairn_bool got = CAIRN_FALSE;
  cairn_status* st = g.fn(g.user_data, &g.ctx, index, outs.data(), n, &got);
  struct FreeOuts {
    std::vector<cairn_tensor*>& v;
    ~FreeOuts() {
      for (cairn_tensor* t : v) delete t;
    }
  } free_outs{outs};
  if (st) raise_user_status(st);
  if (!got) return false;
  out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!outs[i]) raise(Code::InvalidArgument, "output {} ('{}') was not set", i, g.names[i]);
    out[i] = outs[i]->t;
  }
  return true;
}

}  // namespace
}  // namespace cairn::capi

using cairn::capi::require;
namespace data = cairn::data;

extern "C" {

void cairn_dataset_free(cairn_dataset* ds) { delete ds; }

size_t cairn_dataset_num_components(const cairn_dataset* ds) {
  return ds && ds->ds ? ds->ds->spec().size() : 0;
}

cairn_status* cairn_dataset_component(const cairn_dataset* ds, size_t index, const char** name, cairn_dtype* dtype,
                                      const int64_t** shape, size_t* rank) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_component";
  const auto& spec = cairn::capi::require_dataset(ds, fn)->spec();
  if (index >= spec.size())
    cairn::raise(cairn::Code::OutOfRange, "{}: index {} is past the {} components", fn, index, spec.size());
  const auto& c = spec.components[index];
  if (name) *name = c.name.c_str();
  if (dtype) *dtype = static_cast<cairn_dtype>(c.dtype);
  if (shape) *shape = c.dims.data();
  if (rank) *rank = c.dims.size();
  CAIRN_API_END
}

int64_t cairn_dataset_cardinality(const cairn_dataset* ds) {
  if (!ds || !ds->ds) return CAIRN_UNKNOWN_CARDINALITY;
  try {
    return ds->ds->cardinality();
  } catch (...) {
    return CAIRN_UNKNOWN_CARDINALITY;  // a file source whose files cannot be read yet
  }
}

cairn_status* cairn_dataset_describe(const cairn_dataset* ds, char** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_describe";
  const auto& d = cairn::capi::require_dataset(ds, fn);
  require(out, fn, "out");
  *out = cairn::capi::malloc_string(d->describe(), fn);
  CAIRN_API_END
}

cairn_status* cairn_dataset_from_tensors(cairn_context* ctx, const char* const* names, cairn_tensor* const* tensors,
                                         size_t n, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_from_tensors";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  auto values = cairn::capi::tensors(tensors, n, fn);
  cairn::capi::set_out(out, data::from_tensors(c, cairn::capi::component_names(names, n, fn), std::move(values)));
  CAIRN_API_END
}

cairn_status* cairn_dataset_from_tensor_slices(cairn_context* ctx, const char* const* names,
                                               cairn_tensor* const* tensors, size_t n, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_from_tensor_slices";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  auto values = cairn::capi::tensors(tensors, n, fn);
  cairn::capi::set_out(out, data::from_tensor_slices(c, cairn::capi::component_names(names, n, fn), std::move(values)));
  CAIRN_API_END
}

cairn_status* cairn_dataset_range(cairn_context* ctx, int64_t start, int64_t stop, int64_t step, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_range";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  cairn::capi::set_out(out, data::range(c, start, stop, step));
  CAIRN_API_END
}

cairn_status* cairn_dataset_text_lines(cairn_context* ctx, const char* const* paths, size_t n_paths,
                                      cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_text_lines";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  cairn::capi::set_out(out, data::text_lines(c, cairn::capi::strings(paths, n_paths, fn, "paths")));
  CAIRN_API_END
}

cairn_status* cairn_dataset_csv(cairn_context* ctx, const char* const* paths, size_t n_paths,
                               const cairn_csv_options* opts, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_csv";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  auto o = cairn::capi::csv_options(opts, fn);
  cairn::capi::set_out(out, data::csv(c, cairn::capi::strings(paths, n_paths, fn, "paths"), std::move(o)));
  CAIRN_API_END
}

cairn_status* cairn_dataset_list_files(cairn_context* ctx, const char* const* patterns, size_t n_patterns,
                                      cairn_bool shuffle, int64_t seed, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_list_files";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  cairn::capi::set_out(out, data::list_files(c, cairn::capi::strings(patterns, n_patterns, fn, "patterns"),
                                             shuffle != 0, seed));
  CAIRN_API_END
}

cairn_status* cairn_dataset_tfrecord(cairn_context* ctx, const char* const* paths, size_t n_paths,
                                    const cairn_tfrecord_options* opts, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_tfrecord";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  auto o = cairn::capi::tfrecord_options(opts, fn);
  cairn::capi::set_out(out, data::tfrecord(c, cairn::capi::strings(paths, n_paths, fn, "paths"), o));
  CAIRN_API_END
}

cairn_status* cairn_dataset_from_generator(cairn_context* ctx, const char* const* names, const cairn_tensor_spec* specs,
                                          size_t n, cairn_generator_fn gen, void* user_data,
                                          void (*release)(void* user_data), cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_from_generator";
  cairn::Context& c = cairn::capi::require_context(ctx, fn);
  require(out, fn, "out");
  require(gen, fn, "fn");
  data::ElementSpec spec = cairn::capi::element_spec(names, specs, n, fn);
  auto g = std::make_shared<cairn::capi::CGenerator>();
  g->fn = gen;
  g->user_data = user_data;
  g->ctx.ctx = cairn::Ref<cairn::Context>::share(&c);
  for (const auto& comp : spec.components) g->names.push_back(comp.name);
  data::DatasetPtr ds = data::from_generator(
      c, std::move(spec), [g](int64_t index, data::Element& e) { return cairn::capi::call_generator(*g, index, e); });
  g->release = release;  // only once the dataset exists: on an error the caller keeps user_data
  cairn::capi::set_out(out, std::move(ds));
  CAIRN_API_END
}

/* ---- Iterators ---- */

cairn_status* cairn_dataset_iterate(const cairn_dataset* ds, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_dataset_iterate";
  const auto& d = cairn::capi::require_dataset(ds, fn);
  require(out, fn, "out");
  *out = cairn::capi::new_object(data::IteratorObject::create(d));
  CAIRN_API_END
}

cairn_status* cairn_iterator_next(cairn_object* it, cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_iterator_next";
  data::IteratorObject& iter = cairn::capi::require_iterator(it, fn);
  const size_t n = iter.dataset()->spec().size();
  if (n_outputs != n)
    cairn::raise(cairn::Code::InvalidArgument, "{}: n_outputs is {}, but {} has {} components ({})", fn, n_outputs,
                 iter.dataset()->describe(), n, iter.dataset()->spec().text());
  require(outputs, fn, "outputs");
  data::Element e;
  if (!iter.next(e)) cairn::raise(cairn::Code::OutOfRange, "{}: end of data", iter.dataset()->describe());
  if (e.size() != n)
    cairn::raise(cairn::Code::Internal, "{}: {} gave {} components, expected {}", fn, iter.dataset()->describe(),
                 e.size(), n);
  for (size_t i = 0; i < n; ++i) outputs[i] = cairn::capi::new_tensor(std::move(e[i]));
  CAIRN_API_END
}

int64_t cairn_iterator_position(const cairn_object* it) {
  if (!it || !it->obj || it->obj->kind() != cairn::ObjectKind::Iterator) return -1;
  return static_cast<const data::IteratorObject&>(*it->obj).position();
}

cairn_status* cairn_iterator_save(cairn_object* it, void** out, size_t* n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_iterator_save";
  data::IteratorObject& iter = cairn::capi::require_iterator(it, fn);
  require(out, fn, "out");
  require(n, fn, "n");
  const std::string s = iter.state();
  *out = cairn::capi::malloc_string(s, fn);
  *n = s.size();
  CAIRN_API_END
}

cairn_status* cairn_iterator_restore(cairn_object* it, const void* state, size_t n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_iterator_restore";
  data::IteratorObject& iter = cairn::capi::require_iterator(it, fn);
  if (n) require(state, fn, "state");
  iter.restore_state(std::string_view(static_cast<const char*>(state), n));
  CAIRN_API_END
}

cairn_status* cairn_iterator_close(cairn_object* it) {
  CAIRN_API_BEGIN
  cairn::capi::require_iterator(it, "cairn_iterator_close").close();
  CAIRN_API_END
}

cairn_status* cairn_iterator_dataset(const cairn_object* it, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_iterator_dataset";
  data::IteratorObject& iter = cairn::capi::require_iterator(it, fn);
  require(out, fn, "out");
  *out = cairn::capi::new_dataset(iter.dataset());
  CAIRN_API_END
}

}  // extern "C"
