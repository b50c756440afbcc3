#include "runtime/core/object_kind.h"

namespace cairn {

const char* object_kind_name(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::Trackable: return "trackable";
    case ObjectKind::Variable: return "variable";
    case ObjectKind::List: return "list";
    case ObjectKind::Dict: return "dict";
    case ObjectKind::Module: return "module";
    case ObjectKind::Optimizer: return "optimizer";
    case ObjectKind::Layer: return "layer";
    case ObjectKind::Iterator: return "iterator";
  }
  return "unknown";
}

bool is_module_kind(ObjectKind kind) { return kind == ObjectKind::Module || kind == ObjectKind::Layer; }

}  // namespace cairn
