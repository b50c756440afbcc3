// Object-based restore from TensorFlow bundles and TensorFlow-readable saves of Cairn checkpoints.
//
//   auto status = restore_tf(ckpt, "/data/run1");   // a prefix, or a directory with a `checkpoint` file
//   status->assert_consumed();
//   write_tf(ckpt, "/data/export/ckpt");           // ckpt.index + ckpt.data-00000-of-00001
//
// The bundle's `_CHECKPOINTABLE_OBJECT_GRAPH` is matched onto the checkpoint's live objects with
// Cairn's rules (checkpoint.h) after the Keras name mapping (keras_names.h); values come from the
// bundle (tf_bundle.h), each checked against its CRC32C as it is loaded. Name-based access to any
// bundle, TF1 ones included, is BundleReader itself.
#pragma once

#include <memory>
#include <string>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/checkpoint/tf_object_graph.h"

namespace cairn::tfckpt {

// A bundle as a restore source. Raises NotFound naming the prefix when the bundle has no object
// graph (a TF1 name-based checkpoint), DataLoss when the graph entry is not a string scalar or its
// bytes are not a TrackableObjectGraph.
std::shared_ptr<ckpt::ValueSource> bundle_source(std::shared_ptr<BundleReader> reader,
                                                 const TfRestoreOptions& options = {});

// Opens `prefix_or_dir` and restores `c` from it (Checkpoint::restore with bundle_source).
std::shared_ptr<ckpt::RestoreState> restore_tf(ckpt::Checkpoint& c, const std::string& prefix_or_dir,
                                               const TfRestoreOptions& options = {});

// Writes `c` as the bundle `<prefix>.index` + `<prefix>.data-00000-of-00001` (tf_snapshot's graph
// and values; the object graph under `_CHECKPOINTABLE_OBJECT_GRAPH`). Atomic as BundleWriter is.
void write_tf(ckpt::Checkpoint& c, const std::string& prefix, const TfSaveOptions& options = {});

}  // namespace cairn::tfckpt
