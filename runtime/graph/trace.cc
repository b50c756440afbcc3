#include "runtime/graph/trace.h"

namespace cairn::graph {

Buffer* SymbolicDevice::allocate(size_t nbytes) {
  Buffer* b = new Buffer();
  b->device = this;
  b->nbytes = nbytes;
  retain();
  return b;
}

void SymbolicDevice::read(const Buffer&, void*, size_t) {
  raise(Code::FailedPrecondition,
        "{}: a tensor inside a function trace has no value yet; read results after calling the function", name());
}

void SymbolicDevice::write(Buffer&, const void*, size_t) {
  raise(Code::FailedPrecondition, "{}: a symbolic tensor cannot be written", name());
}

Tracer::Tracer(Context& ctx, Graph& graph, const std::string& function)
    : ctx_(Ref<Context>::share(&ctx)),
      graph_(graph),
      function_(function),
      device_(make_ref<SymbolicDevice>(function)),
      thread_(std::this_thread::get_id()) {
  ctx.add_hook(this);
}

Tracer::~Tracer() { ctx_->remove_hook(this); }

Tensor Tracer::symbolic(int node, int output) {
  const TensorSpec& spec = graph_.nodes[node].outputs[output];
  Tensor t = Tensor::allocate(*device_, spec.dtype, spec.shape);
  ports_[t.buffer()] = {node, output};
  alive_.push_back(t);
  return t;
}

Tensor Tracer::input(int index, const TensorSpec& spec) {
  Node n;
  n.kind = NodeKind::Input;
  n.index = index;
  n.outputs = {spec};
  return symbolic(graph_.add(std::move(n)), 0);
}

Port Tracer::port_of(const Tensor& t, const char* what) {
  if (!t.valid()) raise(Code::InvalidArgument, "function '{}': {} is an empty tensor", function_, what);
  auto it = ports_.find(t.buffer());
  if (it != ports_.end()) return it->second;
  if (t.device()->kind() == DeviceKind::Symbolic)
    raise(Code::InvalidArgument, "function '{}': {} is a symbolic tensor of another function's trace", function_, what);
  // An eager value the trace uses: captured by value, once.
  Node n;
  n.kind = NodeKind::Constant;
  n.value = t;
  n.outputs = {{t.dtype(), t.shape()}};
  Port p{graph_.add(std::move(n)), 0};
  ports_[t.buffer()] = p;
  alive_.push_back(t);
  return p;
}

bool Tracer::before(Context&, OpCall& call) {
  if (!tracing_here()) return false;
  if (call.def.dynamic_output_shape)
    raise(Code::Unimplemented, "function '{}': op {} has an output shape that depends on input values; it cannot be traced",
          function_, call.def.name);
  Node n;
  n.kind = NodeKind::Op;
  n.def = &call.def;
  n.attrs = std::make_unique<AttrStore>(call.attrs);
  for (int i = 0; i < call.num_inputs; ++i) n.inputs.push_back(port_of(*call.inputs[i], "an op input"));
  n.outputs.assign(call.output_specs, call.output_specs + call.num_outputs);
  int id = graph_.add(std::move(n));
  for (int i = 0; i < call.num_outputs; ++i) call.outputs[i] = symbolic(id, i);
  return true;
}

bool Tracer::read_variable(Context&, const Variable& v, Tensor* value) {
  if (!tracing_here()) return false;
  Node n;
  n.kind = NodeKind::Read;
  n.variable = Ref<Variable>::share(const_cast<Variable*>(&v));
  n.outputs = {{v.dtype(), v.shape()}};
  *value = symbolic(graph_.add(std::move(n)), 0);
  return true;
}

bool Tracer::assign_variable(Context&, Variable& v, const Tensor& value) {
  if (!tracing_here()) return false;
  Node n;
  n.kind = NodeKind::Assign;
  n.variable = Ref<Variable>::share(&v);
  n.inputs = {port_of(value, "an assigned value")};
  graph_.add(std::move(n));
  return true;
}

}  // namespace cairn::graph
