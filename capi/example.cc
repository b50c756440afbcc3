// The C API of tf.train.Example / SequenceExample (runtime/io/example.h): a cairn_example handle
// to build, serialize, parse and read one message, and batched parsing into tensors.
#include <iterator>
#include <memory>

#include "capi/internal/feature_specs.h"
#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/io/example.h"

using cairn::Code;
using cairn::raise;
using cairn::capi::require;
namespace io = cairn::io;

struct cairn_example {
  cairn_example_kind kind;
  io::Example example;           // CAIRN_EXAMPLE
  io::SequenceExample sequence;  // CAIRN_SEQUENCE_EXAMPLE

  io::FeatureMap& features() { return kind == CAIRN_EXAMPLE ? example.features : sequence.context; }
  const io::FeatureMap& features() const { return kind == CAIRN_EXAMPLE ? example.features : sequence.context; }
};

namespace cairn::capi {

std::vector<io::FeatureSpec> read_feature_specs(cairn::Context& ctx, const cairn_feature_spec* specs, size_t n_specs,
                                                const char* fn) {
  if (n_specs > 0) require(specs, fn, "specs");
  std::vector<io::FeatureSpec> out(n_specs);
  for (size_t j = 0; j < n_specs; ++j) {
    const cairn_feature_spec s = cairn::capi::read_array_element(specs, j, fn);
    if (!s.key) raise(Code::InvalidArgument, "{}: specs[{}].key is NULL", fn, j);
    if (s.rank > 0 && !s.shape) raise(Code::InvalidArgument, "{}: specs[{}].shape is NULL with rank {}", fn, j, s.rank);
    io::FeatureSpec& f = out[j];
    f.key = s.key;
    f.kind = static_cast<io::SpecKind>(cairn::capi::enum_bits(s.kind));
    f.dtype = static_cast<cairn::DType>(cairn::capi::enum_bits(s.dtype));
    f.shape = cairn::Shape::from(s.shape, s.rank, fn);
    if (s.default_value) f.default_value = cairn::host_values(s.default_value->t, ctx.cpu(), fn);
  }
  return out;
}

}  // namespace cairn::capi

namespace {

void check_kind(cairn_example_kind kind, const char* fn) {
  if (kind != CAIRN_EXAMPLE && kind != CAIRN_SEQUENCE_EXAMPLE)
    raise(Code::InvalidArgument, "{}: kind {} is neither CAIRN_EXAMPLE (1) nor CAIRN_SEQUENCE_EXAMPLE (2)", fn,
          static_cast<int>(kind));
}

template <class T>
std::vector<T> copy_values(const T* values, size_t n, const char* fn) {
  if (n > 0) require(values, fn, "values");
  return std::vector<T>(values, values + n);
}

io::Feature bytes_feature(const void* const* values, const size_t* lens, size_t n, const char* fn) {
  std::vector<std::string> strings;
  if (n > 0) {
    require(values, fn, "values");
    require(lens, fn, "lens");
  }
  strings.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (lens[i] > 0 && values[i] == nullptr) raise(Code::InvalidArgument, "{}: values[{}] is NULL", fn, i);
    strings.emplace_back(static_cast<const char*>(values[i]), lens[i]);
  }
  return io::Feature::bytes(std::move(strings));
}

// Sets a feature (a context feature of a sequence example) to `make()`.
template <class Make>
cairn_status* set_feature(cairn_example* ex, const char* key, const char* fn, Make&& make) {
  CAIRN_API_BEGIN
  require(ex, fn, "ex");
  require(key, fn, "key");
  ex->features().insert_or_assign(key, make());
  CAIRN_API_END_AS(fn)
}

// Appends `make()` as a step of feature list `key`.
template <class Make>
cairn_status* append_step(cairn_example* ex, const char* key, const char* fn, Make&& make) {
  CAIRN_API_BEGIN
  require(ex, fn, "ex");
  require(key, fn, "key");
  if (ex->kind != CAIRN_SEQUENCE_EXAMPLE)
    raise(Code::InvalidArgument, "{}: feature lists belong to sequence examples; this is an Example", fn);
  io::Feature f = make();
  ex->sequence.feature_lists[key].push_back(std::move(f));
  CAIRN_API_END_AS(fn)
}

const io::Feature& lookup(const cairn_example* ex, const char* key, int64_t step, const char* fn) {
  require(ex, fn, "ex");
  require(key, fn, "key");
  if (step < 0) {
    if (step != CAIRN_EXAMPLE_NO_STEP) raise(Code::InvalidArgument, "{}: step {} is negative", fn, step);
    auto it = ex->features().find(key);
    if (it == ex->features().end()) raise(Code::NotFound, "{}: no feature '{}'", fn, key);
    return it->second;
  }
  if (ex->kind != CAIRN_SEQUENCE_EXAMPLE)
    raise(Code::InvalidArgument, "{}: step {} given, but an Example has no feature lists", fn, step);
  auto it = ex->sequence.feature_lists.find(key);
  if (it == ex->sequence.feature_lists.end()) raise(Code::NotFound, "{}: no feature list '{}'", fn, key);
  if (static_cast<uint64_t>(step) >= it->second.size())
    raise(Code::OutOfRange, "{}: feature list '{}' has {} steps; step {} asked", fn, key, it->second.size(), step);
  return it->second[static_cast<size_t>(step)];
}

