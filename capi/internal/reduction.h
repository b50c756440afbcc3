// cairn_reduction to the runtime's Reduction, for the mirrored strategy's and MPI's entry points.
#pragma once

#include "capi/internal/handles.h"
#include "runtime/distribute/collective.h"

namespace cairn::capi {

// InvalidArgument naming `fn` for a value outside the enum.
inline distribute::Reduction reduction_of(cairn_reduction r, const char* fn) {
  const int32_t v = enum_bits(r);
  if (v < CAIRN_REDUCE_SUM || v > CAIRN_REDUCE_MAX)
    raise(Code::InvalidArgument, "{}: unknown reduction {} (expected CAIRN_REDUCE_SUM, _MEAN, _MIN or _MAX)", fn, v);
  return static_cast<distribute::Reduction>(v);  // the same values
}

}  // namespace cairn::capi
