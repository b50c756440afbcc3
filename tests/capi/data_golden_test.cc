// Cairn's pipelines against real tf.data: tests/golden/data/expected.json holds the elements that
// TensorFlow 2.21 gives for small deterministic pipelines (make_golden.py beside it). Each case is
// built here through the C API, under the same name, and every element's dtype, shape and values,
// the element count and the end of data are compared. A case in the file that this test cannot
// build, or a pipeline here the file lacks, fails too. Each pipeline is also cut in the middle:
// saved, restored into a fresh iterator, and the rest must still match.
//
// Written in C++ against the C API only for nlohmann-json (the golden data stays one committed
// file, read at test time).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cairn/cairn.h"

namespace {

using json = nlohmann::json;

int g_failures = 0;
int g_checks = 0;

void fail(const std::string& where, const std::string& what) {
  ++g_failures;
  std::fprintf(stderr, "FAIL %s: %s\n", where.c_str(), what.c_str());
}

// Takes the status; true when it was NULL.
bool ok(cairn_status* st, const std::string& where) {
  ++g_checks;
  if (st == nullptr) return true;
  fail(where, std::string("error ") + std::to_string(cairn_status_code(st)) + ": " + cairn_status_message(st));
  cairn_status_free(st);
  return false;
}

struct DatasetFree {
  void operator()(cairn_dataset* d) const { cairn_dataset_free(d); }
};
using Dataset = std::unique_ptr<cairn_dataset, DatasetFree>;

// Turns a constructor's out-parameter into an owned handle; a failure is recorded, and the case
// fails later with an empty handle.
Dataset take(cairn_status* st, cairn_dataset* out, const std::string& what) {
  if (!ok(st, what)) return nullptr;
  return Dataset(out);
}

cairn_context* g_ctx = nullptr;

// ---- Tensors ----

cairn_tensor* tensor(cairn_dtype dtype, std::vector<int64_t> shape, const void* data, size_t nbytes) {
  cairn_tensor* t = nullptr;
  ok(cairn_tensor_create(g_ctx, dtype, shape.data(), shape.size(), data, nbytes, &t), "cairn_tensor_create");
  return t;
}

cairn_tensor* i64_scalar(cairn_context* ctx, int64_t v) {
  cairn_tensor* t = nullptr;
  cairn_status* st = cairn_tensor_create(ctx, CAIRN_INT64, nullptr, 0, &v, sizeof v, &t);
  if (st != nullptr) cairn_status_free(st);
  return t;
}

// ---- Sources and transformations as one-liners (each frees nothing: handles are owned) ----

Dataset range(int64_t start, int64_t stop, int64_t step = 1) {
  cairn_dataset* out = nullptr;
  cairn_status* st = cairn_dataset_range(g_ctx, start, stop, step, &out);
  return take(st, out, "range");
}

// A transformation of `in` that may be missing (an earlier failure): the result is then missing too.
template <typename F>
Dataset then(const Dataset& in, const char* what, F f) {
  if (!in) return nullptr;
  cairn_dataset* out = nullptr;
  cairn_status* st = f(in.get(), &out);
  return take(st, out, what);
}

Dataset batch(const Dataset& in, int64_t n, bool drop = false) {
  return then(in, "batch", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_batch(d, n, drop, o); });
}
Dataset repeat(const Dataset& in, int64_t n) {
  return then(in, "repeat", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_repeat(d, n, o); });
}
Dataset take_n(const Dataset& in, int64_t n) {
  return then(in, "take", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_take(d, n, o); });
}
Dataset skip(const Dataset& in, int64_t n) {
  return then(in, "skip", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_skip(d, n, o); });
}
Dataset prefetch(const Dataset& in, int64_t n) {
  return then(in, "prefetch", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_prefetch(d, n, o); });
}
Dataset unbatch(const Dataset& in) {
  return then(in, "unbatch", [&](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_unbatch(d, o); });
}
Dataset rename(const Dataset& in, const char* from, const char* to) {
  return then(in, "select", [&](cairn_dataset* d, cairn_dataset** o) {
    return cairn_dataset_select(d, &from, &to, 1, o);
  });
}

