// tf.GradientTape: records the eager ops that touch watched tensors and variables, then computes
// gradients by running each recorded op's gradient function in reverse order.
//
// A tape records the ops of the thread that created it, through the context's dispatch hooks, and
// watches trainable variables as they are read (Variable::read) unless told not to. Gradient
// computation runs registered ops, so an enclosing tape records it: nest tapes for higher-order
// gradients. Tensors are identified by their buffers, which every op output has to itself; the
// tape keeps what it recorded alive until it is destroyed (or, for a non-persistent tape, until its
// one gradient call).
//
// Besides ops, a tape records custom-gradient entries (tf.custom_gradient): a caller that computed
// outputs from inputs by its own means (a replayed function, see runtime/graph/function_grad.h)
// records them as one entry with a backward function of its own.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/core/refcount.h"
#include "runtime/eager/context.h"
#include "runtime/ops/attr_store.h"
#include "runtime/tensor/tensor.h"

namespace cairn {

class Variable;

struct TapeOptions {
  bool persistent = false;                 // allow several gradient calls
  bool watch_accessed_variables = true;    // watch trainable variables when they are read
};

// What gradient() returns for a source the target does not depend on.
enum class Unconnected { None, Zero };

// The gradient of a custom entry: given the entry's inputs, its outputs, dL/d(each output) (an
// invalid tensor for an output nothing downstream used, unlike an op's gradient, which gets zeros)
// and which inputs the tape wants, it returns dL/d(each input), one per input, an invalid tensor
// for none. It runs with the recording tape paused, so
// like an op's gradient it must be built from registered ops: an enclosing tape then records it
// (higher-order gradients). Shared, so many entries (tapes, steps) hold one.
struct CustomGradient {
  using Backward = std::function<std::vector<Tensor>(Context& ctx, const std::vector<Tensor>& inputs,
                                                     const std::vector<Tensor>& outputs,
                                                     const std::vector<Tensor>& output_grads,
                                                     const std::vector<bool>& needs)>;
  std::string name;  // names the entry in errors: "function 'f'"
  Backward backward;
};

class GradientTape final : public DispatchHook {
 public:
  explicit GradientTape(Context& ctx, TapeOptions options = {});
  ~GradientTape() override;
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Watches a tensor (floating dtypes only: InvalidArgument otherwise) or a variable.
  void watch(const Tensor& t);
  void watch(const Variable& v);
  // The variables watched so far, in the order they were first watched.
  std::vector<Ref<Variable>> watched_variables() const;

  // Pauses and resumes recording (tf.GradientTape.stop_recording).
  void stop_recording() { recording_.store(false, std::memory_order_relaxed); }
  void resume_recording() { recording_.store(true, std::memory_order_relaxed); }
  bool recording() const { return recording_.load(std::memory_order_relaxed); }
  // Forgets everything recorded (tf.GradientTape.reset).
  void reset();

  // d(sum of target * output_gradient)/d(source) for each source; output_gradient defaults to ones
  // (so a non-scalar target is summed, as in TF). A source the target does not reach gives an
  // invalid tensor, or zeros with Unconnected::Zero. A non-persistent tape allows one call.
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Tensor>& sources,
                               const Tensor* output_gradient = nullptr, Unconnected unconnected = Unconnected::None);
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<const Variable*>& sources,
                               const Tensor* output_gradient = nullptr, Unconnected unconnected = Unconnected::None);
  // The same for variables held by reference (a model's trainable_weights()).
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<Ref<Variable>>& sources,
                               const Tensor* output_gradient = nullptr, Unconnected unconnected = Unconnected::None);
  // Several targets at once: d(sum_k <target_k, output_gradient_k>)/d(source). `output_gradients`
  // is empty (ones for every target) or has one tensor per target.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, const std::vector<Tensor>& sources,
                               const std::vector<Tensor>& output_gradients = {},
                               Unconnected unconnected = Unconnected::None);

  // Records `outputs` as computed from `inputs`, differentiated by `gradient` (tf.custom_gradient).
  // Like an op it is recorded only while this tape records on the calling thread and when one of
  // the inputs depends on something watched; returns whether it was. The differentiable outputs
  // are tracked from then on. An empty tensor among `outputs` stands for a result that is not the
  // entry's own (the caller returned an input or another existing tensor there): gradients reach
  // that tensor directly, never through the entry.
  bool record(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
              std::shared_ptr<const CustomGradient> gradient);
  // Whether this tape records the calling thread's ops now (created here and not paused).
  bool records_on_this_thread() const { return records_here(); }
  // Whether `t` depends on something this tape watches.
  bool tracks(const Tensor& t) const { return tracked(t); }

  // DispatchHook
  void after(Context& ctx, const OpCall& call) override;
  void variable_read(Context& ctx, const Variable& v, const Tensor& value) override;
  bool differentiates(const Tensor& t) const override { return records_here() && tracked(t); }

  size_t num_recorded() const { return entries_.size(); }

 private:
  // An op call (attrs set) or a custom-gradient entry (custom set).
  struct Entry {
    std::optional<AttrStore> attrs;
    std::shared_ptr<const CustomGradient> custom;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
  };
  struct WatchedVariable {
    Ref<Variable> variable;
    std::vector<Tensor> reads;  // distinct values read while watched
  };

  // Other threads' ops reach after() too: check the thread first, and keep the flag atomic.
  bool records_here() const {
    return std::this_thread::get_id() == thread_ && recording_.load(std::memory_order_relaxed);
  }
  void track(const Tensor& t) { tracked_.insert(t.buffer()); }
  bool tracked(const Tensor& t) const { return t.valid() && tracked_.count(t.buffer()) != 0; }
  WatchedVariable& watch_variable(const Variable& v);
  void check_usable(const char* fn) const;
  // `output_gradients`: null for ones, else one per target.
  std::vector<Tensor> backprop(const std::vector<Tensor>& targets, const std::vector<std::vector<Tensor>>& sources,
                               const std::vector<Tensor>* output_gradients, Unconnected unconnected);
  std::vector<Tensor> entry_gradient(const Entry& e, const std::vector<Tensor>& out_grads,
                                     const std::vector<bool>& needs);

  Ref<Context> ctx_;
  TapeOptions options_;
  std::thread::id thread_;
  std::atomic<bool> recording_{true};
  bool used_ = false;  // a non-persistent tape has computed its gradient
  std::unordered_set<const Buffer*> tracked_;  // tensors that depend on something watched
  std::vector<Tensor> watched_tensors_;        // kept alive so their buffers stay unique
  std::vector<Entry> entries_;                 // in execution order
  std::vector<WatchedVariable> variables_;
  std::unordered_map<const Variable*, size_t> variable_index_;
};

}  // namespace cairn
