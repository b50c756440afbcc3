// A sample traced function for graph checks: a while loop whose body holds a cond (Collatz steps),
// capturing a tensor from two levels up, a captured constant, and a variable read and written.
#pragma once

#include "runtime/graph/function.h"

namespace cairn::test {

// The function, traced once (called on int32 scalars 6 and 0).
Ref<graph::Function> graph_sample(Context& c);

}  // namespace cairn::test
