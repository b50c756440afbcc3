// FusedElementwise on Vulkan: one generated compute shader per program (fused_shader.h), compiled
// on first use and cached per device as a pipeline keyed by (program, dtype, inputs). A program
// with more inputs than a dispatch binds runs step by step on the unfused ops' shaders.
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "gpu/vulkan/fused_shader.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/graph/fusion.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

// One step on unary.comp / binary.comp, a one-element operand broadcast (stride 0).
void run_step(VulkanDevice& dev, const StepCode& code, const Tensor& a, const Tensor* b, Tensor& out) {
  const uint32_t n = static_cast<uint32_t>(out.num_elements());
  if (!code.binary) {
    UnaryPush p{};
    p.n = n;
    Pipeline& pl = dev.pipeline("unary_f32", 2, sizeof(UnaryPush), {code.code});
    dev.dispatch(pl, {a.buffer(), out.buffer()}, &p, groups_for(n));
    return;
  }
  BinaryPush p{};
  p.n = n;
  if (a.num_elements() != n || b->num_elements() != n) {
    p.rank = 1;
    p.dims[0] = n;
    p.xs[0] = a.num_elements() == n ? 1 : 0;
    p.ys[0] = b->num_elements() == n ? 1 : 0;
  }
  Pipeline& pl = dev.pipeline("binary_f32", 3, sizeof(BinaryPush), {code.code});
  dev.dispatch(pl, {a.buffer(), b->buffer(), out.buffer()}, &p, groups_for(n));
}

// The program one step per dispatch, intermediates in fresh tensors (freed after their batch).
void run_step_by_step(KernelContext& kc, const int64_t* program, int64_t steps) {
  VulkanDevice& dev = vulkan(kc.device);
  Tensor& out = kc.output(0);
  std::vector<Tensor> regs;
  for (int i = 0; i < kc.num_inputs; ++i) regs.push_back(kc.input(i));
  for (int64_t j = 0; j < steps; ++j) {
    const int64_t* s = program + 3 * j;
    const StepCode* code = step_code(s[0]);
    if (!code) raise(Code::Internal, "FusedElementwise: step {} has unknown code {}", j, s[0]);
    Tensor dst = j == steps - 1 ? out : Tensor::allocate(kc.device, out.dtype(), out.shape());
    const Tensor* b = code->binary ? &regs.at(static_cast<size_t>(s[2])) : nullptr;
    run_step(dev, *code, regs.at(static_cast<size_t>(s[1])), b, dst);
    regs.push_back(dst);
  }
}

void fused_kernel(KernelContext& kc) {
  Tensor& out = kc.output(0);
  const DType dt = out.dtype();
  if (dt != DType::Float32) return fallback_or_unimplemented(kc, dt, "fused shaders are float32 only");
  for (int i = 0; i < kc.num_inputs; ++i)
    if (kc.input(i).device() != &kc.device)
      raise(Code::InvalidArgument, "FusedElementwise: input {} is on {}, the kernel runs on {}", i,
            kc.input(i).device()->name(), kc.device.name());
  check_indexable(kc, out.num_elements());
  const AttrValue& program = kc.attrs.at(1);
  if (program.n_ints == 0 || program.n_ints % 3 != 0)
    raise(Code::Internal, "FusedElementwise: a program of {} ints is malformed", program.n_ints);
  if (out.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  const uint32_t buffers = static_cast<uint32_t>(kc.num_inputs) + 1;
  if (buffers > dev.max_bindings()) return run_step_by_step(kc, program.ints, static_cast<int64_t>(program.n_ints / 3));

  FusedProgram fp;
  fp.program = program.ints;
  fp.n_ints = program.n_ints;
  fp.dtype = dt;
  fp.num_inputs = kc.num_inputs;
  for (int i = 0; i < kc.num_inputs; ++i) fp.scalar.push_back(kc.input(i).num_elements() == 1);
  const std::string key = fused_shader_key(fp);
  Pipeline* pl = dev.find_pipeline(key);
  if (!pl) pl = &dev.add_pipeline(key, compile_fused_shader(fp), buffers, sizeof(uint32_t));

  std::vector<const Buffer*> bound;
  for (int i = 0; i < kc.num_inputs; ++i) bound.push_back(kc.input(i).buffer());
  bound.push_back(out.buffer());
  const uint32_t n = static_cast<uint32_t>(out.num_elements());
  dev.dispatch(*pl, bound.data(), bound.size(), &n, groups_for(n));
}

// CAIRN_VULKAN_FUSED_SHADERS=0 turns fused shaders off (to rule them out when a driver
// miscompiles one, or to compare): Vulkan replays then run the unfused ops, and the first such
// replay of the process says so on its context's log.
bool fused_ready(Context& ctx, Device&) {
  static const bool enabled = [] {
    const char* v = std::getenv("CAIRN_VULKAN_FUSED_SHADERS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  if (enabled) return true;
  static std::once_flag logged;
  std::call_once(logged, [&] {
    ctx.log().log(LogLevel::Info, "vulkan: CAIRN_VULKAN_FUSED_SHADERS=0: graph replays run elementwise chains unfused");
  });
  return false;
}

struct Registration {
  Registration() {
    graph::register_fused_backend(DeviceKind::Vulkan, graph::FusedBackend{fused_kernel, {DType::Float32}, fused_ready});
  }
} registration;

}  // namespace

}  // namespace cairn::gpu
