// TensorFlow's object graph (TrackableObjectGraph, runtime/io/proto/trackable_object_graph.proto)
// in and out of Cairn's ckpt::ObjectGraph, so a TF2 checkpoint's graph is matched onto live objects
// by the same RestoreState as Cairn's own files (deferred restore, assert_consumed,
// expect_partial, slots). The Keras name mapping on top is keras_names.h; bundles are tf_bundle.h.
//
// Conversion: ObjectReference {node_id, local_name} -> ChildEdge {name, node_id};
// SerializedTensor {name, full_name, checkpoint_key} -> Attribute {name, key} (full_name is kept
// aside, for messages and for writing); SlotVariableReference {original_variable_node_id,
// slot_name, slot_variable_node_id} on node N -> SlotRef {N, variable, slot_name, slot}. TF nodes
// carry no kind: Node::kind is 0. registered_saver is refused (Cairn has none of TF's registered
// savers), has_checkpoint_values is recomputed on writing.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/keras_names.h"
#include "runtime/checkpoint/value_source.h"

namespace cairn::tfckpt {

// The key of the serialized graph in a bundle (the same as Cairn's: ckpt::kObjectGraphKey).
constexpr std::string_view kObjectGraphKey = ckpt::kObjectGraphKey;

struct TfObjectGraph {
  ckpt::ObjectGraph graph;
  // full_names[node][i] is the full_name of graph.nodes[node].attributes[i].
  std::vector<std::vector<std::string>> full_names;
};

// Parses the bytes of a TrackableObjectGraph. Raises DataLoss naming `what` and the node for bytes
// that are not one: a malformed wire encoding, a node id out of range, an empty graph, a
// registered saver. Never allocates more than the bytes justify.
TfObjectGraph parse_trackable_object_graph(std::string_view bytes, std::string_view what);

// The bytes of `g` as a TrackableObjectGraph; `full_names` as above (missing entries are empty).
// Sets has_checkpoint_values on every node: true when the node, a descendant or a slot of it
// holds a value (TensorFlow skips the subtrees marked false when it restores).
std::string serialize_trackable_object_graph(const TfObjectGraph& g);

struct TfRestoreOptions {
  // Map Keras' edge names onto Cairn's layers and optimizers (keras_names.h). Without it the graph
  // is matched as TensorFlow wrote it (a tf.Module's graph needs nothing else).
  bool keras_names = true;
};

// A value source over TensorFlow's object graph `graph` whose values come from `values` (a bundle;
// the graph of `values` itself is not used). Beyond the Keras mapping, one TensorFlow rule:
// tf.train.Checkpoint.write saves no "save_counter", so when the graph's root has none the live
// one keeps its value.
std::shared_ptr<ckpt::ValueSource> tf_graph_source(TfObjectGraph graph, std::shared_ptr<ckpt::ValueSource> values,
                                                   const TfRestoreOptions& options = {});

struct TfSaveOptions {
  // Lay the graph out as Keras 3 does (keras_names.h), so tf.train.Checkpoint(model=<the Keras
  // equivalent>, optimizer=...) restores it. Without it the graph keeps Cairn's edge names (what a
  // tf.Module with the same attributes restores).
  bool keras_names = true;
  // Save the checkpoint's save_counter. tf.train.Checkpoint.restore creates a live save_counter,
  // so TensorFlow's assert_consumed fails on a bundle without one (as on TF's own write());
  // leave it out only for a reader that does not expect it.
  bool save_counter = true;
};

// What a TensorFlow bundle of checkpoint `c` holds: TensorFlow's object graph and the values under
// the keys TensorFlow would give them (each value's first breadth-first path, local names escaped
// as TensorFlow escapes them: "." -> "..", "/" -> ".S"; slots under ".OPTIMIZER_SLOT").
struct TfSnapshot {
  TfObjectGraph graph;
  std::vector<std::pair<std::string, Tensor>> values;  // sorted by key
};
TfSnapshot tf_snapshot(ckpt::Checkpoint& c, const TfSaveOptions& options = {});

// TensorFlow's escaping of one edge name in a checkpoint key.
std::string escape_local_name(std::string_view name);

}  // namespace cairn::tfckpt
