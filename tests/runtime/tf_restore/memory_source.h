// A ValueSource held in memory for the restore tests: a graph, values by key, and optional
// translations (slot names, live values kept).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/checkpoint/value_source.h"
#include "runtime/core/error.h"

namespace cairn::test {

class MemorySource final : public ckpt::ValueSource {
 public:
  std::string name = "memory";
  ckpt::ObjectGraph g;
  std::map<std::string, Tensor, std::less<>> values;
  std::map<std::string, std::string> slot_names;       // stored -> live
  std::vector<std::pair<uint32_t, std::string>> kept;  // (node, edge)

  const std::string& path() const override { return name; }
  const ckpt::ObjectGraph& graph() const override { return g; }
  std::optional<ckpt::ValueInfo> info(std::string_view key) const override {
    auto it = values.find(key);
    if (it == values.end()) return std::nullopt;
    return ckpt::ValueInfo{it->second.dtype(), it->second.shape()};
  }
  Tensor load(std::string_view key, Device&) const override {
    auto it = values.find(key);
    if (it == values.end()) raise(Code::NotFound, "{}: no {}", name, key);
    return it->second;
  }
  std::string slot_name(const SlotOwner&, const std::string& stored) const override {
    auto it = slot_names.find(stored);
    return it == slot_names.end() ? stored : it->second;
  }
  bool keeps_live_value(uint32_t node, std::string_view edge) const override {
    for (auto& [n, e] : kept)
      if (n == node && e == edge) return true;
    return false;
  }
};

}  // namespace cairn::test
