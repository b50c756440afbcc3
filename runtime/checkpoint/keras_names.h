// Keras' object graphs onto Cairn's layers and optimizers (docs/tf_checkpoints.md has the table).
//
// Reading: map_keras_graph rewrites the object graph of a TensorFlow checkpoint written by Keras 3
// (TF 2.16 and later) or Keras 2 (tf_keras) so that its edges carry Cairn's names; RestoreState
// then matches it as any other graph. Only structure is followed, never the key strings: a Keras
// optimizer is a node with an "_iterations" edge, a Keras 3 Sequential a node whose "_functional"
// edge leads to "_operations", a Keras 2 Sequential a node with "layer-N" edges. Everything the
// rules do not recognise is left as it is (a tf.Module's graph needs no mapping).
//
// Writing: keras_graph turns the graph Cairn would save for a checkpoint into the one Keras 3
// saves for the equivalent model and optimizer, so TensorFlow restores it into Keras objects.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "runtime/checkpoint/format.h"
#include "runtime/track/object.h"
#include "runtime/track/slots.h"

namespace cairn::tfckpt {

// What map_keras_graph found, for the value source built on the mapped graph.
struct KerasMapping {
  // Keras optimizers: their live edges other than "iter" and "learning_rate" (Cairn's beta_1,
  // epsilon, ... which Keras keeps in the optimizer's config) keep their live values.
  std::set<uint32_t> optimizer_nodes;
};

// The shape of a value by key, or nullopt (pairs Keras 2's slot lists with variables).
using ShapeOf = std::function<std::optional<Shape>(const std::string& key)>;

// Rewrites `g` in place (see above); returns what it found.
KerasMapping map_keras_graph(ckpt::ObjectGraph& g, const ShapeOf& shape_of);

// The Cairn slot name of a Keras slot list ("_momentums" is Adam's "m" but SGD's "momentum") for
// the live slot owner; names that are not Keras slot lists pass unchanged.
std::string cairn_slot_name(const SlotOwner& owner, const std::string& stored);

// True when `edge` of a live Keras optimizer (mapped node in `m.optimizer_nodes`) keeps its value.
bool keras_keeps_live_value(const KerasMapping& m, uint32_t node, std::string_view edge);

// Writing. Rewrites `g`, the graph Cairn saves (Checkpoint::snapshot, slot nodes after the walk's),
// into Keras 3's layout; `objects[i]` is the live object of node i for the walk's nodes. A
// Sequential gets "_functional/_operations" (item 0 an empty InputLayer node), Dense's kernel
// becomes "_kernel", an optimizer gets "_iterations", "_learning_rate", "_trainable_variables",
// "_variables" and the slot lists in place of its hyperparameter edges and SlotRefs. Variables are
// ordered for the slot lists as Keras' model.trainable_variables orders them. Nodes no longer
// reachable are left for the caller to prune. (Dense and Conv2D's kernel become "_kernel",
// Embedding's "_embeddings", as in Keras 3.)
void to_keras_graph(ckpt::ObjectGraph& g, const std::vector<Ref<Object>>& objects);

}  // namespace cairn::tfckpt
