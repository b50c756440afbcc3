// The C API's compiled functions: a C callback traced into a graph per input signature and replayed.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "capi/internal/function_handle.h"
#include "capi/internal/options.h"

using namespace cairn;
using cairn::capi::concrete_at;
using cairn::capi::malloc_string;
using cairn::capi::new_tensor;
using cairn::capi::require;
using cairn::capi::run_callback;

namespace {

// How many outputs the cairn_function_call that started the current trace asked for (traces run
// on the calling thread, inside that call).
thread_local size_t t_requested_outputs = 0;

}  // namespace

namespace cairn::capi {

std::vector<Tensor> run_callback(cairn_function_fn fn, void* user_data, Context& ctx, const std::vector<Tensor>& inputs,
                                 size_t n_out, const std::string& name) {
  cairn_context handle{Ref<Context>::share(&ctx)};
  std::vector<std::unique_ptr<cairn_tensor>> in;
  std::vector<cairn_tensor*> in_ptrs;
  for (const Tensor& t : inputs) {
    in.emplace_back(new_tensor(t));
    in_ptrs.push_back(in.back().get());
  }
  std::vector<cairn_tensor*> outs(n_out, nullptr);
  cairn_status* st = fn(user_data, &handle, in_ptrs.data(), in_ptrs.size(), outs.data(), n_out);
  std::vector<std::unique_ptr<cairn_tensor>> owned;
  for (cairn_tensor* t : outs) owned.emplace_back(t);
  if (st) raise_user_status(st, fmt::format("function '{}': ", name));
  std::vector<Tensor> results;
  for (size_t i = 0; i < n_out; ++i) {
    if (!owned[i]) raise(Code::InvalidArgument, "function '{}': the callback left output {} of {} unset", name, i, n_out);
    results.push_back(owned[i]->t);
  }
  return results;
}

std::shared_ptr<const graph::ConcreteFunction> concrete_of(cairn_function* fn, const std::vector<Tensor>& inputs,
                                                         size_t n_outputs) {
  const size_t saved = t_requested_outputs;  // as cairn_function_call: the trace asks for n_outputs
  t_requested_outputs = n_outputs;
  try {
    auto concrete = fn->fn->concrete(inputs);
    t_requested_outputs = saved;
    return concrete;
  } catch (...) {
    t_requested_outputs = saved;
    throw;
  }
}

}  // namespace cairn::capi

namespace {

graph::FunctionOptions function_options(const cairn_function_options* user_opts, const char* fn, const char* name) {
  const cairn_function_options opts = cairn::capi::read_options(user_opts, fn);
  graph::FunctionOptions o;
  if (opts.n_static_inputs) {
    require(opts.static_inputs, fn, "static_inputs");
    for (size_t i = 0; i < opts.n_static_inputs; ++i) {
      if (opts.static_inputs[i] < 0 || opts.static_inputs[i] > INT32_MAX)
        raise(Code::InvalidArgument, "{}: static_inputs[{}] is {}, not an input index", fn, i, opts.static_inputs[i]);
      o.static_inputs.push_back(static_cast<int>(opts.static_inputs[i]));
    }
  }
  o.retrace_warning = opts.retrace_warning;
  if (opts.input_signature || opts.n_input_signature) {
    require(opts.input_signature, fn, "input_signature");
    o.has_input_signature = true;
    for (size_t i = 0; i < opts.n_input_signature; ++i) {
      const cairn_tensor_spec spec = cairn::capi::read_array_element(opts.input_signature, i, fn);
      // Every call would fail on a dtype that is none: refuse the signature now.
      const DType dtype = static_cast<DType>(cairn::capi::enum_bits(spec.dtype));
      if (!dtype_is_valid(dtype))
        raise(Code::InvalidArgument, "{}: function '{}': input_signature[{}] has dtype {}, which is not a dtype", fn,
              name, i, static_cast<int>(dtype));
      if (spec.rank > static_cast<size_t>(kMaxRank))
        raise(Code::InvalidArgument, "{}: function '{}': input_signature[{}] has rank {} (at most {})", fn, name, i,
              spec.rank, kMaxRank);
      if (spec.rank) require(spec.shape, fn, "input_signature shape");
      Shape shape;
      for (size_t d = 0; d < spec.rank; ++d) {
        if (spec.shape[d] < -1)
          raise(Code::InvalidArgument, "{}: function '{}': input_signature[{}] dim {} is {} (expected >= 0, or -1 for any)",
                fn, name, i, d, spec.shape[d]);
        shape.push_back(spec.shape[d]);
      }
      o.input_signature.push_back({dtype, shape});
    }
  }
  return o;
}

}  // namespace

