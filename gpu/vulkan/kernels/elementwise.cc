// Elementwise kernels: unary math (unary.comp), broadcasting binary arithmetic (binary.comp),
// comparisons with bool outputs, logical ops on bools, and IsNan/IsFinite.
#include <algorithm>
#include <vector>

#include "gpu/shaders/op_codes.h"
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/cpu/elementwise_table.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

// Ops that only have float variants (integers differ in semantics or raise on the CPU).
bool float_only(uint32_t op) {
  switch (op) {
    case UOP_NEG: case UOP_ABS: case UOP_SIGN: case UOP_SQUARE: case UOP_RELU: case UOP_RELU6:
    case UOP_IDENTITY: case UOP_ZEROS: case UOP_ONES: case UOP_CLIP:
      return false;
    default:
      return true;
  }
}

void run_unary(KernelContext& kc, uint32_t op, const UnaryPush& extra = {}) {
  const Tensor& x = kc.input(0);
  DType dt = x.dtype();
  if (!has_variant(kc, dt)) return;
  if (float_only(op) && dt == DType::Int32) return fallback_or_unimplemented(kc, dt);
  check_indexable(kc, x.num_elements());
  if (x.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  UnaryPush p = extra;
  p.n = static_cast<uint32_t>(x.num_elements());
  Pipeline& pl = dev.pipeline(variant("unary", dt).c_str(), 2, sizeof(UnaryPush), {op});
  dev.dispatch(pl, {x.buffer(), kc.output(0).buffer()}, &p, groups_for(p.n));
}

template <uint32_t Op>
void unary_kernel(KernelContext& kc) { run_unary(kc, Op); }

void gelu_kernel(KernelContext& kc) { run_unary(kc, kc.attrs.b("approximate") ? UOP_GELU_TANH : UOP_GELU); }

// Strides of `s` (right-aligned against `rank` output dims) in elements, 0 where it broadcasts.
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  int r = out.rank(), off = r - s.rank();
  std::vector<int64_t> strides(static_cast<size_t>(r), 0);
  int64_t step = 1;
  for (int d = r - 1; d >= off; --d) {
    int64_t dim = s[d - off];
    strides[d] = dim == 1 ? 0 : step;
    step *= dim;
  }
  return strides;
}

// Fills the broadcast layout of z = f(x, y): drops size-1 dims and merges dims that both inputs
// walk contiguously. Returns false when more than kMaxShaderRank dims remain.
bool broadcast_layout(const Shape& xs, const Shape& ys, const Shape& out, BinaryPush& p) {
  p.rank = 0;
  if (xs == out && ys == out) return true;
  std::vector<int64_t> sx = broadcast_strides(xs, out), sy = broadcast_strides(ys, out);
  std::vector<int64_t> dims, ax, ay;
  for (int d = 0; d < out.rank(); ++d) {
    if (out[d] == 1) continue;
    if (!dims.empty() && ax.back() == sx[d] * out[d] && ay.back() == sy[d] * out[d]) {
      dims.back() *= out[d];
      ax.back() = sx[d];
      ay.back() = sy[d];
      continue;
    }
    dims.push_back(out[d]);
    ax.push_back(sx[d]);
    ay.push_back(sy[d]);
  }
  if (dims.size() > kMaxShaderRank) return false;
  if (dims.empty()) {  // every dimension is 1
    dims = {1};
    ax = {0};
    ay = {0};
  }
  p.rank = static_cast<uint32_t>(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    p.dims[d] = static_cast<uint32_t>(dims[d]);
    p.xs[d] = static_cast<uint32_t>(ax[d]);
    p.ys[d] = static_cast<uint32_t>(ay[d]);
  }
  return true;
}

void run_binary(KernelContext& kc, const std::string& shader, uint32_t op, const Tensor& x, const Tensor& y,
                Tensor& z) {
  DType dt = x.dtype();
  check_indexable(kc, z.num_elements());
  if (z.num_elements() == 0) return;
  BinaryPush p{};
  p.n = static_cast<uint32_t>(z.num_elements());
  if (!broadcast_layout(x.shape(), y.shape(), z.shape(), p))
    return fallback_or_unimplemented(kc, dt, "the broadcast needs more than 6 dimensions");
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(shader.c_str(), 3, sizeof(BinaryPush), {op});
  dev.dispatch(pl, {x.buffer(), y.buffer(), z.buffer()}, &p, groups_for(p.n));
}

