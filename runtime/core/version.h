// The library's semantic version (cairn_version() returns it; checkpoints record it).
#pragma once

namespace cairn {
constexpr const char* kVersionString = "1.3.0";
}  // namespace cairn
