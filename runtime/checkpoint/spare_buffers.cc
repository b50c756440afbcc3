#include "runtime/checkpoint/spare_buffers.h"

#include <atomic>

namespace cairn::ckpt {

namespace {
std::atomic<uint64_t> g_reused_bytes{0};

// Whether the restore holds the only reference to `t`'s buffer, which is ordinary host memory of
// `t`'s device (not borrowed: a mapped file may be read-only).
bool private_host_buffer(const Tensor& t) {
  const Buffer* b = t.buffer();
  return b && b->device->is_host() && !b->free_borrowed && b->refs.load(std::memory_order_acquire) == 1;
}
}  // namespace

uint64_t SpareBuffers::reused_bytes() { return g_reused_bytes.load(std::memory_order_relaxed); }

void SpareBuffers::expect(DType dtype, int64_t elements, size_t nbytes) {
  if (nbytes >= kMinBytes) ++slots_[{dtype, elements}].expected;
}

Tensor SpareBuffers::take(DType dtype, const Shape& shape, Device& device) {
  auto it = slots_.find({dtype, shape.num_elements()});
  if (it == slots_.end()) return Tensor();
  Slot& slot = it->second;
  if (slot.expected > 0) --slot.expected;
  if (!slot.spare.valid() || slot.spare.device() != &device) return Tensor();
  Tensor spare = std::move(slot.spare);
  slot.spare = Tensor();
  g_reused_bytes.fetch_add(spare.nbytes(), std::memory_order_relaxed);
  return spare.shape() == shape ? spare : spare.reshaped(shape);
}

void SpareBuffers::give(Tensor replaced) {
  if (!replaced.valid() || replaced.nbytes() < kMinBytes) return;
  auto it = slots_.find({replaced.dtype(), replaced.num_elements()});
  if (it == slots_.end() || it->second.expected == 0 || it->second.spare.valid()) return;
  if (private_host_buffer(replaced)) it->second.spare = std::move(replaced);
}

}  // namespace cairn::ckpt