using TensorSource = cairn_status* (*)(cairn_context*, const char* const*, cairn_tensor* const*, size_t,
                                       cairn_dataset**);

// A one-component source (from_tensors or from_tensor_slices) of `t`, which it frees.
Dataset source(TensorSource make, const char* what, const char* name, cairn_tensor* t) {
  if (t == nullptr) return nullptr;
  cairn_dataset* out = nullptr;
  cairn_status* st = make(g_ctx, &name, &t, 1, &out);
  cairn_tensor_free(t);
  return take(st, out, what);
}
Dataset slices(const char* name, cairn_tensor* t) {
  return source(cairn_dataset_from_tensor_slices, "from_tensor_slices", name, t);
}
Dataset from_tensors(const char* name, cairn_tensor* t) {
  return source(cairn_dataset_from_tensors, "from_tensors", name, t);
}

// ---- Functions (compiled: traced once per element spec) ----

// op2(op1(x, a), b) for an int64 scalar x and int64 constants a, b.
cairn_status* two_ops(cairn_context* ctx, cairn_tensor* x, const char* op1, int64_t a, const char* op2, int64_t b,
                      cairn_tensor** out) {
  cairn_tensor* ca = i64_scalar(ctx, a);
  cairn_tensor* cb = i64_scalar(ctx, b);
  cairn_tensor* mid = nullptr;
  cairn_tensor* in1[2] = {x, ca};
  cairn_status* st = cairn_op_run(ctx, op1, in1, 2, nullptr, 0, &mid, 1);
  if (st == nullptr) {
    cairn_tensor* in2[2] = {mid, cb};
    st = cairn_op_run(ctx, op2, in2, 2, nullptr, 0, out, 1);
  }
  cairn_tensor_free(mid);
  cairn_tensor_free(ca);
  cairn_tensor_free(cb);
  return st;
}

// x * 2 + 1.
cairn_status* times_two_plus_one(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out,
                                 size_t) {
  return two_ops(ctx, in[0], "Mul", 2, "AddV2", 1, out);
}

// x % m == 0; user_data points to m.
cairn_status* divisible(void* user_data, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out,
                        size_t) {
  return two_ops(ctx, in[0], "FloorMod", *static_cast<const int64_t*>(user_data), "Equal", 0, out);
}

// tf.fill([x], x) for an int64 scalar x: a host callback (compile = 0), the shape depends on the value.
cairn_status* fill_x(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  int64_t x = 0;
  cairn_status* st = cairn_tensor_read(in[0], &x, sizeof x);
  if (st != nullptr) return st;
  std::vector<int64_t> values(static_cast<size_t>(x), x);
  return cairn_tensor_create(ctx, CAIRN_INT64, &x, 1, values.data(), values.size() * sizeof(int64_t), out);
}

Dataset map(const Dataset& in, int32_t parallel = 0) {
  return then(in, "map", [&](cairn_dataset* d, cairn_dataset** o) {
    cairn_map_options opts = CAIRN_MAP_OPTIONS_INIT;
    opts.n_outputs = 1;
    opts.num_parallel_calls = parallel;
    return cairn_dataset_map(d, "times_two_plus_one", times_two_plus_one, nullptr, &opts, o);
  });
}

const int64_t kTwo = 2;
const int64_t kThree = 3;

Dataset filter(const Dataset& in, const int64_t* modulus) {
  return then(in, "filter", [&](cairn_dataset* d, cairn_dataset** o) {
    cairn_filter_options opts = CAIRN_FILTER_OPTIONS_INIT;
    return cairn_dataset_filter(d, "divisible", divisible, const_cast<int64_t*>(modulus), &opts, o);
  });
}

