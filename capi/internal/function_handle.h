// The struct behind cairn_function, shared by the files that implement the compiled-function API
// (capi/function.cc: create and call; capi/function_io.cc: export, load, GraphDef;
// capi/control_flow.cc: cond, while_loop and TensorArray callbacks).
#pragma once

#include "capi/internal/handles.h"
#include "runtime/graph/function.h"

struct cairn_function {
  cairn::Ref<cairn::graph::Function> fn;
  void* user_data = nullptr;
  void (*release)(void*) = nullptr;
  ~cairn_function() {
    fn = nullptr;  // the host callback is never called again
    if (release) release(user_data);
  }
};

namespace cairn::capi {

// Trace `index` of `fn`; OutOfRange naming `what` when there is no such trace.
const graph::ConcreteFunction& concrete_at(const cairn_function* fn, size_t index, const char* what);

// Runs a C callback (a function body or a control-flow branch) on `inputs` and takes the
// `n_out` outputs it set; its error status is raised with `name` in front.
std::vector<Tensor> run_callback(cairn_function_fn fn, void* user_data, Context& ctx, const std::vector<Tensor>& inputs,
                                 size_t n_out, const std::string& name);

// The trace of `fn` for `inputs` (tracing it now if needed) when the caller wants `n_outputs`
// results, as cairn_function_call would make it, without running it.
std::shared_ptr<const graph::ConcreteFunction> concrete_of(cairn_function* fn, const std::vector<Tensor>& inputs,
                                                         size_t n_outputs);

}  // namespace cairn::capi
