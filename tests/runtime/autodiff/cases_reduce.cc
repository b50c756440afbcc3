// Finite-difference cases for runtime/autodiff/reduce_grad.cc: Max, Min, Prod over axis lists
// (with and without keep_dims), and Cumsum in its exclusive/reverse variants.
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

struct AxesVariant {
  std::string label;
  std::vector<int64_t> axis;
  bool keep_dims;
};

const std::vector<AxesVariant>& axes_variants() {
  static const std::vector<AxesVariant> v = {
      {"all axes", {}, false},          {"all axes keep_dims", {}, true}, {"axis 0", {0}, false},
      {"axis -1 keep_dims", {-1}, true}, {"axes 0 and 2", {0, 2}, false}, {"axes 2 and 1 keep_dims", {2, 1}, true},
  };
  return v;
}

OpFn reduce_fn(const char* name, const AxesVariant& v) {
  return op_fn(name, {a_ints("axis", v.axis), a_bool("keep_dims", v.keep_dims)});
}

std::vector<GradCase> extremum_cases() {
  std::vector<GradCase> out;
  for (const char* name : {"Max", "Min"}) {
    for (const AxesVariant& v : axes_variants())
      out.push_back({name, v.label, {uniform({2, 3, 4}, -3, 3)}, reduce_fn(name, v)});
    // A tie between two elements: the central difference sees half the slope on each, which is
    // exactly the even share TF gives ties.
    const double tie = std::string(name) == "Max" ? 2.5 : -2.5;
    out.push_back({name, "tie of two", {f64({0.3, tie, -1.0, tie, 1.1, -0.4}, {2, 3})},
                   reduce_fn(name, {"", {}, false})});
    out.push_back({name, "ties along axis 1", {f64({tie, 0.2, tie, -0.5, 0.7, 0.1}, {2, 3})},
                   reduce_fn(name, {"", {1}, false})});
  }
  return out;
}

std::vector<GradCase> prod_cases() {
  std::vector<GradCase> out;
  for (const AxesVariant& v : axes_variants()) {
    // Both signs, magnitudes near 1 so that products of 24 stay moderate.
    std::vector<double> x = as_doubles(uniform({2, 3, 4}, 0.5, 1.5));
    for (size_t i = 0; i < x.size(); i += 3) x[i] = -x[i];
    out.push_back({"Prod", v.label, {f64(x, {2, 3, 4})}, reduce_fn("Prod", v)});
  }
  // Rows with no zero, one zero and two zeros: the one zero's gradient is the product of the rest;
  // every other element of a row with a zero has gradient 0 (or, with two zeros, all do).
  Tensor rows = f64({1.5, -2, 0.5, 3,  //
                     1.5, 0, 0.5, -3,  //
                     0, 2, 0, 1.25},
                    {3, 4});
  out.push_back({"Prod", "zeros along axis 1", {rows}, reduce_fn("Prod", {"", {1}, false})});
  out.push_back({"Prod", "zeros along axis 0 keep_dims", {rows}, reduce_fn("Prod", {"", {0}, true})});
  out.push_back({"Prod", "one zero over all", {f64({1.2, -0.8, 0, 1.1, 0.9, -1.3}, {2, 3})}, reduce_fn("Prod", {"", {}, false})});
  out.push_back({"Prod", "scalar", {f64({-1.7}, {})}, reduce_fn("Prod", {"", {}, false})});
  return out;
}

std::vector<GradCase> cumsum_cases() {
  std::vector<GradCase> out;
  for (bool exclusive : {false, true})
    for (bool reverse : {false, true}) {
      std::string label = std::string(exclusive ? "exclusive" : "inclusive") + (reverse ? " reverse" : "");
      auto attrs = [&](int64_t axis) {
        return op_fn("Cumsum", {a_int("axis", axis), a_bool("exclusive", exclusive), a_bool("reverse", reverse)});
      };
      out.push_back({"Cumsum", label + " 1-d", {uniform({5})}, attrs(0)});
      out.push_back({"Cumsum", label + " axis 1", {uniform({2, 3, 4})}, attrs(1)});
      out.push_back({"Cumsum", label + " axis -1", {uniform({3, 4})}, attrs(-1)});
    }
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(extremum_cases);
CAIRN_GRAD_CASES(prod_cases);
CAIRN_GRAD_CASES(cumsum_cases);

}  // namespace cairn::test
