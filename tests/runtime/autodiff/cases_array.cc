// Finite-difference cases for the shape and array op gradients (runtime/autodiff/array_grad.cc).
#include "tests/runtime/autodiff/gradcheck.h"

namespace cairn::test {
namespace {

using Ints = std::vector<int64_t>;

// A StridedSlice case: attributes begin/end/strides and the five masks (in that order).
GradCase strided(std::string label, const Shape& in, Ints begin, Ints end, Ints strides, int64_t begin_mask = 0,
                 int64_t end_mask = 0, int64_t ellipsis_mask = 0, int64_t new_axis_mask = 0,
                 int64_t shrink_mask = 0) {
  return {"StridedSlice", std::move(label), {uniform(in)},
          op_fn("StridedSlice", {a_ints("begin", std::move(begin)), a_ints("end", std::move(end)),
                                 a_ints("strides", std::move(strides)), a_int("begin_mask", begin_mask),
                                 a_int("end_mask", end_mask), a_int("ellipsis_mask", ellipsis_mask),
                                 a_int("new_axis_mask", new_axis_mask), a_int("shrink_axis_mask", shrink_mask)})};
}

std::vector<GradCase> reshaping_cases() {
  std::vector<GradCase> out;
  out.push_back({"ExpandDims", "axis 0", {uniform({2, 3})}, op_fn("ExpandDims", {a_int("axis", 0)})});
  out.push_back({"ExpandDims", "axis -1", {uniform({2, 3})}, op_fn("ExpandDims", {a_int("axis", -1)})});
  out.push_back({"ExpandDims", "scalar", {uniform({})}, op_fn("ExpandDims", {a_int("axis", 0)})});
  out.push_back({"Squeeze", "all", {uniform({1, 3, 1, 2})}, op_fn("Squeeze")});
  out.push_back({"Squeeze", "dims -2", {uniform({1, 3, 1, 2})}, op_fn("Squeeze", {a_ints("squeeze_dims", {-2})})});
  out.push_back({"Transpose", "2-D default", {uniform({2, 3})}, op_fn("Transpose")});
  out.push_back({"Transpose", "3-D cycle", {uniform({2, 3, 4})}, op_fn("Transpose", {a_ints("perm", {2, 0, 1})})});
  out.push_back({"Transpose", "4-D", {uniform({2, 1, 3, 2})}, op_fn("Transpose", {a_ints("perm", {1, 3, 0, 2})})});
  return out;
}

std::vector<GradCase> join_split_cases() {
  std::vector<GradCase> out;
  out.push_back({"ConcatV2", "axis 0", {uniform({2, 3}), uniform({1, 3}), uniform({3, 3})},
                 op_fn("ConcatV2", {a_int("axis", 0)})});
  out.push_back({"ConcatV2", "axis -1", {uniform({2, 1, 2}), uniform({2, 1, 3})}, op_fn("ConcatV2", {a_int("axis", -1)})});
  out.push_back({"ConcatV2", "with empty input", {uniform({2, 0}), uniform({2, 2})}, op_fn("ConcatV2", {a_int("axis", 1)})});
  out.push_back({"Pack", "axis 0", {uniform({2, 3}), uniform({2, 3})}, op_fn("Pack")});
  out.push_back({"Pack", "axis -1", {uniform({2, 3}), uniform({2, 3}), uniform({2, 3})},
                 op_fn("Pack", {a_int("axis", -1)})});
  out.push_back({"Pack", "scalars", {uniform({}), uniform({})}, op_fn("Pack")});
  out.push_back({"Unpack", "axis 0", {uniform({3, 2})}, op_fn("Unpack", {a_int("num", 3)})});
  out.push_back({"Unpack", "axis -1", {uniform({2, 3, 2})}, op_fn("Unpack", {a_int("num", 2), a_int("axis", -1)})});
  // Only one piece reaches the loss: the others' gradients arrive as zeros.
  out.push_back({"Unpack", "one output used", {uniform({2, 3})}, [](Context& c, const std::vector<Tensor>& in) {
                   return std::vector<Tensor>{run_op(c, "Unpack", in, {attr_int("num", 3), attr_int("axis", 1)})[1]};
                 }});
  out.push_back({"Split", "axis 0", {uniform({4, 3})}, op_fn("Split", {a_int("num_split", 2)})});
  out.push_back({"Split", "axis -1", {uniform({2, 6})}, op_fn("Split", {a_int("axis", -1), a_int("num_split", 3)})});
  return out;
}

std::vector<GradCase> slice_cases() {
  std::vector<GradCase> out;
  out.push_back({"Slice", "block", {uniform({3, 4})}, op_fn("Slice", {a_ints("begin", {1, 1}), a_ints("size", {2, 2})})});
  out.push_back({"Slice", "size -1", {uniform({2, 3, 4})},
                 op_fn("Slice", {a_ints("begin", {0, 1, 2}), a_ints("size", {-1, 1, -1})})});
  out.push_back({"Slice", "empty", {uniform({3, 2})}, op_fn("Slice", {a_ints("begin", {1, 0}), a_ints("size", {0, 2})})});
  out.push_back(strided("step 2", {6}, {1}, {6}, {2}));
  out.push_back(strided("negative step", {5, 3}, {4, 0}, {0, 3}, {-2, 1}));
  out.push_back(strided("negative bounds", {5, 4}, {-4, -3}, {-1, 4}, {1, 2}));
  out.push_back(strided("begin and end masks", {4, 5}, {2, 3}, {0, 1}, {1, -1}, 0b10, 0b01));
  out.push_back(strided("reverse all (masks, step -1)", {3, 4}, {0, 0}, {0, 0}, {-1, -1}, 0b11, 0b11));
  out.push_back(strided("ellipsis", {2, 3, 4}, {0, 1}, {0, 4}, {1, 2}, 0, 0, 0b01));
  out.push_back(strided("new axis", {3, 4}, {0, 1, 0}, {0, 3, 2}, {1, 1, 1}, 0, 0, 0, 0b001));
  out.push_back(strided("shrink", {3, 4}, {1, 1}, {2, 4}, {1, 1}, 0, 0, 0, 0, 0b01));
  out.push_back(strided("shrink negative index", {3, 4}, {0, -1}, {0, 0}, {1, 1}, 0b01, 0b01, 0, 0, 0b10));
  out.push_back(strided("ellipsis + new axis + shrink", {2, 3, 4}, {0, 0, 2}, {0, 0, 3}, {1, 1, 1}, 0, 0, 0b010, 0b001,
                        0b100));
  out.push_back(strided("empty result", {4, 3}, {3, 0}, {1, 3}, {1, 1}));
  // StridedSliceGrad's own gradient (it is linear in dy).
  out.push_back({"StridedSliceGrad", "step 2 and shrink", {uniform({2})},
                 op_fn("StridedSliceGrad", {a_ints("shape", {3, 4}), a_ints("begin", {1, 0}), a_ints("end", {2, 4}),
                                            a_ints("strides", {1, 2}), a_int("shrink_axis_mask", 1)})});
  out.push_back({"StridedSliceGrad", "negative step", {uniform({2, 3})},
                 op_fn("StridedSliceGrad", {a_ints("shape", {4, 3}), a_ints("begin", {-1}), a_ints("end", {0}),
                                            a_ints("strides", {-2})})});
  out.push_back({"Pad", "2-D", {uniform({2, 3})}, op_fn("Pad", {a_ints("paddings", {1, 0, 2, 1})})});
  out.push_back({"Pad", "constant and no padding", {uniform({2, 1, 2})},
                 op_fn("Pad", {a_ints("paddings", {0, 0, 1, 1, 0, 2}), a_float("constant_values", 3)})});
  return out;
}

std::vector<GradCase> repeat_cases() {
  std::vector<GradCase> out;
  out.push_back({"Tile", "1-D", {uniform({3})}, op_fn("Tile", {a_ints("multiples", {3})})});
  out.push_back({"Tile", "2-D both", {uniform({2, 3})}, op_fn("Tile", {a_ints("multiples", {2, 3})})});
  out.push_back({"Tile", "3-D mixed", {uniform({2, 1, 3})}, op_fn("Tile", {a_ints("multiples", {1, 4, 2})})});
  out.push_back({"Tile", "zero multiple", {uniform({2, 2})}, op_fn("Tile", {a_ints("multiples", {0, 2})})});
  out.push_back({"Reverse", "axis 0", {uniform({3, 2})}, op_fn("Reverse", {a_ints("axis", {0})})});
  out.push_back({"Reverse", "axes 0 and -1", {uniform({2, 3, 2})}, op_fn("Reverse", {a_ints("axis", {0, -1})})});
  out.push_back({"Reverse", "none", {uniform({3})}, op_fn("Reverse", {a_ints("axis", {})})});
  out.push_back({"Fill", "2-D", {uniform({})}, op_fn("Fill", {a_ints("dims", {2, 3})})});
  out.push_back({"Fill", "scalar", {uniform({})}, op_fn("Fill", {a_ints("dims", {})})});
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(reshaping_cases);
CAIRN_GRAD_CASES(join_split_cases);
CAIRN_GRAD_CASES(slice_cases);
CAIRN_GRAD_CASES(repeat_cases);

}  // namespace cairn::test