// range(1, 5).map(fill([x], x)): TensorFlow's documented padded_batch input.
Dataset padded_source() {
  return then(range(1, 5), "map", [&](cairn_dataset* d, cairn_dataset** o) {
    const int64_t any = -1;
    cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
    spec.dtype = CAIRN_INT64;
    spec.shape = &any;
    spec.rank = 1;
    cairn_map_options opts = CAIRN_MAP_OPTIONS_INIT;
    opts.compile = 0;
    opts.n_outputs = 1;
    opts.output_specs = &spec;
    return cairn_dataset_map(d, "fill", fill_x, nullptr, &opts, o);
  });
}

Dataset padded_batch(const Dataset& in, int64_t n, bool drop, const int64_t* fixed_dim, const int64_t* pad) {
  return then(in, "padded_batch", [&](cairn_dataset* d, cairn_dataset** o) {
    cairn_tensor_spec shape = CAIRN_TENSOR_SPEC_INIT;
    shape.dtype = CAIRN_INT64;
    shape.shape = fixed_dim;
    shape.rank = 1;
    cairn_tensor* value = pad != nullptr ? i64_scalar(g_ctx, *pad) : nullptr;
    cairn_status* st = cairn_dataset_padded_batch(d, n, drop, fixed_dim != nullptr ? &shape : nullptr,
                                                  pad != nullptr ? &value : nullptr, o);
    cairn_tensor_free(value);
    return st;
  });
}

// ---- Interleave ----

// Inner dataset of input x: range(10 * x, 10 * x + x).
cairn_status* inner_range(void*, cairn_context* ctx, cairn_tensor* const* element, size_t, cairn_dataset** out) {
  int64_t x = 0;
  cairn_status* st = cairn_tensor_read(element[0], &x, sizeof x);
  if (st != nullptr) return st;
  return cairn_dataset_range(ctx, 10 * x, 10 * x + x, 1, out);
}

// Inner dataset of input x: from_tensors(x).repeat(6) (TensorFlow's documented example).
cairn_status* inner_repeat(void*, cairn_context* ctx, cairn_tensor* const* element, size_t, cairn_dataset** out) {
  const char* name = "value";
  cairn_dataset* one = nullptr;
  cairn_status* st = cairn_dataset_from_tensors(ctx, &name, element, 1, &one);
  if (st != nullptr) return st;
  st = cairn_dataset_repeat(one, 6, out);
  cairn_dataset_free(one);
  return st;
}

Dataset interleave(cairn_dataset_fn fn, int32_t cycle, int32_t block, int32_t parallel = 0) {
  return then(range(1, 6), "interleave", [&](cairn_dataset* d, cairn_dataset** o) {
    const char* name = "value";
    cairn_tensor_spec spec = CAIRN_TENSOR_SPEC_INIT;
    spec.dtype = CAIRN_INT64;
    cairn_interleave_options opts = CAIRN_INTERLEAVE_OPTIONS_INIT;
    opts.cycle_length = cycle;
    opts.block_length = block;
    opts.num_parallel_calls = parallel;
    return cairn_dataset_interleave(d, fn, nullptr, &name, &spec, 1, &opts, o);
  });
}

// ---- The pipelines, by the names expected.json gives them ----

