// Helpers for the layer tests: a fresh context (so default layer names start over), weight
// access by edge name, and setting weights to known values.
#pragma once

#include <string>
#include <vector>

#include "runtime/nn/layer.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// A new CPU context with its own name counters.
Ref<Context> fresh_context(uint64_t seed = 7);

// The layer's weight at edge `name`.
Variable& weight(const nn::Layer& layer, const std::string& name);
// Assigns `values` (converted to the weight's dtype) to the weight at edge `name`.
void set_weight(const nn::Layer& layer, const std::string& name, const std::vector<double>& values);

}  // namespace cairn::test
