// The cairn_strategy handle, shared by the Distribution section (capi/distribute.cc) and the
// multi-worker constructor beside the MPI calls (capi/mpi.cc).
#pragma once

#include <string>
#include <vector>

#include "runtime/distribute/strategy.h"

struct cairn_strategy {
  cairn::Ref<cairn::distribute::MirroredStrategy> s;
  std::vector<std::string> names;  // this process's replicas' devices, handed out by cairn_strategy_device
};
