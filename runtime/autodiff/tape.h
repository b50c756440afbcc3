// tf.GradientTape: records the eager ops that touch watched tensors and variables, then computes
// gradients by running each recorded op's gradient function in reverse order.
//
// A tape records the ops of the thread that created it, through the context's dispatch hooks, and
// watches trainable variables as they are read (Variable::read) unless told not to. Gradient
// computation runs registered ops, so an enclosing tape records it: nest tapes for higher-order
// gradients. Tensors are identified by their buffers, which every op output has to itself; the
// tape keeps what it recorded alive until it is destroyed (or, for a non-persistent tape, until its
// one gradient call).
#pragma once

#include <atomic>
#include <memory>
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

  // DispatchHook
  void after(Context& ctx, const OpCall& call) override;
  void variable_read(Context& ctx, const Variable& v, const Tensor& value) override;
  bool differentiates(const Tensor& t) const override { return records_here() && tracked(t); }

  size_t num_recorded() const { return entries_.size(); }

 private:
  struct Entry {
    AttrStore attrs;
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
  std::vector<Tensor> backprop(const Tensor& target, const std::vector<std::vector<Tensor>>& sources,
                               const Tensor* output_gradient, Unconnected unconnected);

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
