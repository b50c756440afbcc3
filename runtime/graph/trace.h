// Tracing: while a Tracer is installed, the ops its thread runs (and the variable reads and writes)
// become graph nodes instead of running. Their outputs are symbolic tensors: tensors on a
// SymbolicDevice, with a dtype and shape but no memory. Anything eager the trace touches is
// captured: a tensor by value (a Constant node), a variable by reference (Read / Assign nodes).
//
// Control flow (control_flow.h) traces its branches into subgraphs: it pushes a frame, and until
// the frame is popped the ops go into the subgraph. A symbolic tensor of an enclosing frame used
// there becomes a capture: an Input node of the subgraph, fed at replay from the enclosing graph.
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

  // The innermost tracer recording this thread's ops; null when none is (or inside an EagerScope).
  static Tracer* current();

  // The symbolic tensor of the current frame's `index`-th input.
  Tensor input(int index, const TensorSpec& spec);
  // The current graph's output that `t` is: a symbolic tensor of this frame, one of an enclosing
  // frame (captured), or an eager tensor (captured by value).
  Port port_of(const Tensor& t, const char* what);

  // Tensors of an enclosing frame that a subgraph reads: their ports in the enclosing graph.
  struct Captures {
    std::vector<Port> ports;
    std::vector<Tensor> tensors;
  };
  // Records into `sub` until pop_frame. Enclosing tensors the subgraph uses are appended to
  // `captures` (two branches may share one list) and read through Input nodes numbered
  // `first_capture_input` + their position in `captures`.
  void push_frame(Graph& sub, Captures& captures, int first_capture_input);
  void pop_frame();
  // Adds `node` to the current graph; returns its outputs as symbolic tensors.
  std::vector<Tensor> add(Node node);
  // The graph being recorded (the innermost frame's).
  Graph& graph() { return *frames_.back().graph; }

  bool before(Context& ctx, OpCall& call) override;
  bool read_variable(Context& ctx, const Variable& v, Tensor* value) override;
  bool assign_variable(Context& ctx, Variable& v, const Tensor& value) override;

 private:
  struct Frame {
    Graph* graph;
    Captures* captures;  // null for the function's own graph
    int first_capture_input;
    std::unordered_map<const Buffer*, Port> ports;  // this frame's tensors and captures
  };

  bool tracing_here() const { return std::this_thread::get_id() == thread_ && !EagerScope::active(); }
  Tensor symbolic(int node, int output);
  Port resolve(const Tensor& t, size_t frame, const char* what);

  Ref<Context> ctx_;
  std::string function_;
  Ref<SymbolicDevice> device_;
  std::thread::id thread_;
  std::vector<Frame> frames_;  // frames_[0] is the function's graph
  std::vector<Tensor> alive_;  // keeps symbolic buffers (their identities) for the trace's life
};

}  // namespace cairn::graph
