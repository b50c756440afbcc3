#include "runtime/cpu/elementwise.h"

namespace cairn {

void throw_unsupported_dtype(const KernelContext& kc, DType t) {
  raise(Code::Unimplemented, "{}: no {} kernel for dtype {}", kc.op(), kc.device.name(), dtype_name(t));
}

}  // namespace cairn
