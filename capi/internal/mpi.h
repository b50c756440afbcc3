// The C API's cairn_mpi handle (capi/mpi.cc), shared with the checkpoint manager, which can shard
// its saves over one (capi/checkpoint.cc).
#pragma once

#include "runtime/distribute/mpi_collective.h"
#include "runtime/eager/context.h"

struct cairn_mpi {
  cairn::Ref<cairn::Context> ctx;
  cairn::Ref<cairn::distribute::MpiCollective> group;
};