template <uint32_t Op, bool FloatOnly>
void binary_kernel(KernelContext& kc) {
  DType dt = kc.input(0).dtype();
  if (!has_variant(kc, dt)) return;
  // Integer division and powers raise on the CPU for zero divisors and negative exponents; the
  // GPU cannot report that without a round trip, so they are not offered for integers.
  if (FloatOnly && dt == DType::Int32) return fallback_or_unimplemented(kc, dt);
  run_binary(kc, variant("binary", dt), Op, kc.input(0), kc.input(1), kc.output(0));
}

void clip_kernel(KernelContext& kc) {
  DType dt = kc.input(0).dtype();
  if (!has_variant(kc, dt)) return;
  // z = min(max(t, lo), hi), each step broadcasting; the intermediate is freed after the batch.
  Tensor mid = Tensor::allocate(kc.device, dt, kc.output(0).shape());
  run_binary(kc, variant("binary", dt), BOP_MAX, kc.input(0), kc.input(1), mid);
  run_binary(kc, variant("binary", dt), BOP_MIN, mid, kc.input(2), kc.output(0));
}

void add_n_kernel(KernelContext& kc) {
  DType dt = kc.input(0).dtype();
  if (!has_variant(kc, dt)) return;
  if (kc.num_inputs == 1) {
    vulkan(kc.device).copy(*kc.input(0).buffer(), 0, *kc.output(0).buffer(), 0, kc.input(0).nbytes());
    return;
  }
  std::string shader = variant("binary", dt);
  run_binary(kc, shader, BOP_ADD, kc.input(0), kc.input(1), kc.output(0));
  for (int i = 2; i < kc.num_inputs; ++i) run_binary(kc, shader, BOP_ADD, kc.output(0), kc.input(i), kc.output(0));
}

// Bool and uint8 run the byte ("u8") variants, which need 8-bit storage.
bool is_byte(DType dt) { return dt == DType::Bool || dt == DType::UInt8; }

bool has_byte_variant(KernelContext& kc, DType dt) {
  if (vulkan(kc.device).supports_int8_storage()) return true;
  fallback_or_unimplemented(kc, dt, "the device lacks 8-bit storage");
  return false;
}

// Comparisons: any float32/float16/int32 inputs, bool/uint8 ones through the byte variant.
template <uint32_t Op>
void compare_kernel(KernelContext& kc) {
  DType dt = kc.input(0).dtype();
  if (!has_byte_variant(kc, DType::Bool)) return;
  if (is_byte(dt)) return run_binary(kc, "compare_u8", Op, kc.input(0), kc.input(1), kc.output(0));
  if (!has_variant(kc, dt)) return;
  run_binary(kc, variant("compare", dt), Op, kc.input(0), kc.input(1), kc.output(0));
}

// Equal/NotEqual: shapes that do not broadcast (allowed by incompatible_shape_error=false) give a
// scalar, false for Equal and true for NotEqual, as on the CPU; no shader reads the inputs then.
// The shape function made that scalar, so the output has a lower rank than an input exactly then
// (a broadcast's rank is the larger input rank).
template <uint32_t Op, bool kMismatch>
void equality_kernel(KernelContext& kc) {
  const int rank = std::max(kc.input(0).shape().rank(), kc.input(1).shape().rank());
  if (kc.output(0).shape().rank() < rank) {
    vulkan(kc.device).fill(*kc.output(0).buffer(), kMismatch ? 1u : 0u);  // the bool in byte 0
    return;
  }
  compare_kernel<Op>(kc);
}

template <uint32_t Op>
void logical_kernel(KernelContext& kc) {
  if (!has_byte_variant(kc, DType::Bool)) return;
  run_binary(kc, "binary_u8", Op, kc.input(0), kc.input(1), kc.output(0));
}

