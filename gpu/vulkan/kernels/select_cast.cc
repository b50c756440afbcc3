// SelectV2 (select.comp, every dtype, three-way broadcasting) and Cast (cast.comp) between
// float32, float16, int32, bool, uint8 and int64.
#include <string>
#include <vector>

#include "gpu/vulkan/kernels/move.h"
#include "gpu/vulkan/kernels/push.h"

namespace cairn::gpu {

namespace {

// Collapses the broadcast of `inputs` to `out`: drops size-1 output dims and merges dims that
// every input walks contiguously. strides[k][d] is input k's element stride (0 = broadcast).
struct Collapsed {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;
};

Collapsed collapse(const Shape& out, const std::vector<Shape>& inputs) {
  int r = out.rank();
  std::vector<std::vector<int64_t>> full(inputs.size(), std::vector<int64_t>(static_cast<size_t>(r), 0));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Shape& s = inputs[k];
    int64_t step = 1;
    for (int d = r - 1; d >= r - s.rank(); --d) {
      int64_t dim = s[d - (r - s.rank())];
      full[k][static_cast<size_t>(d)] = dim == 1 ? 0 : step;
      step *= dim;
    }
  }
  Collapsed c;
  c.strides.resize(inputs.size());
  for (int d = 0; d < r; ++d) {
    if (out[d] == 1) continue;
    bool merge = !c.dims.empty();
    for (size_t k = 0; k < inputs.size() && merge; ++k)
      merge = c.strides[k].back() == full[k][static_cast<size_t>(d)] * out[d];
    if (merge) {
      c.dims.back() *= out[d];
      for (size_t k = 0; k < inputs.size(); ++k) c.strides[k].back() = full[k][static_cast<size_t>(d)];
      continue;
    }
    c.dims.push_back(out[d]);
    for (size_t k = 0; k < inputs.size(); ++k) c.strides[k].push_back(full[k][static_cast<size_t>(d)]);
  }
  if (c.dims.empty()) {
    c.dims.push_back(1);
    for (auto& s : c.strides) s.push_back(0);
  }
  return c;
}

void select_kernel(KernelContext& kc) {
  const Tensor& cond = kc.input(0);
  const Tensor& t = kc.input(1);
  const Tensor& e = kc.input(2);
  Tensor& out = kc.output(0);
  DType dt = out.dtype();
  if (!can_move(kc, dt)) return;
  if (!vulkan(kc.device).supports_int8_storage())
    return fallback_or_unimplemented(kc, dt, "the device lacks 8-bit storage for the condition");
  check_indexable(kc, out.num_elements() * 2);
  if (out.num_elements() == 0) return;
  Collapsed c = collapse(out.shape(), {cond.shape(), t.shape(), e.shape()});
  if (c.dims.size() > static_cast<size_t>(kMaxShaderRank))
    return fallback_or_unimplemented(kc, dt, "the broadcast needs more than 6 dimensions");
  SelectPush p{};
  p.n = static_cast<uint32_t>(out.num_elements());
  p.rank = static_cast<uint32_t>(c.dims.size());
  for (size_t d = 0; d < c.dims.size(); ++d) {
    p.dims[d] = static_cast<uint32_t>(c.dims[d]);
    p.cs[d] = static_cast<uint32_t>(c.strides[0][d]);
    p.ts[d] = static_cast<uint32_t>(c.strides[1][d]);
    p.es[d] = static_cast<uint32_t>(c.strides[2][d]);
  }
  size_t elem = dtype_size(dt);
  const char* shader = elem == 1 ? "select_w8" : elem == 2 ? "select_w16" : "select_w32";
  VulkanDevice& dev = vulkan(kc.device);
  Pipeline& pl = dev.pipeline(shader, 4, sizeof(SelectPush), {elem == 8 ? 2u : 1u});
  dev.dispatch(pl, {cond.buffer(), t.buffer(), e.buffer(), out.buffer()}, &p, groups_for(p.n));
}

// The cast.comp name of a dtype, or nullptr when Cast has no variant for it.
const char* cast_name(DType dt, bool as_destination) {
  switch (dt) {
    case DType::Float32: return "f32";
    case DType::Float16: return "f16";
    case DType::Int32: return "i32";
    case DType::UInt8: return "u8";
    case DType::Bool: return as_destination ? "bool" : "u8";
    case DType::Int64: return "i64";
    default: return nullptr;
  }
}

bool is_float(DType dt) { return dt == DType::Float32 || dt == DType::Float16; }

void cast_kernel(KernelContext& kc) {
  const Tensor& x = kc.input(0);
  Tensor& y = kc.output(0);
  DType src = x.dtype(), dst = y.dtype();
  VulkanDevice& dev = vulkan(kc.device);
  // The same bytes: a copy (bool -> uint8 included: bools are 0 or 1).
  if (src == dst || (src == DType::Bool && dst == DType::UInt8)) {
    dev.copy(*x.buffer(), 0, *y.buffer(), 0, x.nbytes());
    return;
  }
  const char* s = cast_name(src, false);
  const char* d = cast_name(dst, true);
  if (!s || !d) return fallback_or_unimplemented(kc, s ? dst : src);
  if (src == DType::Int64 && is_float(dst)) return fallback_or_unimplemented(kc, src, "int64 to float");
  for (DType t : {src, dst}) {
    if ((t == DType::Float16 && !dev.supports(DType::Float16)) ||
        ((t == DType::Bool || t == DType::UInt8) && !dev.supports_int8_storage()))
      return fallback_or_unimplemented(kc, t, "the device lacks 8/16-bit storage");
  }
  // Truncate=true rounds float32 -> float16 toward zero; the shader rounds to nearest.
  if (kc.attrs.b("Truncate") && src == DType::Float32 && dst == DType::Float16)
    return fallback_or_unimplemented(kc, src, "Truncate");
  check_indexable(kc, x.num_elements() * 2);
  if (x.num_elements() == 0) return;
  CastPush p{static_cast<uint32_t>(x.num_elements())};
  std::string shader = std::string("cast_") + s + "_" + d;
  Pipeline& pl = dev.pipeline(shader.c_str(), 2, sizeof(CastPush));
  dev.dispatch(pl, {x.buffer(), y.buffer()}, &p, groups_for(p.n));
}

}  // namespace

CAIRN_REGISTER_KERNEL("SelectV2", DeviceKind::Vulkan, select_kernel);
CAIRN_REGISTER_KERNEL("Cast", DeviceKind::Vulkan, cast_kernel);

}  // namespace cairn::gpu
