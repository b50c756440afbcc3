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

namespace {
// The tracers recording on this thread, innermost last (a function first called inside another's
// trace with eager inputs is traced on its own, within the outer trace).
std::vector<Tracer*>& active_tracers() {
  static thread_local std::vector<Tracer*> tracers;
  return tracers;
}
}  // namespace

Tracer::Tracer(Context& ctx, Graph& graph, const std::string& function)
    : ctx_(Ref<Context>::share(&ctx)),
      function_(function),
      device_(make_ref<SymbolicDevice>(function)),
      thread_(std::this_thread::get_id()) {
  frames_.push_back({&graph, nullptr, 0, {}});
  ctx.add_hook(this);
  active_tracers().push_back(this);
}

Tracer::~Tracer() {
  active_tracers().pop_back();
  ctx_->remove_hook(this);
}

Tracer* Tracer::current() {
  std::vector<Tracer*>& tracers = active_tracers();
  return tracers.empty() || EagerScope::active() ? nullptr : tracers.back();
}

void Tracer::push_frame(Graph& sub, Captures& captures, int first_capture_input) {
  frames_.push_back({&sub, &captures, first_capture_input, {}});
}

void Tracer::pop_frame() {
  if (frames_.size() <= 1) raise(Code::Internal, "function '{}': pop_frame without a pushed frame", function_);
  frames_.pop_back();
}

std::vector<Tensor> Tracer::add(Node node) {
  const size_t n = node.outputs.size();
  const int id = graph().add(std::move(node));
  std::vector<Tensor> out;
  for (size_t k = 0; k < n; ++k) out.push_back(symbolic(id, static_cast<int>(k)));
  return out;
}

Tensor Tracer::symbolic(int node, int output) {
  const TensorSpec& spec = graph().nodes[node].outputs[output];
  Tensor t = Tensor::allocate(*device_, spec.dtype, spec.shape);
  frames_.back().ports[t.buffer()] = {node, output};
  alive_.push_back(t);
  return t;
}

Tensor Tracer::input(int index, const TensorSpec& spec) {
  Node n;
  n.kind = NodeKind::Input;
  n.index = index;
  n.outputs = {spec};
  return symbolic(graph().add(std::move(n)), 0);
}

Port Tracer::port_of(const Tensor& t, const char* what) {
  if (!t.valid()) raise(Code::InvalidArgument, "function '{}': {} is an empty tensor", function_, what);
  return resolve(t, frames_.size() - 1, what);
}

Port Tracer::resolve(const Tensor& t, size_t frame, const char* what) {
  Frame& f = frames_[frame];
  auto it = f.ports.find(t.buffer());
  if (it != f.ports.end()) return it->second;
  Node n;
  if (t.device()->kind() == DeviceKind::Symbolic) {
    if (frame == 0)
      raise(Code::InvalidArgument,
            "function '{}': {} is a symbolic tensor of another function's trace or of a finished cond/while_loop "
            "branch (use a branch's results through the cond or while_loop outputs)",
            function_, what);
    // A tensor of an enclosing frame: the subgraph reads it through a capture input.
    Port outer = resolve(t, frame - 1, what);
    Captures& captures = *f.captures;
    size_t k = 0;
    while (k < captures.ports.size() && !(captures.ports[k] == outer)) ++k;
    if (k == captures.ports.size()) {
      captures.ports.push_back(outer);
      captures.tensors.push_back(t);
    }
    n.kind = NodeKind::Input;
    n.index = f.first_capture_input + static_cast<int>(k);
  } else {
    // An eager value the trace uses: captured by value, once per frame.
    n.kind = NodeKind::Constant;
    n.value = t;
  }
  n.outputs = {{t.dtype(), t.shape()}};
  Port p{f.graph->add(std::move(n)), 0};
  f.ports[t.buffer()] = p;
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
  int id = graph().add(std::move(n));
  for (int i = 0; i < call.num_outputs; ++i) call.outputs[i] = symbolic(id, i);
  return true;
}

bool Tracer::read_variable(Context&, const Variable& v, Tensor* value) {
  if (!tracing_here()) return false;
  Node n;
  n.kind = NodeKind::Read;
  n.variable = Ref<Variable>::share(const_cast<Variable*>(&v));
  n.outputs = {{v.dtype(), v.shape()}};
  *value = symbolic(graph().add(std::move(n)), 0);
  return true;
}

bool Tracer::assign_variable(Context&, Variable& v, const Tensor& value) {
  if (!tracing_here()) return false;
  Node n;
  n.kind = NodeKind::Assign;
  n.variable = Ref<Variable>::share(&v);
  n.inputs = {port_of(value, "an assigned value")};
  graph().add(std::move(n));
  return true;
}

}  // namespace cairn::graph
