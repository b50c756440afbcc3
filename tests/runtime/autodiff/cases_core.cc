// Finite-difference cases for the core arithmetic, MatMul, Sum/Mean, Reshape and softmax gradients.
#include "tests/runtime/autodiff/gradcheck.h"

namespace cairn::test {
namespace {

std::vector<GradCase> binary_cases() {
  std::vector<GradCase> out;
  for (const char* name : {"Add", "Sub", "Mul", "RealDiv"}) {
    double lo = std::string(name) == "RealDiv" ? 0.5 : -1;  // keep divisors away from zero
    out.push_back({name, "same shape", {uniform({2, 3}), uniform({2, 3}, lo, 2)}, op_fn(name)});
    out.push_back({name, "broadcast", {uniform({2, 1, 3}), uniform({4, 1}, lo, 2)}, op_fn(name)});
    out.push_back({name, "scalar", {uniform({3}), uniform({}, lo, 2)}, op_fn(name)});
  }
  out.push_back({"AddN", "three", {uniform({2, 2}), uniform({2, 2}), uniform({2, 2})}, op_fn("AddN")});
  return out;
}

std::vector<GradCase> unary_cases() {
  std::vector<GradCase> out;
  for (const char* name : {"Identity", "Neg", "Square", "Exp", "Tanh", "Sigmoid"})
    out.push_back({name, "", {uniform({3, 2})}, op_fn(name)});
  out.push_back({"Log", "", {uniform({3, 2}, 0.2, 3)}, op_fn("Log")});
  // Keep Relu's inputs away from the kink at 0.
  out.push_back({"Relu", "", {f64({-1.5, -0.3, 0.2, 0.9, 2.0, -0.7}, {2, 3})}, op_fn("Relu")});
  out.push_back({"Cast", "float64 -> float64", {uniform({3})}, op_fn("Cast", {a_dtype("DstT", DType::Float64)})});
  return out;
}

std::vector<GradCase> linalg_cases() {
  std::vector<GradCase> out;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      out.push_back({"MatMul", std::string("ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0"),
                     {uniform(ta ? Shape{4, 3} : Shape{3, 4}), uniform(tb ? Shape{2, 4} : Shape{4, 2})},
                     op_fn("MatMul", {a_bool("transpose_a", ta), a_bool("transpose_b", tb)})});
  out.push_back({"MatMul", "batch broadcast", {uniform({2, 3, 4}), uniform({4, 2})}, op_fn("MatMul")});
  for (const char* name : {"Sum", "Mean"}) {
    out.push_back({name, "axis 1", {uniform({2, 3, 2})}, op_fn(name, {a_ints("axis", {1})})});
    out.push_back({name, "keep_dims", {uniform({2, 3})}, op_fn(name, {a_ints("axis", {-1}), a_bool("keep_dims", true)})});
    out.push_back({name, "all", {uniform({2, 3})}, op_fn(name)});
  }
  out.push_back({"Reshape", "", {uniform({2, 3})}, op_fn("Reshape", {a_ints("shape", {3, 2})})});
  out.push_back({"Softmax", "", {uniform({2, 4})}, op_fn("Softmax")});
  out.push_back({"Softmax", "axis 0", {uniform({3, 2})}, op_fn("Softmax", {a_int("axis", 0)})});
  out.push_back({"LogSoftmax", "", {uniform({2, 4})}, op_fn("LogSoftmax")});
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(binary_cases);
CAIRN_GRAD_CASES(unary_cases);
CAIRN_GRAD_CASES(linalg_cases);

}  // namespace cairn::test