namespace cairn::capi {

const graph::ConcreteFunction& concrete_at(const cairn_function* fn, size_t index, const char* what) {
  require(fn, what, "fn");
  auto all = fn->fn->concretes();
  if (index >= all.size())
    raise(Code::OutOfRange, "{}: trace {} of function '{}', which has {} trace(s)", what, index, fn->fn->name(), all.size());
  return *all[index];
}

}  // namespace cairn::capi

cairn_status* cairn_function_create(cairn_context* ctx, const char* name, cairn_function_fn fn, void* user_data,
                                    const cairn_function_options* opts, cairn_function** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_create";
  require(out, what, "out");
  *out = nullptr;
  require(ctx, what, "ctx");
  require(name, what, "name");
  require(fn, what, "fn");
  graph::FunctionOptions o = function_options(opts, what, name);
  std::string fname = name;
  auto host = [fn, user_data, fname](Context& c, const std::vector<Tensor>& inputs) {
    return run_callback(fn, user_data, c, inputs, t_requested_outputs, fname);
  };
  auto handle = std::make_unique<cairn_function>();
  handle->fn = make_ref<graph::Function>(*ctx->ctx, fname, host, o);
  handle->user_data = user_data;
  handle->release = opts ? opts->release : nullptr;
  *out = handle.release();
  CAIRN_API_END
}

cairn_status* cairn_function_call(cairn_function* fn, cairn_tensor* const* inputs, size_t n_inputs,
                                  cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_call";
  require(fn, what, "fn");
  if (n_inputs) require(inputs, what, "inputs");
  if (n_outputs) require(outputs, what, "outputs");
  std::vector<Tensor> ins;
  for (size_t i = 0; i < n_inputs; ++i) ins.push_back(require(inputs[i], what, "an input")->t);
  size_t saved = t_requested_outputs;  // a function called while another traces (nested)
  t_requested_outputs = n_outputs;
  std::vector<Tensor> results;
  try {
    results = fn->fn->call(ins);
  } catch (...) {
    t_requested_outputs = saved;
    throw;
  }
  t_requested_outputs = saved;
  if (results.size() != n_outputs)
    raise(Code::InvalidArgument, "{}: function '{}' returns {} output(s), not {}", what, fn->fn->name(), results.size(),
          n_outputs);
  std::vector<std::unique_ptr<cairn_tensor>> handles;
  for (Tensor& t : results) handles.emplace_back(new_tensor(std::move(t)));
  for (size_t i = 0; i < n_outputs; ++i) outputs[i] = handles[i].release();
  CAIRN_API_END_NAMED_BY_MESSAGE
}

size_t cairn_function_num_traces(const cairn_function* fn) { return fn ? fn->fn->num_traces() : 0; }

cairn_status* cairn_function_dump(const cairn_function* fn, size_t index, char** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_dump";
  require(out, what, "out");
  *out = nullptr;
  *out = malloc_string(concrete_at(fn, index, what).graph().dump(), what);
  CAIRN_API_END
}

cairn_status* cairn_function_signature(const cairn_function* fn, size_t index, char** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_signature";
  require(out, what, "out");
  *out = nullptr;
  *out = malloc_string(graph::signature_text(concrete_at(fn, index, what).signature()), what);
  CAIRN_API_END
}

cairn_status* cairn_function_num_outputs(const cairn_function* fn, size_t index, size_t* out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_num_outputs";
  require(out, what, "out");
  *out = concrete_at(fn, index, what).num_outputs();
  CAIRN_API_END
}

void cairn_function_free(cairn_function* fn) { delete fn; }
