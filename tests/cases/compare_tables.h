// The op-by-op tables of the Vulkan comparisons (tests/gpu/ops_compare_test.cc): shapes (broadcast,
// empty, scalar, large, odd sizes) and input ranges that keep each op in its domain. The traced ==
// eager cases (tests/runtime/graph/op_cases.cc) run the same tables.
#pragma once

#include <utility>
#include <vector>

#include "runtime/core/shape.h"

namespace cairn::test::tables {

// Shapes every unary op runs on.
inline const std::vector<Shape>& elementwise_shapes() {
  static const std::vector<Shape> s = {Shape{}, Shape{1}, Shape{7}, Shape{0}, Shape{3, 5}, Shape{2, 0, 3},
                                       Shape{4, 33, 9}, Shape{300001}};
  return s;
}

struct UnaryRange {
  const char* op;
  double lo, hi;        // inputs drawn from [lo, hi]
  bool ints;            // the op has int32 kernels
  bool transcendental;  // the GPU's result may differ from the CPU's in the last bits
};

inline const std::vector<UnaryRange>& unary_ranges() {
  static const std::vector<UnaryRange> r = {
      {"Neg", -5, 5, true, false},       {"Abs", -5, 5, true, false},       {"Sign", -2, 2, true, false},
      {"Square", -5, 5, true, false},    {"Reciprocal", 0.5, 4, false, false}, {"Exp", -5, 5, false, true},
      {"Log", 0.01, 10, false, true},    {"Log1p", -0.5, 5, false, true},   {"Sqrt", 0, 10, false, true},
      {"Rsqrt", 0.1, 10, false, true},   {"Sin", -4, 4, false, true},       {"Cos", -4, 4, false, true},
      {"Tanh", -6, 6, false, true},      {"Sigmoid", -10, 10, false, true}, {"Erf", -3, 3, false, true},
      {"Relu", -5, 5, true, false},      {"Relu6", -3, 9, true, false},     {"Elu", -3, 3, false, true},
      {"Selu", -3, 3, false, true},      {"Softplus", -10, 10, false, true}, {"Gelu", -4, 4, false, true},
      {"Floor", -5, 5, false, false},    {"Ceil", -5, 5, false, false},     {"Round", -5, 5, false, false},
      {"ZerosLike", -5, 5, true, false}, {"OnesLike", -5, 5, true, false},  {"Identity", -5, 5, true, false},
  };
  return r;
}

struct BinaryRange {
  const char* op;
  double lo, hi;  // both inputs drawn from [lo, hi]
  bool ints;      // the op has int32 kernels
};

inline const std::vector<BinaryRange>& binary_ranges() {
  static const std::vector<BinaryRange> r = {
      {"Add", -5, 5, true},       {"Sub", -5, 5, true},         {"Mul", -5, 5, true},
      {"RealDiv", 0.5, 5, false}, {"FloorDiv", 0.5, 5, false},  {"FloorMod", 0.5, 5, false},
      {"Pow", 0.5, 2, false},     {"Maximum", -5, 5, true},     {"Minimum", -5, 5, true},
      {"SquaredDifference", -5, 5, true}};
  return r;
}

// Pairs of broadcasting shapes for the binary ops.
inline const std::vector<std::pair<Shape, Shape>>& broadcast_pairs() {
  static const std::vector<std::pair<Shape, Shape>> p = {
      {Shape{}, Shape{}},         {Shape{7}, Shape{7}},       {Shape{3, 5}, Shape{5}},     {Shape{3, 1}, Shape{1, 4}},
      {Shape{2, 3, 4}, Shape{3, 1}}, {Shape{0, 3}, Shape{3}}, {Shape{5, 1, 3, 1, 2, 1, 3}, Shape{4, 3, 1, 2, 3, 1}},
      {Shape{1000, 301}, Shape{301}}, {Shape{}, Shape{4, 4}}};
  return p;
}

inline const std::vector<const char*>& reduction_ops() {
  static const std::vector<const char*> ops = {"Sum", "Mean", "Prod", "Max", "Min"};
  return ops;
}

// Input shapes and `axis` attributes for the reductions (empty: all axes).
inline const std::vector<std::pair<Shape, std::vector<int64_t>>>& reduction_axes() {
  static const std::vector<std::pair<Shape, std::vector<int64_t>>> r = {
      {Shape{}, {}},         {Shape{7}, {}},           {Shape{3, 5}, {1}},     {Shape{3, 5}, {0}},
      {Shape{4, 6, 5}, {0, 2}}, {Shape{4, 6, 5}, {1}},  {Shape{2, 0, 3}, {1}},  {Shape{2, 0, 3}, {0}},
      {Shape{1000, 513}, {1}}, {Shape{513, 1000}, {0}}, {Shape{100000}, {}}, {Shape{3, 4, 5, 6}, {-1, 1}}};
  return r;
}

struct MatMulShapes {
  Shape a, b;
  bool ta, tb;  // transpose_a, transpose_b
};

// Transposes, batches (broadcast), odd and empty sizes, and sizes past one tile.
inline const std::vector<MatMulShapes>& matmul_shapes() {
  static const std::vector<MatMulShapes> m = {
      {Shape{1, 1}, Shape{1, 1}, false, false},  {Shape{3, 5}, Shape{5, 7}, false, false},
      {Shape{5, 3}, Shape{5, 7}, true, false},   {Shape{3, 5}, Shape{7, 5}, false, true},
      {Shape{5, 3}, Shape{7, 5}, true, true},    {Shape{67, 130}, Shape{130, 65}, false, false},
      {Shape{2, 3, 33, 17}, Shape{2, 3, 17, 9}, false, false},
      {Shape{4, 20, 8}, Shape{8, 12}, false, false}, {Shape{0, 4}, Shape{4, 3}, false, false},
      {Shape{3, 0}, Shape{0, 4}, false, false},   {Shape{128, 128}, Shape{128, 128}, false, false},
      {Shape{33, 600}, Shape{600, 515}, false, false}};
  return m;
}

}  // namespace cairn::test::tables
