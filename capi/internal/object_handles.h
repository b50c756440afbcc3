// The structs behind the object graph's C handles (cairn_object, cairn_object_array), for every
// capi/ file that hands objects across the boundary (objects.cc, the checkpoint API).
#pragma once

#include <string>
#include <vector>

#include "capi/internal/handles.h"
#include "runtime/track/track.h"

// One reference to an object. Immutable after creation, so one handle may be used from several
// threads (but freed by one).
struct cairn_object {
  cairn::Ref<cairn::Object> obj;
};

struct cairn_object_array {
  std::vector<cairn_object> items;  // lent to the caller by cairn_object_array_get
  std::vector<std::string> paths;   // same length as items
};

namespace cairn::capi {

// New handle holding one reference to `o`; the caller hands it to the user.
inline cairn_object* new_object(Ref<Object> o) { return new cairn_object{std::move(o)}; }

// Throws InvalidArgument "<fn>: <what> is NULL" for NULL, "<fn>: <what> is a dict, expected a
// list" when the object is not of `kind`.
Object& require_kind(const cairn_object* h, ObjectKind kind, const char* fn, const char* what);

// The object behind a handle as a T (a dynamic type check), or InvalidArgument naming `what`.
template <class T>
T& require_as(const cairn_object* h, const char* fn, const char* what, const char* expected) {
  require(h, fn, what);
  T* p = dynamic_cast<T*>(h->obj.get());
  if (!p) raise(Code::InvalidArgument, "{}: {} is {}, expected {}", fn, what, h->obj->describe(), expected);
  return *p;
}

}  // namespace cairn::capi
