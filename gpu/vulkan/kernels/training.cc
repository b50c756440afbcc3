// The fused optimizer updates (runtime/ops/training_ops.cc) on training.comp: float32 and float16,
// one dispatch per call binding every input and output. Other dtypes, and devices that bind fewer
// buffers per dispatch than the op has tensors, fall back to the CPU kernel (or Unimplemented).
#include <string>
#include <vector>

#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"

namespace cairn::gpu {

namespace {

// `family`: the shader variant's op part ("adam" for training_adam_f32).
template <const char* family>
void training_kernel(KernelContext& kc) {
  const DType dt = kc.input(0).dtype();
  if (dt != DType::Float32 && dt != DType::Float16) return fallback_or_unimplemented(kc, dt);
  if (!has_variant(kc, dt)) return;
  VulkanDevice& dev = vulkan(kc.device);
  const uint32_t buffers = static_cast<uint32_t>(kc.num_inputs + kc.num_outputs);
  if (buffers > dev.max_bindings())
    return fallback_or_unimplemented(kc, dt, "the device binds too few buffers per dispatch");
  const int64_t n = kc.input(0).num_elements();
  check_indexable(kc, n);
  if (n == 0) return;
  std::vector<const Buffer*> bound;
  for (int i = 0; i < kc.num_inputs; ++i) bound.push_back(kc.input(i).buffer());
  for (int i = 0; i < kc.num_outputs; ++i) bound.push_back(kc.output(i).buffer());
  const int nesterov_index = kc.def.attr_index("use_nesterov");
  const uint32_t nesterov = nesterov_index >= 0 && kc.attrs.at(nesterov_index).i != 0 ? 1 : 0;
  TrainingPush p{static_cast<uint32_t>(n)};
  const std::string shader = std::string("training_") + family + "_" + dtype_suffix(dt);
  Pipeline& pl = dev.pipeline(shader.c_str(), buffers, sizeof(TrainingPush), {nesterov});
  dev.dispatch(pl, bound.data(), bound.size(), &p, groups_for(n));
}

constexpr char kGd[] = "gd", kMomentum[] = "momentum", kKerasMomentum[] = "keras_momentum", kAdam[] = "adam",
               kAdamW[] = "adamw", kRmsProp[] = "rmsprop", kCenteredRmsProp[] = "centered_rmsprop",
               kKerasRmsProp[] = "keras_rmsprop", kKerasCenteredRmsProp[] = "keras_centered_rmsprop";

}  // namespace

CAIRN_REGISTER_KERNEL("ApplyGradientDescent", DeviceKind::Vulkan, training_kernel<kGd>);
CAIRN_REGISTER_KERNEL("ApplyMomentum", DeviceKind::Vulkan, training_kernel<kMomentum>);
CAIRN_REGISTER_KERNEL("ApplyKerasMomentum", DeviceKind::Vulkan, training_kernel<kKerasMomentum>);
CAIRN_REGISTER_KERNEL("ApplyAdam", DeviceKind::Vulkan, training_kernel<kAdam>);
CAIRN_REGISTER_KERNEL("ApplyAdamW", DeviceKind::Vulkan, training_kernel<kAdamW>);
CAIRN_REGISTER_KERNEL("ApplyRMSProp", DeviceKind::Vulkan, training_kernel<kRmsProp>);
CAIRN_REGISTER_KERNEL("ApplyCenteredRMSProp", DeviceKind::Vulkan, training_kernel<kCenteredRmsProp>);
CAIRN_REGISTER_KERNEL("ApplyKerasRMSProp", DeviceKind::Vulkan, training_kernel<kKerasRmsProp>);
CAIRN_REGISTER_KERNEL("ApplyKerasCenteredRMSProp", DeviceKind::Vulkan, training_kernel<kKerasCenteredRmsProp>);

}  // namespace cairn::gpu
