// Input checks shared by the layer implementations (not part of the public API).
#pragma once

#include "runtime/nn/layer.h"

namespace cairn::nn {

// InvalidArgument naming the layer unless `dtype` is floating.
void require_floating(const Layer& layer, DType dtype);
// InvalidArgument naming the layer unless a built layer's input fits `weight`: the same dtype, and
// `dim` (the input's contracted dimension, called `what` in the message) equal to the weight's
// input dimension (dimension 0 of a vector, -2 of a matrix or convolution kernel).
void require_built_for(const Layer& layer, const Variable& weight, DType dtype, int64_t dim, const Shape& input,
                       const char* what);

}  // namespace cairn::nn
