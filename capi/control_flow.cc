// The C API's control flow: cond and while_loop over C callbacks, and the TensorArray helpers.
// Callbacks run through the same adapter as compiled-function bodies (capi::run_callback), so an
// error status a callback returns comes back from cairn_cond / cairn_while_loop (or from the
// cairn_function_call whose trace ran them).
#include <memory>

#include "capi/internal/function_handle.h"
#include "runtime/graph/control_flow.h"

using namespace cairn;
using cairn::capi::new_tensor;
using cairn::capi::require;
using cairn::capi::run_callback;

namespace {

std::vector<Tensor> tensors_of(cairn_tensor* const* ts, size_t n, const char* fn, const char* what) {
  if (n) require(ts, fn, what);
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) out.push_back(require(ts[i], fn, what)->t);
  return out;
}

// Hands `results` to the caller's slots, all or none.
void give(std::vector<Tensor>& results, cairn_tensor** outputs, size_t n, const char* fn) {
  if (results.size() != n) raise(Code::Internal, "{}: {} results for {} output slots", fn, results.size(), n);
  std::vector<std::unique_ptr<cairn_tensor>> handles;
  for (Tensor& t : results) handles.emplace_back(new_tensor(std::move(t)));
  for (size_t i = 0; i < n; ++i) outputs[i] = handles[i].release();
}

graph::BranchFn branch(cairn_function_fn fn, void* user_data, size_t n_out, const char* name) {
  std::string label = name;
  return [fn, user_data, n_out, label](Context& c, const std::vector<Tensor>& inputs) {
    return run_callback(fn, user_data, c, inputs, n_out, label);
  };
}

}  // namespace

cairn_status* cairn_cond(cairn_context* ctx, const cairn_tensor* pred, cairn_tensor* const* operands,
                         size_t n_operands, cairn_function_fn then_branch, cairn_function_fn else_branch,
                         void* user_data, cairn_tensor** outputs, size_t n_outputs) {
  CAIRN_API_BEGIN
  const char* what = "cairn_cond";
  require(ctx, what, "ctx");
  require(pred, what, "pred");
  require(then_branch, what, "then_branch");
  require(else_branch, what, "else_branch");
  if (n_outputs) require(outputs, what, "outputs");
  std::vector<Tensor> ops = tensors_of(operands, n_operands, what, "an operand");
  std::vector<Tensor> results =
      graph::cond(*ctx->ctx, pred->t, ops, branch(then_branch, user_data, n_outputs, "cond's then branch"),
                  branch(else_branch, user_data, n_outputs, "cond's else branch"));
  give(results, outputs, n_outputs, what);
  CAIRN_API_END_NAMED_BY_MESSAGE
}

cairn_status* cairn_while_loop(cairn_context* ctx, cairn_function_fn cond, cairn_function_fn body, void* user_data,
                               cairn_tensor* const* loop_vars, size_t n_loop_vars, int64_t max_iterations,
                               cairn_tensor** outputs) {
  CAIRN_API_BEGIN
  const char* what = "cairn_while_loop";
  require(ctx, what, "ctx");
  require(cond, what, "cond");
  require(body, what, "body");
  if (n_loop_vars) require(outputs, what, "outputs");
  std::vector<Tensor> vars = tensors_of(loop_vars, n_loop_vars, what, "a loop variable");
  graph::WhileOptions options;
  options.max_iterations = max_iterations;
  std::vector<Tensor> results =
      graph::while_loop(*ctx->ctx, branch(cond, user_data, 1, "while_loop's cond"),
                        branch(body, user_data, n_loop_vars, "while_loop's body"), vars, options);
  give(results, outputs, n_loop_vars, what);
  CAIRN_API_END_NAMED_BY_MESSAGE
}

cairn_status* cairn_tensor_array_create(cairn_context* ctx, cairn_dtype dtype, int64_t size,
                                        const int64_t* element_shape, size_t rank, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_tensor_array_create";
  require(out, what, "out");
  *out = nullptr;
  require(ctx, what, "ctx");
  DType t = static_cast<DType>(dtype);
  if (!dtype_is_valid(t) || t == DType::String)
    raise(Code::InvalidArgument, "{}: dtype {} cannot hold an array", what, static_cast<int>(dtype));
  Shape shape = Shape::from(element_shape, rank, what);
  *out = new_tensor(graph::tensor_array(*ctx->ctx, t, size, shape));
  CAIRN_API_END
}

cairn_status* cairn_tensor_array_write(cairn_context* ctx, const cairn_tensor* array, const cairn_tensor* index,
                                       const cairn_tensor* value, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_tensor_array_write";
  require(out, what, "out");
  *out = nullptr;
  require(ctx, what, "ctx");
  *out = new_tensor(graph::tensor_array_write(*ctx->ctx, require(array, what, "array")->t,
                                              require(index, what, "index")->t, require(value, what, "value")->t));
  CAIRN_API_END
}

cairn_status* cairn_tensor_array_read(cairn_context* ctx, const cairn_tensor* array, const cairn_tensor* index,
                                      cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* what = "cairn_tensor_array_read";
  require(out, what, "out");
  *out = nullptr;
  require(ctx, what, "ctx");
  *out = new_tensor(
      graph::tensor_array_read(*ctx->ctx, require(array, what, "array")->t, require(index, what, "index")->t));
  CAIRN_API_END
}
