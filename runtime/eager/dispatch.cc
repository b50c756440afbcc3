#include "runtime/eager/dispatch.h"

#include <new>
#include <stdexcept>

#include "runtime/core/inline_array.h"
#include "runtime/core/profile_events.h"
#include "runtime/eager/device_scope.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/validate.h"

namespace cairn {

// Errors from below the op (device allocators: "cpu: out of memory allocating N bytes", Tensor,
// a kernel's std::vector) do not know which op they serve, yet every status must name it. Rather
// than pass the name down to every allocator and kernel, run_kernel catches them here, where
// every op on every device runs, and puts "<op>: " in front of messages that lack it.
void rethrow_naming_op(const OpDef& def) {
  try {
    throw;
  } catch (const Error& e) {
    const std::string& m = e.message();
    if (m.size() > def.name.size() && m.compare(0, def.name.size(), def.name) == 0 && m[def.name.size()] == ':')
      throw;
    throw Error(e.code(), fmt::format("{}: {}", def.name, m));
  } catch (const std::bad_alloc&) {
    // operator new (std::vector and other temporaries of a kernel) ran out of memory.
    raise(Code::ResourceExhausted, "{}: out of memory", def.name);
  } catch (const std::length_error& e) {
    // A temporary larger than std::vector's max_size: also a size the machine cannot hold.
    raise(Code::ResourceExhausted, "{}: out of memory ({})", def.name, e.what());
  }
}

namespace {
constexpr size_t kInlineArgs = 8;

// resolve_call and infer_outputs depend only on the op, its inputs' dtypes and shapes, and the
// attributes given. Most eager calls give none (Add, Mul, Relu...) and repeat the same dtypes and
// shapes, so each thread remembers, per op, the last such call's resolved attributes and output
// specs: a repeat skips about 400 instructions of validation and shape inference
// (bench/callgrind_dispatch.sh) and runs with the remembered attributes and specs in place. Only
// calls that resolved and inferred without error are kept, so every error still comes from the
// full path, with the same message, in the same order. Op definitions live as long as the process
// (the registry never removes one), so an entry never points at a freed OpDef. Thread-local: no
// locks. A kernel or hook may run ops of its own: while a call runs from an entry the entry is
// pinned, and a nested call is not remembered in its place.
class DispatchMemo {
 public:
  static constexpr int kInputs = 3;
  static constexpr int kOutputs = 2;

  // Whether a call of `def` with these counts can be remembered.
  static bool fits(const OpDef& def, int num_inputs, int num_attrs) {
    return num_attrs == 0 && num_inputs <= kInputs;
  }

  struct Entry {
    const OpDef* def = nullptr;
    int num_inputs = 0;
    int num_outputs = 0;  // what the op produces (def.num_outputs of the resolved attributes)
    int pins = 0;         // calls running from this entry now
    TensorSpec inputs[kInputs];
    TensorSpec outputs[kOutputs];
    // The resolved attributes: an Attrs, constructed by remember() (it has no default).
    alignas(Attrs) unsigned char attrs_storage[sizeof(Attrs)];

    const Attrs& attrs() const { return *std::launder(reinterpret_cast<const Attrs*>(attrs_storage)); }
    bool matches(const OpDef& d, const Tensor* const* in, int n) const {
      if (def != &d || num_inputs != n) return false;
      for (int i = 0; i < n; ++i)
        if (inputs[i].dtype != in[i]->dtype() || inputs[i].shape != in[i]->shape()) return false;
      return true;
    }
  };
  static_assert(std::is_trivially_destructible_v<Attrs>, "entries never destroy their Attrs");

  // Keeps an entry from being replaced while a call runs from it.
  class Pin {
   public:
    explicit Pin(Entry& e) : e_(e) { ++e_.pins; }
    ~Pin() { --e_.pins; }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;

   private:
    Entry& e_;
  };

  // The entry for this call, or null.
  Entry* find(const OpDef& def, const Tensor* const* inputs, int n) {
    Entry& e = slot(def);
    return e.matches(def, inputs, n) ? &e : nullptr;
  }

