// Where a restore takes its object graph and values from. RestoreState (checkpoint.h) matches the
// graph of any ValueSource onto live objects with the same rules: Cairn's own checkpoint files
// (reader_source) and TensorFlow bundles (tf_object_graph.h) are two sources.
//
// A source is safe to read from several threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/checkpoint/format.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/tensor/tensor.h"
#include "runtime/track/slots.h"

namespace cairn::ckpt {

// What a value is, before it is loaded (dtype DType::String for string values).
struct ValueInfo {
  DType dtype = DType::Invalid;
  Shape shape;
};

class ValueSource {
 public:
  virtual ~ValueSource();

  // The file (or prefix) the values come from, for messages.
  virtual const std::string& path() const = 0;
  // The object graph to match; nodes[0] is the root. Its attribute keys name values of this source.
  virtual const ObjectGraph& graph() const = 0;
  // The value's dtype and shape, or nullopt when the source has no value named `key`.
  virtual std::optional<ValueInfo> info(std::string_view key) const = 0;
  // The value of a non-string key as a tensor on `device`. NotFound for a missing key; DataLoss for
  // a damaged value; InvalidArgument for a string value.
  virtual Tensor load(std::string_view key, Device& device) const = 0;
  // load, but may decode into `spare` instead of allocating: a host tensor on `device` of the
  // value's dtype and shape whose buffer nobody else holds (SpareBuffers). Default: load.
  virtual Tensor load_reusing(std::string_view key, Device& device, Tensor spare) const {
    (void)spare;
    return load(key, device);
  }

  // ---- Translations for graphs written by other libraries (defaults: none) ----

  // The name under which `owner` keeps the slot that the graph calls `stored` (a SlotRef's
  // slot_name). A source whose slot names depend on the owner's kind (Keras keeps Adam's m in a
  // list called "_momentums") translates here.
  virtual std::string slot_name(const SlotOwner& owner, const std::string& stored) const {
    (void)owner;
    return stored;
  }
  // True when the live child at edge `edge` of the object matched to `node` is expected to have no
  // value in this source and keeps its own (Keras keeps Adam's beta_1 in the optimizer's config,
  // not in checkpoints). Such a child counts as matched for assert_consumed.
  virtual bool keeps_live_value(uint32_t node, std::string_view edge) const {
    (void)node;
    (void)edge;
    return false;
  }
};

// A Cairn checkpoint file as a value source.
std::shared_ptr<ValueSource> reader_source(std::shared_ptr<Reader> reader);
// A sharded checkpoint (shard_index.h) as a value source: each value from the shard holding it.
std::shared_ptr<ValueSource> sharded_source(std::shared_ptr<ShardedReader> reader);

}  // namespace cairn::ckpt
