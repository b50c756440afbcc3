// Input checks shared by the layer implementations (not part of the public API).
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/nn/layer.h"

namespace cairn::nn {

// InvalidArgument naming the layer unless `dtype` is floating.
void require_floating(const Layer& layer, DType dtype);
// InvalidArgument naming the layer unless a built layer's input fits `weight`: the same dtype, and
// `dim` (the input's contracted dimension, called `what` in the message) equal to the weight's
// input dimension (dimension 0 of a vector, -2 of a matrix or convolution kernel).
void require_built_for(const Layer& layer, const Variable& weight, DType dtype, int64_t dim, const Shape& input,
                       const char* what);

// An initializer as a layer config's value: {"class_name": "glorot_uniform", "config": {...}} with
// only the fields its kind uses (and "seed" when set); and back (InvalidArgument naming `where`).
nlohmann::json initializer_config(const Initializer& init);
Initializer initializer_from_config(const nlohmann::json& config, std::string_view where);

}  // namespace cairn::nn
