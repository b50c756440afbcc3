// An owning copy of one call's resolved attributes. Attrs borrow their arrays and strings from the
// caller for one eager call; whatever outlives the call (a gradient tape's record, a captured graph
// node) keeps an AttrStore instead.
#pragma once

#include <memory>
#include <vector>

#include "runtime/ops/op_def.h"

namespace cairn {

class AttrStore {
 public:
  explicit AttrStore(const Attrs& attrs);
  AttrStore(AttrStore&&) = default;  // the owned arrays stay put, so the pointers stay valid
  AttrStore& operator=(AttrStore&&) = default;
  AttrStore(const AttrStore&) = delete;
  AttrStore& operator=(const AttrStore&) = delete;

  const Attrs& attrs() const { return attrs_; }
  const OpDef& def() const { return attrs_.def(); }

 private:
  Attrs attrs_;
  std::vector<std::unique_ptr<int64_t[]>> ints_;
  std::vector<std::unique_ptr<double[]>> floats_;
  std::vector<std::unique_ptr<char[]>> strings_;
};

}  // namespace cairn
