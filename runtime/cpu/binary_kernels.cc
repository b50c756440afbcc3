// CPU kernels for the binary arithmetic ops in ops/binary_ops.cc; the functors are in elementwise_ops.h.
#include "runtime/cpu/elementwise_ops.h"
#include "runtime/ops/registry.h"

namespace cairn {
namespace {

#define CAIRN_REGISTER_BINARY(name, step, F, ...) CAIRN_REGISTER_KERNEL(name, DeviceKind::CPU, binary_kernel<F>);
CAIRN_FUSIBLE_BINARY_OPS(CAIRN_REGISTER_BINARY)
#undef CAIRN_REGISTER_BINARY
CAIRN_REGISTER_KERNEL("FloorDiv", DeviceKind::CPU, binary_kernel<FloorDivF>);
CAIRN_REGISTER_KERNEL("FloorMod", DeviceKind::CPU, binary_kernel<FloorModF>);

}  // namespace
}  // namespace cairn
