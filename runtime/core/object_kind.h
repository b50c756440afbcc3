// Kinds of tracked objects. One definition for the live object graph (runtime/track) and the
// checkpoint format (runtime/checkpoint), with the values of cairn_object_kind in the C header;
// pinned, never reordered.
#pragma once

#include <cstdint>

namespace cairn {

enum class ObjectKind : int32_t {
  Trackable = 1,
  Variable = 2,
  List = 3,
  Dict = 4,
  Module = 5,
  Optimizer = 6,  // reserved
  Layer = 7,      // reserved
  Iterator = 8,   // a dataset iterator (runtime/data/iterator_object.h)
};

// "trackable", "variable", "list", "dict", "module", "optimizer", "layer", "iterator"; "unknown"
// otherwise (a checkpoint may hold kinds this build does not know).
const char* object_kind_name(ObjectKind kind);
// Whether tf.Module's queries recurse into objects of this kind (modules and layers).
bool is_module_kind(ObjectKind kind);

}  // namespace cairn
