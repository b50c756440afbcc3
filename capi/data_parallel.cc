// The C API of map, filter, interleave, prefetch, prefetch_to_device and cache
// (runtime/data/parallel.h). A map or filter function with compile = 1 is traced once, when the
// pipeline is built, on symbolic tensors of the input's element spec (dims of -1 stay unknown);
// each element replays that graph on the worker thread that computes it. With compile = 0 the C
// callback runs for every element.
#include <memory>
#include <string>
#include <vector>

#include "capi/internal/data_handles.h"
#include "capi/internal/function_handle.h"
#include "capi/internal/options.h"
#include "runtime/data/parallel.h"
#include "runtime/graph/passes.h"

using namespace cairn;
using cairn::capi::require;

namespace {

// A C callback's user_data and its release: shared by every dataset built with it (and the
// iterators running them), so release runs once, when the last of them goes.
struct HostCallback {
  void* user_data = nullptr;
  void (*release)(void*) = nullptr;
  HostCallback() = default;
  HostCallback(const HostCallback&) = delete;
  HostCallback& operator=(const HostCallback&) = delete;
  ~HostCallback() {
    if (release) release(user_data);
  }
};

// A host function that is either a traced graph (compile = 1) or the C callback itself.
struct ElementFunction {
  std::string name;  // names the function in its own errors: "function 'f': ..."
  cairn_function_fn fn = nullptr;
  std::shared_ptr<HostCallback> host;
  std::shared_ptr<const graph::ConcreteFunction> traced;  // null: call fn eagerly
  size_t n_out = 0;
  Ref<Context> ctx;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const {
    if (traced) return traced->run(*ctx, inputs, /*observed=*/false);
    return capi::run_callback(fn, host->user_data, *ctx, inputs, n_out, name);
  }
};

// Traces `f` on symbolic inputs of `in`: the outputs' symbolic tensors (their dtypes and shapes
// are the function's output specs) and the compiled graph.
std::vector<TensorSpec> trace(ElementFunction& f, const data::ElementSpec& in) {
  std::vector<TensorSpec> signature;
  for (const data::ComponentSpec& c : in.components) {
    Shape shape;
    for (int64_t d : c.dims) shape.push_back(d);
    signature.push_back({c.dtype, shape});
  }
  graph::Graph g = graph::trace_host_function(
      *f.ctx, f.name,
      [&f](Context& ctx, const std::vector<Tensor>& symbolic) {
        return capi::run_callback(f.fn, f.host->user_data, ctx, symbolic, f.n_out, f.name);
      },
      signature);
  std::vector<TensorSpec> outputs;
  for (graph::Port p : g.outputs) outputs.push_back(g.spec(p));
  graph::PassOptions passes;
  graph::optimize(*f.ctx, g, passes);
  f.traced = std::make_shared<graph::ConcreteFunction>(f.name, signature, std::move(g), passes.fuse_elementwise);
  return outputs;
}

data::ElementSpec spec_from(const std::vector<std::string>& names, const std::vector<TensorSpec>& specs) {
  data::ElementSpec out;
  for (size_t i = 0; i < specs.size(); ++i) {
    data::ComponentSpec c;
    c.name = names[i];
    c.dtype = specs[i].dtype;
    for (int d = 0; d < specs[i].shape.rank(); ++d) c.dims.push_back(specs[i].shape.dim(d));
    out.components.push_back(std::move(c));
  }
  return out;
}

const data::DatasetPtr& input_of(const cairn_dataset* in, const char* what) { return capi::require_dataset(in, what, "in"); }

void set_output(cairn_dataset** out, data::DatasetPtr ds) { *out = capi::new_dataset(std::move(ds)); }

}  // namespace