std::map<std::string, std::function<Dataset()>> pipelines() {
  std::map<std::string, std::function<Dataset()>> p;
  p["range"] = [] { return range(0, 5); };
  p["range_step"] = [] { return range(10, 0, -3); };
  p["slices_2d"] = [] {
    float v[12];
    for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
    return slices("x", tensor(CAIRN_FLOAT32, {4, 3}, v, sizeof v));
  };
  p["batch"] = [] { return batch(range(0, 10), 3); };
  p["batch_drop"] = [] { return batch(range(0, 10), 3, true); };
  p["batch_slices"] = [] {
    int32_t v[12];
    for (int i = 0; i < 12; ++i) v[i] = i;
    return batch(slices("x", tensor(CAIRN_INT32, {6, 2}, v, sizeof v)), 4);
  };
  p["padded_batch"] = [] { return padded_batch(padded_source(), 2, false, nullptr, nullptr); };
  p["padded_batch_shape"] = [] {
    static const int64_t five = 5, minus_one = -1;
    return padded_batch(padded_source(), 3, false, &five, &minus_one);
  };
  p["padded_batch_drop"] = [] { return padded_batch(padded_source(), 3, true, nullptr, nullptr); };
  p["unbatch"] = [] { return unbatch(batch(range(0, 10), 4)); };
  p["unbatch_2d"] = [] {
    int32_t v[6] = {0, 1, 2, 3, 4, 5};
    return unbatch(from_tensors("x", tensor(CAIRN_INT32, {2, 3}, v, sizeof v)));
  };
  p["repeat_take"] = [] { return take_n(repeat(range(0, 3), 3), 7); };
  p["repeat_2"] = [] { return repeat(range(0, 3), 2); };
  p["take_all"] = [] { return take_n(range(0, 4), -1); };
  p["skip"] = [] { return skip(range(0, 10), 7); };
  p["skip_past_end"] = [] { return skip(range(0, 3), 5); };
  p["shard"] = [] {
    return then(range(0, 10), "shard", [](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_shard(d, 3, 1, o); });
  };
  p["shard_0"] = [] {
    return then(range(0, 10), "shard", [](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_shard(d, 4, 0, o); });
  };
  auto zip2 = [](Dataset a, Dataset b) -> Dataset {
    if (!a || !b) return nullptr;
    cairn_dataset* ins[2] = {a.get(), b.get()};
    cairn_dataset* out = nullptr;
    cairn_status* st = cairn_dataset_zip(ins, 2, &out);
    return take(st, out, "zip");
  };
  p["zip"] = [zip2] { return zip2(rename(range(1, 4), "value", "a"), rename(range(4, 7), "value", "b")); };
  p["zip_shortest"] = [zip2] { return zip2(rename(range(0, 3), "value", "a"), rename(range(10, 15), "value", "b")); };
  p["concatenate"] = [] {
    Dataset a = range(1, 4), b = range(4, 8);
    if (!a || !b) return Dataset();
    cairn_dataset* out = nullptr;
    cairn_status* st = cairn_dataset_concatenate(a.get(), b.get(), &out);
    return take(st, out, "concatenate");
  };
  p["enumerate"] = [] {
    int64_t v[3] = {7, 8, 9};
    return then(slices("x", tensor(CAIRN_INT64, {3}, v, sizeof v)), "enumerate",
                [](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_enumerate(d, 5, o); });
  };
  p["filter_even"] = [] { return filter(range(0, 10), &kTwo); };
  p["map"] = [] { return map(range(0, 5)); };
  p["map_parallel"] = [] { return map(range(0, 20), 4); };
  p["map_filter_batch"] = [] { return batch(filter(map(range(0, 20)), &kThree), 2); };
  p["cache_repeat"] = [] {
    return repeat(then(map(range(0, 5)), "cache",
                       [](cairn_dataset* d, cairn_dataset** o) { return cairn_dataset_cache(d, nullptr, o); }),
                  2);
  };
  p["prefetch"] = [] { return prefetch(range(0, 10), 2); };
  p["batch_prefetch"] = [] { return prefetch(batch(range(0, 10), 4), 1); };
  p["interleave_doc"] = [] { return interleave(inner_repeat, 2, 4); };
  for (int cycle : {2, 3}) {
    for (int block : {1, 2}) {
      p["interleave_c" + std::to_string(cycle) + "_b" + std::to_string(block)] = [cycle, block] {
        return interleave(inner_range, cycle, block);
      };
    }
  }
  p["interleave_parallel"] = [] { return interleave(inner_range, 3, 2, 2); };
  return p;
}

// ---- Comparison ----

cairn_dtype dtype_of(const std::string& name) {
  if (name == "int64") return CAIRN_INT64;
  if (name == "int32") return CAIRN_INT32;
  if (name == "float32") return CAIRN_FLOAT32;
  if (name == "uint8") return CAIRN_UINT8;
  if (name == "bool") return CAIRN_BOOL;
  return CAIRN_INVALID_DTYPE;
}