void unary_dispatch(KernelContext& kc, const std::string& shader, uint32_t op) {
  const Tensor& x = kc.input(0);
  check_indexable(kc, x.num_elements());
  if (x.num_elements() == 0) return;
  VulkanDevice& dev = vulkan(kc.device);
  UnaryPush p{};
  p.n = static_cast<uint32_t>(x.num_elements());
  Pipeline& pl = dev.pipeline(shader.c_str(), 2, sizeof(UnaryPush), {op});
  dev.dispatch(pl, {x.buffer(), kc.output(0).buffer()}, &p, groups_for(p.n));
}

void logical_not_kernel(KernelContext& kc) {
  if (!has_byte_variant(kc, DType::Bool)) return;
  unary_dispatch(kc, "unary_u8", UOP_LNOT);
}

// IsNan / IsFinite: float inputs, bool outputs.
template <uint32_t Op>
void float_test_kernel(KernelContext& kc) {
  DType dt = kc.input(0).dtype();
  if (!has_byte_variant(kc, DType::Bool) || !has_variant(kc, dt)) return;
  if (dt == DType::Int32) return fallback_or_unimplemented(kc, dt);
  unary_dispatch(kc, variant("unary_bool", dt), Op);
}

}  // namespace

// The elementwise table's ops (runtime/cpu/elementwise_table.h) on unary.comp / binary.comp.
#define CAIRN_VK_UNARY(name, step, F, code) CAIRN_REGISTER_KERNEL(name, DeviceKind::Vulkan, unary_kernel<code>);
CAIRN_FUSIBLE_UNARY_OPS(CAIRN_VK_UNARY)
#undef CAIRN_VK_UNARY
#define CAIRN_VK_BINARY(name, step, F, code, float_only) \
  CAIRN_REGISTER_KERNEL(name, DeviceKind::Vulkan, (binary_kernel<code, float_only>));
CAIRN_FUSIBLE_BINARY_OPS(CAIRN_VK_BINARY)
#undef CAIRN_VK_BINARY
CAIRN_REGISTER_KERNEL("ZerosLike", DeviceKind::Vulkan, unary_kernel<UOP_ZEROS>);
CAIRN_REGISTER_KERNEL("OnesLike", DeviceKind::Vulkan, unary_kernel<UOP_ONES>);
CAIRN_REGISTER_KERNEL("Gelu", DeviceKind::Vulkan, gelu_kernel);
CAIRN_REGISTER_KERNEL("FloorDiv", DeviceKind::Vulkan, (binary_kernel<BOP_FLOORDIV, true>));
CAIRN_REGISTER_KERNEL("FloorMod", DeviceKind::Vulkan, (binary_kernel<BOP_FLOORMOD, true>));
CAIRN_REGISTER_KERNEL("ClipByValue", DeviceKind::Vulkan, clip_kernel);
CAIRN_REGISTER_KERNEL("AddN", DeviceKind::Vulkan, add_n_kernel);

}  // namespace cairn::gpu

namespace cairn::gpu {
CAIRN_REGISTER_KERNEL("Equal", DeviceKind::Vulkan, (equality_kernel<BOP_EQ, false>));
CAIRN_REGISTER_KERNEL("NotEqual", DeviceKind::Vulkan, (equality_kernel<BOP_NE, true>));
CAIRN_REGISTER_KERNEL("Less", DeviceKind::Vulkan, compare_kernel<BOP_LT>);
CAIRN_REGISTER_KERNEL("LessEqual", DeviceKind::Vulkan, compare_kernel<BOP_LE>);
CAIRN_REGISTER_KERNEL("Greater", DeviceKind::Vulkan, compare_kernel<BOP_GT>);
CAIRN_REGISTER_KERNEL("GreaterEqual", DeviceKind::Vulkan, compare_kernel<BOP_GE>);
CAIRN_REGISTER_KERNEL("LogicalAnd", DeviceKind::Vulkan, logical_kernel<BOP_LAND>);
CAIRN_REGISTER_KERNEL("LogicalOr", DeviceKind::Vulkan, logical_kernel<BOP_LOR>);
CAIRN_REGISTER_KERNEL("LogicalNot", DeviceKind::Vulkan, logical_not_kernel);
CAIRN_REGISTER_KERNEL("IsNan", DeviceKind::Vulkan, float_test_kernel<UOP_ISNAN>);
CAIRN_REGISTER_KERNEL("IsFinite", DeviceKind::Vulkan, float_test_kernel<UOP_ISFINITE>);
}  // namespace cairn::gpu
