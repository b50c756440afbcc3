// Inline part of dataset.h.
#pragma once

#include <utility>

#include "runtime/core/error.h"

namespace cairn::data {

template <class F>
auto with_element_context(std::string_view who, int64_t index, F&& fn) -> decltype(fn()) {
  try {
    return std::forward<F>(fn)();
  } catch (const Error& e) {
    const Code code = e.code() == Code::OutOfRange ? Code::InvalidArgument : e.code();
    raise(code, "{} (element {}): {}", who, index, e.what());
  }
}

}  // namespace cairn::data
