// Tracing: while a Tracer is installed, the ops its thread runs (and the variable reads and writes)
// become graph nodes instead of running. Their outputs are symbolic tensors: tensors on a
// SymbolicDevice, with a dtype and shape but no memory. Anything eager the trace touches is
// captured: a tensor by value (a Constant node), a variable by reference (Read / Assign nodes).
#pragma once

#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/dispatch.h"
#include "runtime/graph/graph.h"

namespace cairn::graph {

class SymbolicDevice final : public Device {
 public:
  explicit SymbolicDevice(const std::string& function) : Device(DeviceKind::Symbolic, "symbolic:" + function) {}
  Buffer* allocate(size_t nbytes) override;
  void read(const Buffer&, void*, size_t) override;  // FailedPrecondition: no values while tracing
  void write(Buffer&, const void*, size_t) override;

 protected:
  void deallocate(Buffer* buffer) override { delete buffer; }
};

class Tracer final : public DispatchHook {
 public:
  // Installs itself on `ctx` for the calling thread; uninstalls when destroyed.
  Tracer(Context& ctx, Graph& graph, const std::string& function);
  ~Tracer() override;
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The symbolic tensor of the function's `index`-th input.
  Tensor input(int index, const TensorSpec& spec);
  // The graph output that `t` is: a symbolic tensor of this trace, or an eager tensor (captured).
  Port port_of(const Tensor& t, const char* what);

  bool before(Context& ctx, OpCall& call) override;
  bool read_variable(Context& ctx, const Variable& v, Tensor* value) override;
  bool assign_variable(Context& ctx, Variable& v, const Tensor& value) override;

 private:
  bool tracing_here() const { return std::this_thread::get_id() == thread_ && !EagerScope::active(); }
  Tensor symbolic(int node, int output);

  Ref<Context> ctx_;
  Graph& graph_;
  std::string function_;
  Ref<SymbolicDevice> device_;
  std::thread::id thread_;
  std::unordered_map<const Buffer*, Port> ports_;
  std::vector<Tensor> alive_;  // keeps symbolic buffers (their identities) for the trace's life
};

}  // namespace cairn::graph