template <class Map>
const char* key_at(const Map& m, size_t i) {
  if (i >= m.size()) return nullptr;
  return std::next(m.begin(), static_cast<std::ptrdiff_t>(i))->first.c_str();
}

// The outputs `specs` give (cairn_parse_num_outputs); unknown kinds are INVALID_ARGUMENT.
size_t count_outputs(const cairn_feature_spec* specs, size_t n_specs, const char* fn) {
  if (n_specs > 0) require(specs, fn, "specs");
  size_t n = 0;
  for (size_t j = 0; j < n_specs; ++j) {
    const cairn_feature_spec s = cairn::capi::read_array_element(specs, j, fn);
    const int32_t kind = cairn::capi::enum_bits(s.kind);
    const int k = io::spec_outputs(static_cast<io::SpecKind>(kind));
    if (k == 0) raise(Code::InvalidArgument, "{}: specs[{}]: unknown kind {}", fn, j, kind);
    n += static_cast<size_t>(k);
  }
  return n;
}

cairn_status* parse_batch(bool sequence, cairn_context* ctx, const void* const* records, const size_t* lens, size_t n,
                          const cairn_feature_spec* specs, size_t n_specs, cairn_tensor** outputs, size_t n_outputs,
                          const char* fn) {
  CAIRN_API_BEGIN
  require(ctx, fn, "ctx");
  if (n > 0) {
    require(records, fn, "records");
    require(lens, fn, "lens");
  }
  std::vector<std::string_view> views(n);
  for (size_t i = 0; i < n; ++i) {
    if (lens[i] > 0 && records[i] == nullptr) raise(Code::InvalidArgument, "{}: records[{}] is NULL", fn, i);
    views[i] = std::string_view(static_cast<const char*>(records[i]), lens[i]);
  }
  const size_t want = count_outputs(specs, n_specs, fn);
  const std::vector<io::FeatureSpec> parsed = cairn::capi::read_feature_specs(*ctx->ctx, specs, n_specs, fn);
  if (n_outputs != want)
    raise(Code::InvalidArgument, "{}: the specs give {} outputs, but n_outputs is {}", fn, want, n_outputs);
  if (want > 0) require(outputs, fn, "outputs");
  cairn::Device& host = ctx->ctx->cpu();
  cairn::ThreadPool* pool = &ctx->ctx->pool();
  std::vector<cairn::Tensor> result = sequence ? io::parse_sequence_examples(host, views.data(), n, parsed, pool)
                                               : io::parse_examples(host, views.data(), n, parsed, pool);
  for (size_t k = 0; k < result.size(); ++k) outputs[k] = cairn::capi::new_tensor(std::move(result[k]));
  CAIRN_API_END_AS(fn)
}

}  // namespace

