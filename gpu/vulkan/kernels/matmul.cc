// MatMul / BatchMatMulV2: on GPUs the tiled shared-memory shader (matmul.comp), on CPU devices
// (lavapipe) the register-blocked one without barriers (matmul_direct.comp). Batch dimensions
// either match the output's or are all 1 (shared by every batch); other broadcasts fall back.
#include "gpu/vulkan/kernels/kernel_util.h"
#include "gpu/vulkan/kernels/push.h"
#include "runtime/tensor/tensor.h"

namespace cairn::gpu {

namespace {

constexpr uint32_t kTile = 64;  // BM = BN in matmul.comp
// matmul_direct.comp on CPU devices: 16 rows x 8 columns per invocation (64 invocations cover
// 16 x 512 of C). Measured on lavapipe (2 cores): 16x8 and 24x8 both reach 6-8 GFLOP/s at 512 and
// 1024; 16 rows keep more workgroups for small m. The 64x64 shared-memory tile reaches ~2 there.
constexpr uint32_t kDirectRows = 16, kDirectCols = 8;

int64_t batch_of(const Shape& s) {
  int64_t b = 1;
  for (int d = 0; d < s.rank() - 2; ++d) b *= s[d];
  return b;
}

// The element stride between batches of `s` in an output with `out_batch` batches, or -1 when
// the operand broadcasts in a way a single stride cannot express.
int64_t batch_stride(const Shape& s, const Shape& out, int64_t out_batch) {
  int64_t b = batch_of(s), mat = s[s.rank() - 1] * s[s.rank() - 2];
  if (b == 1) return out_batch == 1 ? mat : 0;
  if (b != out_batch) return -1;
  // Same count: the dims must line up with the output's (right-aligned), not just multiply out.
  int off = out.rank() - s.rank();
  for (int d = 0; d < s.rank() - 2; ++d)
    if (s[d] != out[d + off]) return -1;
  return mat;
}

void matmul_kernel(KernelContext& kc) {
  const Tensor& a = kc.input(0);
  const Tensor& b = kc.input(1);
  Tensor& c = kc.output(0);
  DType dt = a.dtype();
  if (!has_variant(kc, dt)) return;
  for (const Tensor* t : {&a, &b, static_cast<const Tensor*>(&c)}) check_indexable(kc, t->num_elements());
  if (c.num_elements() == 0) return;
  const Shape& cs = c.shape();
  int64_t batch = batch_of(cs);
  int64_t sa = batch_stride(a.shape(), cs, batch), sb = batch_stride(b.shape(), cs, batch);
  if (sa < 0 || sb < 0) return fallback_or_unimplemented(kc, dt, "batch dimensions broadcast partially");
  if (batch > 65535) return fallback_or_unimplemented(kc, dt, "more than 65535 batches");
  bool ta = kc.attrs.b("transpose_a"), tb = kc.attrs.b("transpose_b");
  const Shape& as = a.shape();
  MatMulPush p{};
  p.m = static_cast<uint32_t>(cs[cs.rank() - 2]);
  p.n = static_cast<uint32_t>(cs[cs.rank() - 1]);
  p.k = static_cast<uint32_t>(ta ? as[as.rank() - 2] : as[as.rank() - 1]);
  p.a_batch_stride = static_cast<uint32_t>(sa);
  p.b_batch_stride = static_cast<uint32_t>(sb);
  p.transpose_a = ta;
  p.transpose_b = tb;
  VulkanDevice& dev = vulkan(kc.device);
  // The shaders read A and B as empty when k == 0 (the product is all zeros).
  if (dev.matmul_direct()) {
    Pipeline& pl = dev.pipeline(variant("matmul_direct", dt).c_str(), 3, sizeof(MatMulPush),
                                {0, kDirectRows, kDirectCols});
    dev.dispatch(pl, {a.buffer(), b.buffer(), c.buffer()}, &p, (p.n + 64 * kDirectCols - 1) / (64 * kDirectCols),
                 (p.m + kDirectRows - 1) / kDirectRows, static_cast<uint32_t>(batch));
    return;
  }
  Pipeline& pl = dev.pipeline(variant("matmul", dt).c_str(), 3, sizeof(MatMulPush), {0, dev.matmul_bk()});
  dev.dispatch(pl, {a.buffer(), b.buffer(), c.buffer()}, &p, (p.n + kTile - 1) / kTile, (p.m + kTile - 1) / kTile,
               static_cast<uint32_t>(batch));
}

}  // namespace

CAIRN_REGISTER_KERNEL("MatMul", DeviceKind::Vulkan, matmul_kernel);

}  // namespace cairn::gpu
