#include "runtime/ops/attr_store.h"

#include <algorithm>

namespace cairn {

AttrStore::AttrStore(const Attrs& attrs) : attrs_(attrs) {
  for (size_t i = 0; i < attrs.def().attrs.size(); ++i) {
    AttrValue& v = attrs_.at(static_cast<int>(i));
    if (v.n_ints > 0) {
      ints_.emplace_back(new int64_t[v.n_ints]);
      std::copy(v.ints, v.ints + v.n_ints, ints_.back().get());
      v.ints = ints_.back().get();
    }
    if (v.n_floats > 0) {
      floats_.emplace_back(new double[v.n_floats]);
      std::copy(v.floats, v.floats + v.n_floats, floats_.back().get());
      v.floats = floats_.back().get();
    }
    if (!v.s.empty()) {
      strings_.emplace_back(new char[v.s.size()]);
      std::copy(v.s.begin(), v.s.end(), strings_.back().get());
      v.s = std::string_view(strings_.back().get(), v.s.size());
    }
  }
}

}  // namespace cairn
