// The C API's export and load of compiled functions, and their GraphDef text dump.
#include <memory>

#include "capi/internal/function_handle.h"
#include "runtime/graph/export.h"
#include "runtime/graph/graphdef.h"

using namespace cairn;
using cairn::capi::concrete_at;
using cairn::capi::malloc_string;
using cairn::capi::new_tensor;
using cairn::capi::require;

namespace {

using LoadedRef = std::shared_ptr<graph::LoadedConcretes>;

// The "callback" of a loaded function: the stored graph whose signature fits, run on the symbolic
// inputs so that the trace records it. No host code.
cairn_status* run_loaded(void* user_data, cairn_context* ctx, cairn_tensor* const* inputs, size_t n_inputs,
                         cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  const LoadedRef& loaded = *static_cast<LoadedRef*>(user_data);
  std::vector<Tensor> ins;
  for (size_t i = 0; i < n_inputs; ++i) ins.push_back(inputs[i]->t);
  const graph::ConcreteFunction& concrete = loaded->match(ins);
  if (concrete.num_outputs() != n_outputs)
    raise(Code::InvalidArgument, "loaded function '{}' returns {} output(s), not {}", loaded->name(),
          concrete.num_outputs(), n_outputs);
  std::vector<Tensor> results = concrete.run(*ctx->ctx, ins);
  for (size_t i = 0; i < n_outputs; ++i) outputs[i] = new_tensor(std::move(results[i]));
  CAIRN_API_END_NAMED_BY_MESSAGE
}

void release_loaded(void* user_data) { delete static_cast<LoadedRef*>(user_data); }

}  // namespace

cairn_status* cairn_function_export(const cairn_function* fn, const char* path) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_export";
  require(fn, what, "fn");
  require(path, what, "path");
  graph::export_function(*fn->fn, path);
  CAIRN_API_END
}

cairn_status* cairn_function_load(cairn_context* ctx, const char* path, cairn_function** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_load";
  require(out, what, "out");
  *out = nullptr;
  require(ctx, what, "ctx");
  require(path, what, "path");
  auto loaded = std::make_unique<LoadedRef>(graph::load_concretes(*ctx->ctx, path));
  cairn_function_options opts = CAIRN_FUNCTION_OPTIONS_INIT;
  // Re-traces replay the stored graph (one per input shape for -1 dims): nothing to warn about.
  opts.retrace_warning = 0;
  opts.release = release_loaded;
  std::string name = (*loaded)->name();
  cairn_status* st = cairn_function_create(ctx, name.c_str(), run_loaded, loaded.get(), &opts, out);
  if (st) return st;  // not created: `loaded` is still ours and freed here
  loaded.release();   // the function releases it
  CAIRN_API_END
}

cairn_status* cairn_function_graphdef(const cairn_function* fn, size_t index, char** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_function_graphdef";
  require(out, what, "out");
  *out = nullptr;
  *out = malloc_string(graph::graphdef_text(concrete_at(fn, index, what).graph()), what);
  CAIRN_API_END
}
