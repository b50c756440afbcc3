// Slot variables: variables an object (an optimizer) keeps for another variable, such as Adam's m
// and v. They are not edges of the owner. A checkpoint saves a slot only when both its variable and
// its owner are saved, under "<variable path>/.OPTIMIZER_SLOT/<owner path>/<slot name>", and
// restores a slot created after the restore the moment it is created (TensorFlow's rule).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/track/variable.h"

namespace cairn {

class SlotOwner {
 public:
  virtual ~SlotOwner() = default;
  // The slots held for `variable`, as (slot name, slot variable), in creation order.
  virtual std::vector<std::pair<std::string, Ref<Variable>>> slots_for(const Variable& variable) const = 0;
  // Applies `restore` to the slot `slot_name` of `variable`: now when it exists, otherwise when it
  // is created. A later call for the same slot replaces an earlier pending one.
  virtual void restore_slot(const Variable& variable, const std::string& slot_name,
                            std::function<void(Variable&)> restore) = 0;
};

}  // namespace cairn