// The tensor's values as doubles (exact for every value the golden cases hold).
std::vector<double> values_of(const cairn_tensor* t, const std::string& where) {
  std::vector<double> out;
  const size_t nbytes = cairn_tensor_nbytes(t);
  std::vector<unsigned char> raw(nbytes);
  if (!ok(cairn_tensor_read(t, raw.data(), nbytes), where + ": read")) return out;
  const auto n = static_cast<size_t>(cairn_tensor_num_elements(t));
  for (size_t i = 0; i < n; ++i) {
    switch (cairn_tensor_dtype(t)) {
      case CAIRN_INT64: { int64_t v; std::memcpy(&v, raw.data() + 8 * i, 8); out.push_back(static_cast<double>(v)); break; }
      case CAIRN_INT32: { int32_t v; std::memcpy(&v, raw.data() + 4 * i, 4); out.push_back(v); break; }
      case CAIRN_FLOAT32: { float v; std::memcpy(&v, raw.data() + 4 * i, 4); out.push_back(v); break; }
      case CAIRN_UINT8:
      case CAIRN_BOOL: out.push_back(raw[i]); break;
      default: fail(where, "unexpected dtype " + std::to_string(cairn_tensor_dtype(t))); return out;
    }
  }
  return out;
}

void compare_component(const cairn_tensor* t, const json& want, const std::string& where) {
  ++g_checks;
  const cairn_dtype dt = dtype_of(want["dtype"].get<std::string>());
  if (cairn_tensor_dtype(t) != dt) {
    fail(where, "dtype " + std::to_string(cairn_tensor_dtype(t)) + ", tf.data has " + want["dtype"].get<std::string>());
    return;
  }
  std::vector<int64_t> shape;
  for (size_t a = 0; a < cairn_tensor_rank(t); ++a) shape.push_back(cairn_tensor_dim(t, a));
  const auto want_shape = want["shape"].get<std::vector<int64_t>>();
  if (shape != want_shape) {
    fail(where, "shape " + json(shape).dump() + ", tf.data has " + json(want_shape).dump());
    return;
  }
  const auto got = values_of(t, where);
  const auto want_values = want["values"].get<std::vector<double>>();
  if (got != want_values) fail(where, "values " + json(got).dump() + ", tf.data has " + json(want_values).dump());
}

struct IterFree {
  void operator()(cairn_object* o) const { cairn_object_free(o); }
};
using Iterator = std::unique_ptr<cairn_object, IterFree>;

Iterator iterate(cairn_dataset* ds, const std::string& where) {
  cairn_object* it = nullptr;
  if (!ok(cairn_dataset_iterate(ds, &it), where + ": iterate")) return nullptr;
  return Iterator(it);
}

// Reads elements [from, end) of `want` from `it` and then expects the end of data twice.
void expect_rest(cairn_object* it, size_t n_components, const json& want, size_t from, const std::string& name) {
  std::vector<cairn_tensor*> out(n_components, nullptr);
  for (size_t e = from; e < want.size(); ++e) {
    const std::string where = name + " element " + std::to_string(e);
    if (!ok(cairn_iterator_next(it, out.data(), n_components), where)) return;
    if (want[e].size() != n_components) {
      fail(where, std::to_string(n_components) + " components, tf.data has " + std::to_string(want[e].size()));
    } else {
      for (size_t c = 0; c < n_components; ++c) compare_component(out[c], want[e][c], where + " component " + std::to_string(c));
    }
    for (auto*& t : out) {
      cairn_tensor_free(t);
      t = nullptr;
    }
  }
  for (int again = 0; again < 2; ++again) {
    ++g_checks;
    cairn_status* st = cairn_iterator_next(it, out.data(), n_components);
    if (st == nullptr) {
      fail(name, "an element past tf.data's " + std::to_string(want.size()));
      for (auto* t : out) cairn_tensor_free(t);
      return;
    }
    if (cairn_status_code(st) != CAIRN_OUT_OF_RANGE) {
      fail(name, std::string("at the end: error ") + cairn_status_message(st) + " instead of OUT_OF_RANGE");
    }
    cairn_status_free(st);
  }
}