  void remember(const OpDef& def, const TensorSpec* inputs, int n, const Attrs& resolved, const TensorSpec* outputs,
                int num_outputs) {
    Entry& e = slot(def);
    if (num_outputs > kOutputs || e.pins > 0) return;
    e.def = nullptr;  // incomplete until the end
    for (int i = 0; i < n; ++i) e.inputs[i] = inputs[i];
    for (int i = 0; i < num_outputs; ++i) e.outputs[i] = outputs[i];
    Attrs* attrs = new (e.attrs_storage) Attrs(def);
    for (size_t i = 0; i < def.attrs.size(); ++i) attrs->at(static_cast<int>(i)) = resolved.at(static_cast<int>(i));
    e.num_inputs = n;
    e.num_outputs = num_outputs;
    e.def = &def;
  }

  static DispatchMemo& thread() {
    thread_local DispatchMemo memo;
    return memo;
  }

 private:
  static constexpr size_t kSlots = 16;
  // OpDefs sit next to each other in the registry's deque, so address / size spreads them evenly.
  Entry& slot(const OpDef& def) { return slots_[reinterpret_cast<uintptr_t>(&def) / sizeof(OpDef) % kSlots]; }

  Entry slots_[kSlots];
};

[[noreturn, gnu::cold, gnu::noinline]] void raise_output_count(const OpDef& def, int expected, int num_outputs) {
  raise(Code::InvalidArgument, "{}: expected {} output{}, got room for {}", def.name, expected,
        expected == 1 ? "" : "s", num_outputs);
}

// Where an op runs without soft placement: an op without inputs on the device scope's device (or
// the default device), any other op where its inputs are.
Device& placement(Context& ctx, const OpDef& def, const Tensor* const* inputs, int n) {
  if (n == 0) return scoped_device(ctx);
  Device* d = inputs[0]->device();
  for (int i = 1; i < n; ++i) {
    Device* di = inputs[i]->device();
    if (di == d) continue;
    // Inside a function trace an op with a symbolic input is symbolic; its eager inputs become
    // captured constants.
    if (di->kind() == DeviceKind::Symbolic) return *di;
    if (d->kind() == DeviceKind::Symbolic) continue;
    raise(Code::InvalidArgument, "{}: inputs are on different devices ({} and {}); copy them to one device first",
          def.name, d->name(), di->name());
  }
  return *d;
}

// Soft placement copies an input: the dispatch hooks' `after` see the copy as an Identity op, so a
// gradient tape differentiates through it; the copy is counted, logged and profiled.
Tensor soft_copy(Context& ctx, const OpDef& def, const Tensor& input, int index, Device& target) {
  const int64_t start = prof::on() ? prof::now_ns() : 0;
  Tensor copy;
  try {
    copy = tensor_on_device(input, target);
  } catch (...) {
    rethrow_naming_op(def);
  }
  ctx.count_auto_copy();
  const Device& source = *input.device();
  if (ctx.log().min_level <= LogLevel::Debug)
    ctx.log().log(LogLevel::Debug, fmt::format("{}: copied input {} from {} to {} (soft placement)", def.name, index,
                                               source.name(), target.name()));
  if (prof::on()) {
    prof::Event e;
    e.category = "copy";
    e.name = def.name;
    e.device = target.name();
    e.start_ns = start;
    e.duration_ns = prof::now_ns() - start;
    e.args = fmt::format("\"input\":{},\"from\":\"{}\",\"bytes\":{}", index, source.name(), input.nbytes());
    prof::record(std::move(e));
  }
  if (ctx.has_hooks()) {
    static const OpDef& identity = OpRegistry::global().get("Identity");
    TensorSpec spec{input.dtype(), input.shape()};
    Attrs resolved(identity);
    resolve_call(identity, &spec, 1, nullptr, 0, resolved);
    const Tensor* in = &input;
    OpCall call{identity, resolved, &in, 1, &copy, 1, &spec};
    for (DispatchHook* h : ctx.hooks()) h->after(ctx, call);
  }
  return copy;
}

// Soft placement is on and the op has inputs: it runs on the innermost device scope's device, else
// on its first input's, on copies of the inputs that live elsewhere. Returns false, having done
// nothing, when no input needs a copy or one is symbolic (a function trace keeps the strict rules);
// run_op then goes on as usual.
[[gnu::noinline]] bool run_soft_placed(Context& ctx, const OpDef& def, const Tensor* const* inputs, int n,
                                       const NamedAttr* attrs, int num_attrs, Tensor* outputs, int num_outputs) {
  Device* target = DeviceScope::current(ctx);
  if (!target) target = inputs[0]->device();
  bool needs_copy = false;
  for (int i = 0; i < n; ++i) {
    Device* d = inputs[i]->device();
    if (d->kind() == DeviceKind::Symbolic) return false;
    needs_copy |= d != target;
  }
  if (!needs_copy) return false;
  std::vector<Tensor> copies(static_cast<size_t>(n));
  std::vector<const Tensor*> placed(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    placed[i] = inputs[i];
    if (inputs[i]->device() == target) continue;
    copies[i] = soft_copy(ctx, def, *inputs[i], i, *target);
    placed[i] = &copies[i];
  }
  run_op(ctx, def, placed.data(), n, attrs, num_attrs, outputs, num_outputs);
  return true;
}

void allocate_and_run(Context& ctx, const OpDef& def, const Attrs& resolved, Device& device, KernelFn kernel,
                      const OpCall& call) {
  if (!def.dynamic_output_shape)
    for (int i = 0; i < call.num_outputs; ++i)
      call.outputs[i] = Tensor::allocate(device, call.output_specs[i].dtype, call.output_specs[i].shape);
  KernelContext kc{def, resolved, device, ctx.pool(), call.inputs, call.num_inputs, call.outputs, call.num_outputs};
  if (def.random) kc.random_seed = ctx.next_random_seed();
  kernel(kc);
}

// Allocates the outputs (unless the kernel does) and runs the device's kernel.
void run_kernel(Context& ctx, const OpDef& def, const Attrs& resolved, Device& device, const OpCall& call) {
  KernelFn kernel = def.kernels[static_cast<int>(device.kind())];
  if (!kernel) {
    if (device.kind() == DeviceKind::Symbolic)
      raise(Code::FailedPrecondition,
            "{}: an input is a symbolic tensor from a function trace; it has no value outside the trace", def.name);
    raise(Code::Unimplemented, "{}: no kernel on device {}", def.name, device.name());
  }
  // A try block costs nothing until something throws (zero-cost exceptions), so the hot path of
  // dispatch is unchanged.
  try {
    allocate_and_run(ctx, def, resolved, device, kernel, call);
  } catch (...) {
    rethrow_naming_op(def);
  }
}

// The profiler is on: the kernel's host time (validation and shape inference before it are not
// included; on a GPU, the time to record its work: the GPU's own time is a "gpu" event). Ops of a
// trace (symbolic) and ops a graph replay runs through dispatch (the replay records its node) are
// not recorded.
[[gnu::noinline]] void run_kernel_profiled(Context& ctx, const OpDef& def, const Attrs& resolved, Device& device,
                                           const OpCall& call) {
  std::string& label = prof::current_label();
  const bool outer = label.empty();  // not inside a replayed node
  if (outer) label = def.name;
  const int64_t start = prof::now_ns();
  try {
    run_kernel(ctx, def, resolved, device, call);
  } catch (...) {
    if (outer) label.clear();
    throw;
  }
  const int64_t end = prof::now_ns();
  if (outer) label.clear();
  if (device.kind() == DeviceKind::Symbolic || prof::ReplayScope::depth() > 0) return;
  prof::Event e;
  e.category = "eager";
  e.name = def.name;
  e.device = device.name();
  e.start_ns = start;
  e.duration_ns = end - start;
  prof::record(std::move(e));
}
}  // namespace

namespace {
// The output specs of one call: inline for the usual few, on the heap past kInlineArgs (sized
// only once the count is checked, so a bogus count cannot allocate).
struct OutputSpecs {
  explicit OutputSpecs(int n) : few(n >= 0 && n <= static_cast<int>(kInlineArgs) ? static_cast<size_t>(n) : 0) {}
  InlineArray<TensorSpec, kInlineArgs> few;
  std::vector<TensorSpec> many;
  TensorSpec* room(int n) {
    if (n <= static_cast<int>(kInlineArgs)) return few.data();
    many.resize(static_cast<size_t>(n));
    return many.data();
  }
};

// Runs the call on `device`: through the dispatch hooks when there are any, else straight to the
// kernel.
void dispatch(Context& ctx, const OpDef& def, const Attrs& resolved, Device& device, OpCall& call) {
  if (ctx.has_hooks()) {
    // A hook that produces the outputs (graph capture) replaces the kernel; every hook still sees
    // the call afterwards, so a tape inside a traced function records the symbolic op too.
    // No snapshot is held while the kernel runs: a kernel may block (a collective waits for the
    // other replicas), and a hook's owner removing it (a replica's tape at the end of its trace)
    // waits for the snapshots holding it, which would deadlock the two. Hooks added while the
    // kernel ran see after() without before(); hooks only record their own thread's ops there.
    bool produced = false;
    {
      HookSnapshot hooks = ctx.hooks();
      for (DispatchHook* h : hooks)
        if (!produced && h->before(ctx, call)) produced = true;
    }
    if (!produced) {
      if (prof::on()) run_kernel_profiled(ctx, def, resolved, device, call);
      else run_kernel(ctx, def, resolved, device, call);
    }
    HookSnapshot hooks = ctx.hooks();
    for (DispatchHook* h : hooks) h->after(ctx, call);
    return;
  }
  // Profiler off: one relaxed load and a predictable branch per op.
  if (__builtin_expect(prof::on(), 0)) return run_kernel_profiled(ctx, def, resolved, device, call);
  run_kernel(ctx, def, resolved, device, call);
}

// Soft placement is on and the op has inputs: runs the op on copies of the inputs when some live
// elsewhere (see run_soft_placed).
bool soft_placed(Context& ctx, const OpDef& def, const Tensor* const* inputs, int num_inputs, const NamedAttr* attrs,
                 int num_attrs, Tensor* outputs, int num_outputs) {
  return __builtin_expect(ctx.soft_placement(), 0) && num_inputs > 0 &&
         run_soft_placed(ctx, def, inputs, num_inputs, attrs, num_attrs, outputs, num_outputs);
}

// A call the thread's DispatchMemo remembers: runs with the entry's attributes and output specs.
void run_remembered(Context& ctx, const OpDef& def, DispatchMemo::Entry& hit, const Tensor* const* inputs,
                    int num_inputs, Tensor* outputs, int num_outputs) {
  if (num_outputs != hit.num_outputs) raise_output_count(def, hit.num_outputs, num_outputs);
  if (soft_placed(ctx, def, inputs, num_inputs, nullptr, 0, outputs, num_outputs)) return;
  Device& device = placement(ctx, def, inputs, num_inputs);
  DispatchMemo::Pin pin(hit);
  OpCall call{def, hit.attrs(), inputs, num_inputs, outputs, num_outputs, hit.outputs};
  dispatch(ctx, def, hit.attrs(), device, call);
}

// The full path: validation, placement and shape inference, then the call.
void resolve_and_run(Context& ctx, const OpDef& def, const Tensor* const* inputs, int num_inputs,
                     const NamedAttr* attrs, int num_attrs, Tensor* outputs, int num_outputs) {
  InlineArray<TensorSpec, kInlineArgs> in_specs(static_cast<size_t>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) {
    in_specs[i].dtype = inputs[i]->dtype();
    in_specs[i].shape = inputs[i]->shape();
  }
  Attrs resolved(def);
  resolve_call(def, in_specs.data(), num_inputs, attrs, num_attrs, resolved);

  int expected = def.num_outputs(resolved);
  if (num_outputs != expected) raise_output_count(def, expected, num_outputs);

  if (soft_placed(ctx, def, inputs, num_inputs, attrs, num_attrs, outputs, num_outputs)) return;
  Device& device = placement(ctx, def, inputs, num_inputs);
  OutputSpecs specs(num_outputs);
  TensorSpec* out_specs = specs.room(num_outputs);
  infer_outputs(def, resolved, in_specs.data(), num_inputs, out_specs, num_outputs);
  if (DispatchMemo::fits(def, num_inputs, num_attrs))
    DispatchMemo::thread().remember(def, in_specs.data(), num_inputs, resolved, out_specs, num_outputs);
  OpCall call{def, resolved, inputs, num_inputs, outputs, num_outputs, out_specs};
  dispatch(ctx, def, resolved, device, call);
}
}  // namespace

void run_op(Context& ctx, const OpDef& def, const Tensor* const* inputs, int num_inputs, const NamedAttr* attrs,
            int num_attrs, Tensor* outputs, int num_outputs) {
  for (int i = 0; i < num_inputs; ++i)
    if (!inputs[i]->valid()) raise(Code::InvalidArgument, "{}: input {} is an empty tensor handle", def.name, i);
  if (DispatchMemo::fits(def, num_inputs, num_attrs))
    if (DispatchMemo::Entry* hit = DispatchMemo::thread().find(def, inputs, num_inputs))
      return run_remembered(ctx, def, *hit, inputs, num_inputs, outputs, num_outputs);
  resolve_and_run(ctx, def, inputs, num_inputs, attrs, num_attrs, outputs, num_outputs);
}

namespace {
std::vector<Tensor> run_named(Context& ctx, std::string_view op, const Tensor* inputs, size_t n,
                              const NamedAttr* attrs, size_t n_attrs) {
  const OpDef& def = OpRegistry::global().get(op);
  std::vector<const Tensor*> ptrs(n);
  for (size_t i = 0; i < n; ++i) ptrs[i] = &inputs[i];
  // Resolve once to learn the output count (variadic outputs depend on attributes).
  std::vector<TensorSpec> specs(n);
  for (size_t i = 0; i < n; ++i) specs[i] = {inputs[i].dtype(), inputs[i].shape()};
  Attrs resolved(def);
  resolve_call(def, specs.data(), static_cast<int>(n), attrs, static_cast<int>(n_attrs), resolved);
  // Number attributes (Split's num_split, Unpack's num) size the output vector before any shape
  // function has checked them, so bound them here.
  constexpr int kMaxOutputs = 1 << 16;
  int n_out = def.num_outputs(resolved);
  if (n_out < 0 || n_out > kMaxOutputs)
    raise(Code::InvalidArgument, "{}: {} outputs requested; at most {} are supported", def.name, n_out, kMaxOutputs);
  std::vector<Tensor> outs(static_cast<size_t>(n_out));
  run_op(ctx, def, ptrs.data(), static_cast<int>(n), attrs, static_cast<int>(n_attrs), outs.data(),
         static_cast<int>(outs.size()));
  return outs;
}
}  // namespace

std::vector<Tensor> run_op(Context& ctx, std::string_view op, std::initializer_list<Tensor> inputs,
                           std::initializer_list<NamedAttr> attrs) {
  return run_named(ctx, op, inputs.begin(), inputs.size(), attrs.begin(), attrs.size());
}

std::vector<Tensor> run_op(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs,
                           std::initializer_list<NamedAttr> attrs) {
  return run_named(ctx, op, inputs.data(), inputs.size(), attrs.begin(), attrs.size());
}

std::vector<Tensor> run_op(Context& ctx, std::string_view op, const std::vector<Tensor>& inputs,
                           const std::vector<NamedAttr>& attrs) {
  return run_named(ctx, op, inputs.data(), inputs.size(), attrs.data(), attrs.size());
}

std::vector<NamedAttr> explicit_attrs(const Attrs& attrs) {
  std::vector<NamedAttr> out;
  const OpDef& def = attrs.def();
  for (size_t i = 0; i < def.attrs.size(); ++i)
    if (!def.attrs[i].inferred) out.push_back({def.attrs[i].name, attrs.at(static_cast<int>(i))});
  return out;
}

NamedAttr attr_int(std::string_view name, int64_t v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::Int;
  a.value.i = v;
  return a;
}
NamedAttr attr_bool(std::string_view name, bool v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::Bool;
  a.value.i = v ? 1 : 0;
  return a;
}
NamedAttr attr_float(std::string_view name, double v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::Float;
  a.value.f = v;
  return a;
}
NamedAttr attr_dtype(std::string_view name, DType v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::DType;
  a.value.dtype = v;
  return a;
}
NamedAttr attr_string(std::string_view name, std::string_view v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::String;
  a.value.s = v;
  return a;
}
NamedAttr attr_ints(std::string_view name, const std::vector<int64_t>& v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::Ints;
  a.value.ints = v.data();
  a.value.n_ints = v.size();
  return a;
}
NamedAttr attr_floats(std::string_view name, const std::vector<double>& v) {
  NamedAttr a{name, {}};
  a.value.kind = AttrKind::Floats;
  a.value.floats = v.data();
  a.value.n_floats = v.size();
  return a;
}

}  // namespace cairn
