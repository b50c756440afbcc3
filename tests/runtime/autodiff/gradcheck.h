// Gradient checking against central finite differences in float64.
//
// A case names the op it covers, the inputs to start from, and a function that runs the op (with
// its attributes) on inputs and returns the outputs. The checker draws a random weight w per
// output element, takes L = sum_k sum(w_k * output_k), and compares dL/dx from the tape with
// (L(x + h) - L(x - h)) / 2h for every element of every differentiable input.
//
// Cases register from static initializers (CAIRN_GRAD_CASE) in the cases_*.cc files linked into
// gradcheck_test, which also checks that every op with a gradient has at least one case.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/eager/context.h"
#include "runtime/eager/dispatch.h"
#include "runtime/ops/registry.h"
#include "runtime/tensor/tensor.h"

namespace cairn::test {

using OpFn = std::function<std::vector<Tensor>(Context&, const std::vector<Tensor>&)>;

struct GradCase {
  std::string op;      // the op this case covers (for the coverage check)
  std::string label;   // what distinguishes it from the op's other cases
  std::vector<Tensor> inputs;
  OpFn fn;
  // Inputs to differentiate; empty means every floating input.
  std::vector<int> wrt = {};
  double tolerance = 1e-6;  // on |analytic - numeric| / max(1, |numeric|)
  double step = 1e-6;
};

std::vector<GradCase>& grad_cases();
struct GradCaseRegistration {
  explicit GradCaseRegistration(std::function<std::vector<GradCase>()> make);
};
#define CAIRN_GRAD_CASES(fn) \
  static const ::cairn::test::GradCaseRegistration CAIRN_CONCAT(cairn_grad_cases_, __COUNTER__)(fn)

// A float64 tensor of `shape` with values drawn uniformly from [lo, hi) (deterministic per call
// order), or with explicit values.
Tensor uniform(const Shape& shape, double lo = -1, double hi = 1);
Tensor f64(const std::vector<double>& values, const Shape& shape);
// An attribute that owns its value, for building cases.
struct CaseAttr {
  std::string name;
  AttrKind kind = AttrKind::Int;
  int64_t i = 0;
  double f = 0;
  DType dtype = DType::Invalid;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  NamedAttr named() const;
};
CaseAttr a_int(std::string name, int64_t v);
CaseAttr a_bool(std::string name, bool v);
CaseAttr a_float(std::string name, double v);
CaseAttr a_dtype(std::string name, DType v);
CaseAttr a_str(std::string name, std::string v);
CaseAttr a_ints(std::string name, std::vector<int64_t> v);

// Runs op `name` with `attrs` on the inputs (the common case of a GradCase::fn).
OpFn op_fn(std::string name, std::vector<CaseAttr> attrs = {});

// The largest error found (0 when everything matched), and a description of the worst element.
struct GradReport {
  double max_error = 0;
  std::string worst;
};
GradReport check_gradient(Context& ctx, const GradCase& c);

}  // namespace cairn::test
