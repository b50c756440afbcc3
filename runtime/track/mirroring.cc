#include "runtime/track/mirroring.h"

#include "runtime/core/error.h"

namespace cairn {

MirrorScope::MirrorScope(const std::vector<Device*>& devices) : devices_(&devices), outer_(innermost_) {
  if (devices.empty()) raise(Code::Internal, "MirrorScope: no devices");
  innermost_ = this;
}

MirrorScope::~MirrorScope() { innermost_ = outer_; }

}  // namespace cairn