extern "C" {

cairn_status* cairn_dataset_map(const cairn_dataset* in, const char* name, cairn_function_fn fn, void* user_data,
                                const cairn_map_options* user_opts, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_map";
  require(out, what, "out");
  *out = nullptr;
  const data::DatasetPtr& input = input_of(in, what);
  require(fn, what, "fn");
  const cairn_map_options opts = capi::read_options(user_opts, what);
  data::MapOptions o;
  o.name = name ? name : "map";
  o.num_parallel_calls = opts.num_parallel_calls;
  o.deterministic = opts.deterministic != 0;
  o.seed = opts.seed;
  const std::string who = "map '" + o.name + "'";
  if (opts.n_outputs == 0) raise(Code::InvalidArgument, "{}: {}: n_outputs is 0", what, who);
  if (!opts.compile && !opts.output_specs)
    raise(Code::InvalidArgument, "{}: {}: output_specs are required with compile = 0", what, who);
  const std::vector<std::string> names = capi::component_names(opts.output_names, opts.n_outputs, what);
  auto host = std::make_shared<HostCallback>();
  host->user_data = user_data;
  ElementFunction f{o.name, fn, host, nullptr, opts.n_outputs, Ref<Context>::share(&input->context())};
  data::ElementSpec out_spec;
  if (opts.output_specs) out_spec = capi::element_spec(opts.output_names, opts.output_specs, opts.n_outputs, what);
  if (opts.compile) {
    data::ElementSpec traced = spec_from(names, trace(f, input->spec()));
    if (opts.output_specs) {
      // The declared specs must hold for what the trace found (-1 declared: any size).
      for (size_t i = 0; i < traced.size(); ++i) {
        const data::ComponentSpec& d = out_spec.components[i];
        const data::ComponentSpec& t = traced.components[i];
        bool ok = d.dtype == t.dtype && d.dims.size() == t.dims.size();
        for (size_t k = 0; ok && k < d.dims.size(); ++k) ok = d.dims[k] < 0 || d.dims[k] == t.dims[k];
        if (!ok)
          raise(Code::InvalidArgument, "{}: {}: output {} ('{}') traces as {}, declared {}", what, who, i, d.name,
                traced.text(), out_spec.text());
      }
    } else {
      out_spec = std::move(traced);
    }
  }
  data::ElementFn element_fn = [f](const data::Element& x) { return f(x); };
  data::DatasetPtr ds = data::map(input, std::move(out_spec), std::move(element_fn), o);
  host->release = opts.release;  // from here on the datasets own user_data
  set_output(out, std::move(ds));
  CAIRN_API_END
}

cairn_status* cairn_dataset_filter(const cairn_dataset* in, const char* name, cairn_function_fn fn, void* user_data,
                                   const cairn_filter_options* user_opts, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_filter";
  require(out, what, "out");
  *out = nullptr;
  const data::DatasetPtr& input = input_of(in, what);
  require(fn, what, "fn");
  const cairn_filter_options opts = capi::read_options(user_opts, what);
  const std::string fname = name ? name : "filter";
  const std::string who = "filter '" + fname + "'";
  auto host = std::make_shared<HostCallback>();
  host->user_data = user_data;
  ElementFunction f{fname, fn, host, nullptr, 1, Ref<Context>::share(&input->context())};
  auto check = [who](DType dtype, const Shape& shape) {
    if (dtype != DType::Bool || shape.rank() != 0)
      raise(Code::InvalidArgument, "{}: the function returns {}{}, expected a bool scalar", who, dtype_name(dtype),
            shape.str());
  };
  if (opts.compile) {
    const TensorSpec result = trace(f, input->spec())[0];
    try {
      check(result.dtype, result.shape);
    } catch (const Error& e) {
      raise(e.code(), "{}: {}", what, e.message());
    }
  }
  auto pred = [f, check](const data::Element& x) {
    const std::vector<Tensor> r = f(x);
    check(r[0].dtype(), r[0].shape());
    const Tensor host_value = host_values(r[0], f.ctx->cpu(), f.name);
    return *static_cast<const uint8_t*>(host_value.raw_data()) != 0;
  };
  data::DatasetPtr ds = data::filter(input, std::move(pred), fname, opts.seed);
  host->release = opts.release;
  set_output(out, std::move(ds));
  CAIRN_API_END
}

cairn_status* cairn_dataset_interleave(const cairn_dataset* in, cairn_dataset_fn fn, void* user_data,
                                       const char* const* names, const cairn_tensor_spec* specs, size_t n,
                                       const cairn_interleave_options* user_opts, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_interleave";
  require(out, what, "out");
  *out = nullptr;
  const data::DatasetPtr& input = input_of(in, what);
  require(fn, what, "fn");
  require(specs, what, "specs");
  if (n == 0) raise(Code::InvalidArgument, "{}: n is 0 (the inner datasets' spec needs a component)", what);
  const cairn_interleave_options opts = capi::read_options(user_opts, what);
  data::ElementSpec spec = capi::element_spec(names, specs, n, what);
  data::InterleaveOptions o;
  o.cycle_length = opts.cycle_length;
  o.block_length = opts.block_length;
  o.num_parallel_calls = opts.num_parallel_calls;
  o.deterministic = opts.deterministic != 0;
  auto host = std::make_shared<HostCallback>();
  host->user_data = user_data;
  Ref<Context> ctx = Ref<Context>::share(&input->context());
  auto make = [fn, host, ctx](const data::Element& x) -> data::DatasetPtr {
    cairn_context handle{ctx};
    std::vector<std::unique_ptr<cairn_tensor>> owned;
    std::vector<cairn_tensor*> ptrs;
    for (const Tensor& t : x) {
      owned.emplace_back(capi::new_tensor(t));
      ptrs.push_back(owned.back().get());
    }
    cairn_dataset* made = nullptr;
    if (cairn_status* st = fn(host->user_data, &handle, ptrs.data(), ptrs.size(), &made)) {
      std::unique_ptr<cairn_dataset> drop(made);
      capi::raise_user_status(st, "the function failed: ");
    }
    if (!made) raise(Code::InvalidArgument, "the function returned NULL without an error");
    std::unique_ptr<cairn_dataset> taken(made);  // the interleave takes the handle
    return taken->ds;
  };
  data::DatasetPtr ds = data::interleave(input, std::move(spec), std::move(make), o);
  host->release = opts.release;
  set_output(out, std::move(ds));
  CAIRN_API_END
}

cairn_status* cairn_dataset_prefetch(const cairn_dataset* in, int64_t buffer_size, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_prefetch";
  require(out, what, "out");
  *out = nullptr;
  set_output(out, data::prefetch(input_of(in, what), buffer_size));
  CAIRN_API_END
}

cairn_status* cairn_dataset_prefetch_to_device(const cairn_dataset* in, const char* device, int64_t buffer_size,
                                               cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_prefetch_to_device";
  require(out, what, "out");
  *out = nullptr;
  const data::DatasetPtr& input = input_of(in, what);
  require(device, what, "device");
  set_output(out, data::prefetch_to_device(input, device, buffer_size));
  CAIRN_API_END
}

cairn_status* cairn_dataset_cache(const cairn_dataset* in, const char* filename, cairn_dataset** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_dataset_cache";
  require(out, what, "out");
  *out = nullptr;
  set_output(out, data::cache(input_of(in, what), filename ? filename : ""));
  CAIRN_API_END
}

}  // extern "C"
