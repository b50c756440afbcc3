// Concrete inputs and attributes for every registered op, shared by the traced == eager tests on
// the CPU (traced_ops_test.cc) and on Vulkan (tests/gpu/traced_ops_compare_test.cc).
//
// The cases are gradcheck's (tests/runtime/autodiff/cases_*.cc: every op with a gradient, float64
// inputs), the Vulkan comparison tables' (tests/cases/compare_tables.h: large, empty, scalar and
// broadcast shapes for the elementwise ops, reductions and MatMul), and this library's own
// (op_cases.cc): the ops without a gradient (comparisons, logic, rounding, Cast, index outputs,
// FFT, Range, random draws) and special values (NaN, +-0, +-inf, halves) for the elementwise ops,
// which gradcheck keeps away from.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tests/runtime/autodiff/gradcheck.h"

namespace cairn::test {

struct OpCase {
  std::string op;     // the op this case covers (for the coverage checks)
  std::string label;  // what distinguishes it from the op's other cases
  std::vector<Tensor> inputs;
  OpFn fn;  // runs the op (with its attributes) on inputs, eagerly or while tracing
  // A random op with seeds 0,0: each call draws the context's next key, so two eager runs differ.
  // Such a case is checked by replaying on a context seeded like the eager one (see traced_check.h).
  bool fresh_draws = false;
  // Cases of one family run the same function (op and attributes); only their inputs differ. A
  // function with unknown dimensions traced on one of them must serve the others (traced_check.h).
  std::string family;
};

// Every case, as written (mostly float64; inputs on the CPU). Built on first use.
const std::vector<OpCase>& op_cases();

// Ops that cannot be traced, each with the reason. Their cases check that tracing still refuses
// them (so the list goes stale, and the test says so, the day one becomes traceable).
const std::map<std::string, std::string>& untraceable_ops();

enum class Variant {
  AsWritten,
  Float32,  // float64 inputs rounded to float32
  Int32,    // float64 inputs times 8, clipped to +-20000 and truncated to int32 (NaN -> 0)
};
const char* variant_name(Variant v);

// `c` with its float64 inputs converted; nullopt when it has none (the variant would repeat the
// case as written). Other inputs (indices, bools, complex) stay as they are.
std::optional<OpCase> variant_of(const OpCase& c, Variant v);

// The variants to run on a device: with float64 kernels (the CPU), the case as written and its
// float32 and int32 conversions; without (Vulkan), the conversions of a case with float64 inputs,
// or else the case as written. No int32 conversion when the op's first input cannot be int32.
// Cases with more than 50000 input elements run as float32 only (when they have float64 inputs).
std::vector<OpCase> variants(const OpCase& c, bool float64_kernels);

}  // namespace cairn::test
