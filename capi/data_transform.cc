// The C API of the structural transformations (runtime/data/transforms.h): batch, padded_batch,
// unbatch, shuffle, repeat, take, skip, shard, zip, concatenate, enumerate, select, parse_example.
// The runtime validates arguments and specs and names the transformation in its errors.
#include <optional>
#include <string>
#include <vector>

#include "capi/internal/data_handles.h"
#include "capi/internal/feature_specs.h"
#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/data/transforms.h"

using cairn::Code;
using cairn::raise;
using cairn::capi::new_dataset;
using cairn::capi::require;
using cairn::capi::require_dataset;
namespace data = cairn::data;

namespace {

// The common shape of a one-input transformation: checks `out` and `in`, then *out = make(in).
template <class Make>
cairn_status* unary(const cairn_dataset* in, cairn_dataset** out, const char* fn, Make&& make) {
  CAIRN_API_BEGIN
  require(out, fn, "out");
  *out = new_dataset(make(require_dataset(in, fn, "in")));
  CAIRN_API_END_AS(fn)
}

std::vector<std::string> names_of(const char* const* names, size_t n, const char* fn, const char* what) {
  require(names, fn, what);
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) {
    if (!names[i]) raise(Code::InvalidArgument, "{}: {}[{}] is NULL", fn, what, i);
    out.emplace_back(names[i]);
  }
  return out;
}

}  // namespace

cairn_status* cairn_dataset_batch(const cairn_dataset* in, int64_t batch_size, cairn_bool drop_remainder,
                                  cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_batch",
               [&](const data::DatasetPtr& d) { return data::batch(d, batch_size, drop_remainder != 0); });
}

cairn_status* cairn_dataset_padded_batch(const cairn_dataset* in, int64_t batch_size, cairn_bool drop_remainder,
                                         const cairn_tensor_spec* padded_shapes, cairn_tensor* const* padding_values,
                                         cairn_dataset** out) {
  const char* fn = "cairn_dataset_padded_batch";
  return unary(in, out, fn, [&](const data::DatasetPtr& d) {
    const size_t n = d->spec().size();
    std::vector<std::optional<std::vector<int64_t>>> shapes;
    if (padded_shapes) {
      for (size_t c = 0; c < n; ++c) {
        const cairn_tensor_spec s = cairn::capi::read_array_element(padded_shapes, c, fn);
        if (s.rank > 0 && !s.shape)
          raise(Code::InvalidArgument, "{}: padded_shapes[{}].shape is NULL with rank {}", fn, c, s.rank);
        shapes.emplace_back(std::vector<int64_t>(s.shape, s.shape + s.rank));
      }
    }
    data::Element pads;
    if (padding_values) {
      for (size_t c = 0; c < n; ++c) pads.push_back(padding_values[c] ? padding_values[c]->t : cairn::Tensor());
    }
    return data::padded_batch(d, batch_size, drop_remainder != 0, std::move(shapes), std::move(pads));
  });
}

cairn_status* cairn_dataset_unbatch(const cairn_dataset* in, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_unbatch", [&](const data::DatasetPtr& d) { return data::unbatch(d); });
}

cairn_status* cairn_dataset_shuffle(const cairn_dataset* in, int64_t buffer_size, int64_t seed,
                                    cairn_bool reshuffle_each_iteration, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_shuffle", [&](const data::DatasetPtr& d) {
    return data::shuffle(d, buffer_size, seed, reshuffle_each_iteration != 0);
  });
}

cairn_status* cairn_dataset_repeat(const cairn_dataset* in, int64_t count, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_repeat", [&](const data::DatasetPtr& d) { return data::repeat(d, count); });
}

cairn_status* cairn_dataset_take(const cairn_dataset* in, int64_t count, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_take", [&](const data::DatasetPtr& d) { return data::take(d, count); });
}

cairn_status* cairn_dataset_skip(const cairn_dataset* in, int64_t count, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_skip", [&](const data::DatasetPtr& d) { return data::skip(d, count); });
}

cairn_status* cairn_dataset_shard(const cairn_dataset* in, int64_t num_shards, int64_t index, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_shard",
               [&](const data::DatasetPtr& d) { return data::shard(d, num_shards, index); });
}

cairn_status* cairn_dataset_zip(const cairn_dataset* const* ins, size_t n, cairn_dataset** out) {
  const char* fn = "cairn_dataset_zip";
  CAIRN_API_BEGIN
  require(out, fn, "out");
  if (n == 0) raise(Code::InvalidArgument, "{}: n is 0; zip needs at least one dataset", fn);
  require(ins, fn, "ins");
  std::vector<data::DatasetPtr> inputs;
  for (size_t i = 0; i < n; ++i) {
    const std::string what = "ins[" + std::to_string(i) + "]";
    inputs.push_back(require_dataset(ins[i], fn, what.c_str()));
  }
  *out = new_dataset(data::zip(std::move(inputs)));
  CAIRN_API_END
}

cairn_status* cairn_dataset_concatenate(const cairn_dataset* a, const cairn_dataset* b, cairn_dataset** out) {
  const char* fn = "cairn_dataset_concatenate";
  return unary(a, out, fn,
               [&](const data::DatasetPtr& d) { return data::concatenate(d, require_dataset(b, fn, "b")); });
}

cairn_status* cairn_dataset_enumerate(const cairn_dataset* in, int64_t start, cairn_dataset** out) {
  return unary(in, out, "cairn_dataset_enumerate", [&](const data::DatasetPtr& d) { return data::enumerate(d, start); });
}

cairn_status* cairn_dataset_select(const cairn_dataset* in, const char* const* names, const char* const* new_names,
                                   size_t n, cairn_dataset** out) {
  const char* fn = "cairn_dataset_select";
  return unary(in, out, fn, [&](const data::DatasetPtr& d) {
    if (n == 0) raise(Code::InvalidArgument, "{}: n is 0; select needs at least one name", fn);
    std::vector<std::string> keep = names_of(names, n, fn, "names");
    std::vector<std::string> rename = new_names ? names_of(new_names, n, fn, "new_names") : std::vector<std::string>{};
    return data::select(d, std::move(keep), std::move(rename));
  });
}

cairn_status* cairn_dataset_parse_example(const cairn_dataset* in, const char* component,
                                          const cairn_feature_spec* specs, size_t n_specs, cairn_dataset** out) {
  const char* fn = "cairn_dataset_parse_example";
  return unary(in, out, fn, [&](const data::DatasetPtr& d) {
    require(component, fn, "component");
    if (n_specs == 0) raise(Code::InvalidArgument, "{}: n_specs is 0", fn);
    return data::parse_example(d, component, cairn::capi::read_feature_specs(d->context(), specs, n_specs, fn));
  });
}
