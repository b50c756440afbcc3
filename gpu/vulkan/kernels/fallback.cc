#include <vector>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "runtime/core/inline_array.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

const char* dtype_suffix(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "f32";
    case DType::Float16: return "f16";
    case DType::Int32: return "i32";
    default: return nullptr;
  }
}

namespace {

DType first_dtype(const KernelContext& kc) {
  if (kc.num_inputs > 0) return kc.input(0).dtype();
  if (kc.num_outputs > 0 && kc.output(0).valid()) return kc.output(0).dtype();
  return DType::Invalid;
}

void run_on_cpu(KernelContext& kc, VulkanDevice& dev) {
  KernelFn cpu_kernel = kc.def.kernels[static_cast<int>(DeviceKind::CPU)];
  if (!cpu_kernel) raise(Code::Unimplemented, "{}: no kernel on the CPU either", kc.op());
  Device& cpu = dev.cpu();
  std::vector<Tensor> host_inputs;
  host_inputs.reserve(static_cast<size_t>(kc.num_inputs));
  std::vector<const Tensor*> ptrs;
  for (int i = 0; i < kc.num_inputs; ++i) {
    host_inputs.push_back(tensor_on_device(kc.input(i), cpu));
    ptrs.push_back(&host_inputs.back());
  }
  std::vector<Tensor> host_outputs(static_cast<size_t>(kc.num_outputs));
  if (!kc.def.dynamic_output_shape)
    for (int i = 0; i < kc.num_outputs; ++i)
      host_outputs[i] = Tensor::allocate(cpu, kc.output(i).dtype(), kc.output(i).shape());
  KernelContext cpu_kc{kc.def, kc.attrs, cpu, kc.pool, ptrs.data(), kc.num_inputs, host_outputs.data(), kc.num_outputs};
  cpu_kc.random_seed = kc.random_seed;
  cpu_kernel(cpu_kc);
  for (int i = 0; i < kc.num_outputs; ++i) {
    const Tensor& h = host_outputs[i];
    if (kc.def.dynamic_output_shape) kc.allocate_output(i, h.dtype(), h.shape());
    dev.write(*kc.output(i).buffer(), h.raw_data(), h.nbytes());
  }
  dev.count_fallback();
}

}  // namespace

void fallback_or_unimplemented(KernelContext& kc, DType dtype, const char* why) {
  VulkanDevice& dev = vulkan(kc.device);
  if (dev.cpu_fallback()) {
    // Checked before the inputs are read: an op without inputs would otherwise write its CPU
    // result as a constant of the recording, and the caller asked for none of its work on the CPU.
    dev.refuse_in_capture("a CPU fallback (no Vulkan kernel for this dtype)");
    return run_on_cpu(kc, dev);
  }
  raise(Code::Unimplemented, "{}: no Vulkan kernel for dtype {} on device {}{}{}", kc.op(), dtype_name(dtype),
        dev.name(), why ? ": " : "", why ? why : "");
}

bool has_variant(KernelContext& kc, DType dtype) {
  if (vulkan(kc.device).supports(dtype)) return true;
  fallback_or_unimplemented(kc, dtype);
  return false;
}

void check_indexable(KernelContext& kc, int64_t elements) {
  if (elements > INT32_MAX)
    raise(Code::InvalidArgument, "{}: {} elements exceed the Vulkan kernels' 32-bit indexing", kc.op(), elements);
}

void no_vulkan_kernel(KernelContext& kc) { fallback_or_unimplemented(kc, first_dtype(kc)); }

}  // namespace cairn::gpu