extern "C" {

cairn_status* cairn_example_create(cairn_example_kind kind, cairn_example** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_create";
  require(out, fn, "out");
  check_kind(kind, fn);
  *out = new cairn_example{kind, {}, {}};
  CAIRN_API_END
}

cairn_status* cairn_example_parse(cairn_example_kind kind, const void* data, size_t n, cairn_example** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_parse";
  require(out, fn, "out");
  check_kind(kind, fn);
  if (n > 0) require(data, fn, "data");
  const std::string_view bytes(static_cast<const char*>(data), n);
  auto ex = std::make_unique<cairn_example>(cairn_example{kind, {}, {}});
  if (kind == CAIRN_EXAMPLE) {
    ex->example = io::parse_example(bytes);
  } else {
    ex->sequence = io::parse_sequence_example(bytes);
  }
  *out = ex.release();
  CAIRN_API_END
}

void cairn_example_free(cairn_example* ex) { delete ex; }

cairn_example_kind cairn_example_get_kind(const cairn_example* ex) {
  return ex ? ex->kind : static_cast<cairn_example_kind>(0);
}

cairn_status* cairn_example_set_int64s(cairn_example* ex, const char* key, const int64_t* values, size_t n) {
  const char* fn = "cairn_example_set_int64s";
  return set_feature(ex, key, fn, [&] { return io::Feature::int64s(copy_values(values, n, fn)); });
}

cairn_status* cairn_example_set_floats(cairn_example* ex, const char* key, const float* values, size_t n) {
  const char* fn = "cairn_example_set_floats";
  return set_feature(ex, key, fn, [&] { return io::Feature::floats(copy_values(values, n, fn)); });
}

cairn_status* cairn_example_set_bytes(cairn_example* ex, const char* key, const void* const* values,
                                      const size_t* lens, size_t n) {
  const char* fn = "cairn_example_set_bytes";
  return set_feature(ex, key, fn, [&] { return bytes_feature(values, lens, n, fn); });
}

cairn_status* cairn_example_append_step_int64s(cairn_example* ex, const char* key, const int64_t* values, size_t n) {
  const char* fn = "cairn_example_append_step_int64s";
  return append_step(ex, key, fn, [&] { return io::Feature::int64s(copy_values(values, n, fn)); });
}

cairn_status* cairn_example_append_step_floats(cairn_example* ex, const char* key, const float* values, size_t n) {
  const char* fn = "cairn_example_append_step_floats";
  return append_step(ex, key, fn, [&] { return io::Feature::floats(copy_values(values, n, fn)); });
}

cairn_status* cairn_example_append_step_bytes(cairn_example* ex, const char* key, const void* const* values,
                                              const size_t* lens, size_t n) {
  const char* fn = "cairn_example_append_step_bytes";
  return append_step(ex, key, fn, [&] { return bytes_feature(values, lens, n, fn); });
}

cairn_status* cairn_example_serialize(const cairn_example* ex, char** out, size_t* n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_serialize";
  require(ex, fn, "ex");
  require(out, fn, "out");
  require(n, fn, "n");
  const std::string bytes = ex->kind == CAIRN_EXAMPLE ? io::serialize(ex->example) : io::serialize(ex->sequence);
  *out = cairn::capi::malloc_string(bytes, fn);
  *n = bytes.size();
  CAIRN_API_END
}

size_t cairn_example_feature_count(const cairn_example* ex) { return ex ? ex->features().size() : 0; }

const char* cairn_example_feature_key(const cairn_example* ex, size_t i) {
  return ex ? key_at(ex->features(), i) : nullptr;
}

size_t cairn_example_feature_list_count(const cairn_example* ex) { return ex ? ex->sequence.feature_lists.size() : 0; }

const char* cairn_example_feature_list_key(const cairn_example* ex, size_t i) {
  return ex ? key_at(ex->sequence.feature_lists, i) : nullptr;
}

cairn_status* cairn_example_feature_list_steps(const cairn_example* ex, const char* key, size_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_feature_list_steps";
  require(ex, fn, "ex");
  require(key, fn, "key");
  require(out, fn, "out");
  auto it = ex->sequence.feature_lists.find(key);
  if (it == ex->sequence.feature_lists.end()) raise(Code::NotFound, "{}: no feature list '{}'", fn, key);
  *out = it->second.size();
  CAIRN_API_END
}

cairn_status* cairn_example_values(const cairn_example* ex, const char* key, int64_t step, cairn_feature_values* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_values";
  require(out, fn, "out");
  cairn::capi::check_struct_size<cairn_feature_values>(out->struct_size, fn);
  const io::Feature& f = lookup(ex, key, step, fn);
  cairn_feature_values v = cairn::capi::StructInfo<cairn_feature_values>::defaults();
  v.kind = static_cast<cairn_feature_kind>(f.kind);
  v.count = f.size();
  if (f.kind == io::FeatureKind::Float) v.floats = f.float_list.data();
  if (f.kind == io::FeatureKind::Int64) v.int64s = f.int64_list.data();
  cairn::capi::write_struct(out, v, fn);
  CAIRN_API_END
}

cairn_status* cairn_example_bytes(const cairn_example* ex, const char* key, int64_t step, size_t index,
                                  const void** data, size_t* n) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_example_bytes";
  require(data, fn, "data");
  require(n, fn, "n");
  const io::Feature& f = lookup(ex, key, step, fn);
  if (f.kind != io::FeatureKind::Bytes)
    raise(Code::InvalidArgument, "{}: feature '{}' is a {} list, not bytes", fn, key, io::feature_kind_name(f.kind));
  if (index >= f.bytes_list.size())
    raise(Code::OutOfRange, "{}: feature '{}' has {} byte strings; index {} asked", fn, key, f.bytes_list.size(),
          index);
  *data = f.bytes_list[index].data();
  *n = f.bytes_list[index].size();
  CAIRN_API_END
}

cairn_status* cairn_parse_num_outputs(const cairn_feature_spec* specs, size_t n_specs, size_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_parse_num_outputs";
  require(out, fn, "out");
  *out = count_outputs(specs, n_specs, fn);
  CAIRN_API_END
}

cairn_status* cairn_parse_examples(cairn_context* ctx, const void* const* records, const size_t* lens, size_t n,
                                   const cairn_feature_spec* specs, size_t n_specs, cairn_tensor** outputs,
                                   size_t n_outputs) {
  return parse_batch(false, ctx, records, lens, n, specs, n_specs, outputs, n_outputs, "cairn_parse_examples");
}

cairn_status* cairn_parse_sequence_examples(cairn_context* ctx, const void* const* records, const size_t* lens,
                                            size_t n, const cairn_feature_spec* specs, size_t n_specs,
                                            cairn_tensor** outputs, size_t n_outputs) {
  return parse_batch(true, ctx, records, lens, n, specs, n_specs, outputs, n_outputs,
                     "cairn_parse_sequence_examples");
}

}  // extern "C"
