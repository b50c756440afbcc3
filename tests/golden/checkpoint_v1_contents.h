// What tests/golden/checkpoint_v1.cairn holds: the generator writes these values, and the golden
// test reads the committed file and compares against them (plus literal spot checks of its own).
// The committed file never changes; a later format version adds checkpoint_v2.* beside it.
#pragma once

#include <vector>

#include "runtime/checkpoint/writer.h"

namespace cairn::golden {

// Every entry but _CHECKPOINTABLE_OBJECT_GRAPH: one or more per dtype, compressible and not.
std::vector<ckpt::SaveEntry> checkpoint_v1_entries(Device& cpu);
ckpt::ObjectGraph checkpoint_v1_graph();
ckpt::Metadata checkpoint_v1_metadata();
// Written with compression on.
ckpt::WriteOptions checkpoint_v1_options();

}  // namespace cairn::golden
