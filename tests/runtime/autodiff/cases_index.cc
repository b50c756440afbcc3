// Finite-difference cases for the indexing, segment-sum, Sort and TopKV2 gradients
// (runtime/autodiff/index_grad.cc). Index inputs are integer tensors, so only the float64
// inputs are differentiated.
#include "tests/runtime/autodiff/gradcheck.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

Tensor i32(const std::vector<int32_t>& v, const Shape& s) { return make<int32_t>(v, s); }
Tensor i64(const std::vector<int64_t>& v, const Shape& s) { return make<int64_t>(v, s); }

OpFn gather_fn(int64_t axis, int64_t batch_dims = 0) {
  return op_fn("GatherV2", {a_int("axis", axis), a_int("batch_dims", batch_dims)});
}

std::vector<GradCase> gather_cases() {
  std::vector<GradCase> out;
  out.push_back({"GatherV2", "axis 0, duplicates", {uniform({4, 3}), i32({2, 0, 2, 3, 2}, {5})}, gather_fn(0)});
  out.push_back({"GatherV2", "axis 1, 2-D indices", {uniform({2, 4, 3}), i64({3, 0, 1, 3}, {2, 2})}, gather_fn(1)});
  out.push_back({"GatherV2", "axis -1", {uniform({3, 4}), i32({1, 1, 0}, {3})}, gather_fn(-1)});
  out.push_back({"GatherV2", "scalar index", {uniform({3, 2}), i32({2}, {})}, gather_fn(0)});
  out.push_back({"GatherV2", "no indices", {uniform({3, 2}), i32({}, {0})}, gather_fn(0)});
  out.push_back({"GatherV2", "batch_dims 1", {uniform({2, 4, 3}), i32({0, 3, 3, 2, 1, 2}, {2, 3})}, gather_fn(1, 1)});
  out.push_back({"GatherV2", "batch_dims 1, axis 2", {uniform({2, 3, 4, 2}), i64({1, 1, 3, 0}, {2, 2})},
                 gather_fn(2, 1)});
  out.push_back({"GatherV2", "batch_dims -1", {uniform({3, 2, 4}), i32({0, 3, 1, 1, 2, 0}, {3, 2})},
                 gather_fn(-1, -1)});
  out.push_back({"GatherV2", "batch_dims 2", {uniform({2, 2, 3}), i32({2, 2, 0, 1, 1, 0, 2, 2}, {2, 2, 2})},
                 gather_fn(2, 2)});
  return out;
}

std::vector<GradCase> nd_cases() {
  std::vector<GradCase> out;
  out.push_back({"GatherNd", "elements, duplicates", {uniform({3, 4}), i32({0, 1, 2, 3, 0, 1}, {3, 2})},
                 op_fn("GatherNd")});
  out.push_back({"GatherNd", "rows", {uniform({3, 2, 2}), i64({2, 0, 2}, {3, 1})}, op_fn("GatherNd")});
  out.push_back({"GatherNd", "batched indices", {uniform({2, 3, 2}), i32({1, 2, 0, 0, 1, 1, 1, 2}, {2, 2, 2})},
                 op_fn("GatherNd")});
  out.push_back({"ScatterNd", "elements, duplicates", {i32({0, 1, 2, 0, 0, 1}, {3, 2}), uniform({3})},
                 op_fn("ScatterNd", {a_ints("shape", {3, 2})})});
  out.push_back({"ScatterNd", "rows", {i64({3, 1}, {2, 1}), uniform({2, 3})},
                 op_fn("ScatterNd", {a_ints("shape", {4, 3})})});
  out.push_back({"UnsortedSegmentSum", "1-D ids", {uniform({5, 2}), i32({1, 0, 1, 3, 1}, {5})},
                 op_fn("UnsortedSegmentSum", {a_int("num_segments", 4)})});
  out.push_back({"UnsortedSegmentSum", "2-D ids", {uniform({2, 3}), i64({0, 2, 0, 2, 2, 1}, {2, 3})},
                 op_fn("UnsortedSegmentSum", {a_int("num_segments", 3)})});
  return out;
}

OpFn sort_fn(int64_t axis, bool descending) {
  return op_fn("Sort", {a_int("axis", axis), a_bool("descending", descending)});
}

std::vector<GradCase> sort_cases() {
  std::vector<GradCase> out;
  out.push_back({"Sort", "1-D ascending", {uniform({6})}, sort_fn(-1, false)});
  out.push_back({"Sort", "2-D descending", {uniform({3, 4})}, sort_fn(-1, true)});
  out.push_back({"Sort", "axis 0", {uniform({4, 3})}, sort_fn(0, false)});
  out.push_back({"Sort", "axis 1 of 3-D, descending", {uniform({2, 3, 2})}, sort_fn(1, true)});
  out.push_back({"TopKV2", "k 2", {uniform({3, 5})}, op_fn("TopKV2", {a_int("k", 2)})});
  out.push_back({"TopKV2", "k = n, 1-D", {uniform({4})}, op_fn("TopKV2", {a_int("k", 4)})});
  out.push_back({"TopKV2", "3-D k 1", {uniform({2, 2, 3})}, op_fn("TopKV2", {a_int("k", 1)})});
  return out;
}

}  // namespace

CAIRN_GRAD_CASES(gather_cases);
CAIRN_GRAD_CASES(nd_cases);
CAIRN_GRAD_CASES(sort_cases);

}  // namespace cairn::test