void run_case(const json& c, const std::function<Dataset()>& build) {
  const std::string name = c["name"].get<std::string>();
  const json& want = c["elements"];
  Dataset ds = build();
  if (!ds) {
    fail(name, "could not build the pipeline (" + c["tf"].get<std::string>() + ")");
    return;
  }
  const size_t n = cairn_dataset_num_components(ds.get());

  // Cardinality: where both know a count, they agree; a count Cairn gives is always right.
  const int64_t tf_card = c["cardinality"].get<int64_t>();
  const int64_t card = cairn_dataset_cardinality(ds.get());
  ++g_checks;
  if (card >= 0 && card != static_cast<int64_t>(want.size())) {
    fail(name, "cardinality " + std::to_string(card) + ", tf.data gives " + std::to_string(want.size()) + " elements");
  } else if (tf_card >= 0 && card != tf_card && card != CAIRN_UNKNOWN_CARDINALITY) {
    fail(name, "cardinality " + std::to_string(card) + ", tf.data's " + std::to_string(tf_card));
  }

  // The whole pipeline in one go.
  if (Iterator it = iterate(ds.get(), name)) expect_rest(it.get(), n, want, 0, name);

  // Cut in the middle: save, restore into a fresh iterator, read the rest.
  const size_t cut = want.size() / 2;
  const std::string cut_name = name + " (restored at " + std::to_string(cut) + ")";
  Iterator first = iterate(ds.get(), cut_name);
  if (!first) return;
  std::vector<cairn_tensor*> out(n, nullptr);
  for (size_t e = 0; e < cut; ++e) {
    if (!ok(cairn_iterator_next(first.get(), out.data(), n), cut_name + " before the cut")) return;
    for (auto*& t : out) {
      cairn_tensor_free(t);
      t = nullptr;
    }
  }
  void* state = nullptr;
  size_t state_size = 0;
  if (!ok(cairn_iterator_save(first.get(), &state, &state_size), cut_name + ": save")) return;
  first.reset();
  Iterator second = iterate(ds.get(), cut_name);
  if (second && ok(cairn_iterator_restore(second.get(), state, state_size), cut_name + ": restore")) {
    ++g_checks;
    if (cairn_iterator_position(second.get()) != static_cast<int64_t>(cut)) {
      fail(cut_name, "position " + std::to_string(cairn_iterator_position(second.get())));
    }
    expect_rest(second.get(), n, want, cut, cut_name);
  }
  cairn_free(state);
}

std::string golden_path() {
  // Bazel runs tests in the runfiles tree of the main repository; the file is a data dependency.
  const char* env = std::getenv("CAIRN_DATA_GOLDEN");
  return env != nullptr ? env : "tests/golden/data/expected.json";
}

}  // namespace

int main() {
  std::ifstream f(golden_path());
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", golden_path().c_str());
    return 1;
  }
  const json doc = json::parse(f);
  if (!ok(cairn_context_create(nullptr, &g_ctx), "cairn_context_create")) return 1;

  auto known = pipelines();
  std::set<std::string> seen;
  for (const json& c : doc["cases"]) {
    const std::string name = c["name"].get<std::string>();
    seen.insert(name);
    auto p = known.find(name);
    if (p == known.end()) {
      fail(name, "a golden case this test cannot build: add its pipeline");
      continue;
    }
    const int before = g_failures;
    run_case(c, p->second);
    std::printf("%-20s %s  %s\n", name.c_str(), g_failures == before ? "ok  " : "FAIL", c["tf"].get<std::string>().c_str());
  }
  for (const auto& [name, build] : known) {
    if (seen.count(name) == 0) fail(name, "a pipeline with no golden case in " + golden_path());
  }
  cairn_context_free(g_ctx);
  std::printf("%zu cases, %d checks, %d failures\n", seen.size(), g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
