// cairn_feature_spec arrays as the runtime's io::FeatureSpec (capi/example.cc), shared by batched
// parsing and cairn_dataset_parse_example.
#pragma once

#include <vector>

#include "cairn/cairn.h"
#include "runtime/eager/context.h"
#include "runtime/io/example.h"

namespace cairn::capi {

// `n_specs` specs (stride: element 0's struct_size); errors name `fn` and the spec index. Default
// values are copied to the host.
std::vector<io::FeatureSpec> read_feature_specs(Context& ctx, const cairn_feature_spec* specs, size_t n_specs,
                                                const char* fn);

}  // namespace cairn::capi
