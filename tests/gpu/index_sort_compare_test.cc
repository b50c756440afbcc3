// Op-by-op comparison against the CPU for GatherNd, ScatterNd, Where, Sort and TopKV2 (every
// dtype each has on Vulkan, several shapes, int32 and int64 indices), validation layer on. Sort and
// TopKV2 also on long rows (the bitonic sort's padding), compared bit for bit.
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/gpu/vk_test_util.h"

namespace cairn::test {
namespace {

const std::vector<DType> kNumeric = {DType::Float32, DType::Float16, DType::Int32};
const std::vector<DType> kAllWidths = {DType::Float32, DType::Int32, DType::Float16, DType::Bool,
                                       DType::UInt8,   DType::Int64, DType::Float64};

Tensor values_for(DType dt, const Shape& s, uint32_t seed) {
  if (dt == DType::Bool) return random_tensor(dt, s, 0, 1, seed);
  return random_tensor(dt, s, dt == DType::UInt8 ? 0 : -50, 50, seed);
}

// Index tuples [rows..., k] within dims[0..k).
Tensor nd_indices(DType it, const Shape& lead, const std::vector<int64_t>& dims, uint32_t seed) {
  Shape s = lead;
  s.push_back(static_cast<int64_t>(dims.size()));
  std::vector<double> v;
  std::mt19937 rng(seed);
  for (int64_t r = 0; r < lead.num_elements(); ++r)
    for (int64_t d : dims) v.push_back(static_cast<double>(std::uniform_int_distribution<int64_t>(0, d - 1)(rng)));
  return make_as(it, v, s);
}

TEST_CASE("GatherNd matches the CPU for every element width, k from 0 to rank") {
  for (DType it : {DType::Int32, DType::Int64}) {
    CAPTURE(dtype_name(it));
    for (DType dt : kAllWidths) {
      CAPTURE(dtype_name(dt));
      Tensor params = values_for(dt, Shape{4, 5, 3}, 1);
      compare("GatherNd", {params, nd_indices(it, Shape{6}, {4}, 2)}, {}, 0);
      compare("GatherNd", {params, nd_indices(it, Shape{2, 3}, {4, 5}, 3)}, {}, 0);
      compare("GatherNd", {params, nd_indices(it, Shape{7}, {4, 5, 3}, 4)}, {}, 0);
      compare("GatherNd", {params, nd_indices(it, Shape{}, {4, 5}, 5)}, {}, 0);
    }
    compare("GatherNd", {values_for(DType::Float32, Shape{3, 2}, 6), make_as(it, {}, Shape{2, 0})}, {}, 0);
    compare("GatherNd", {values_for(DType::Float32, Shape{3, 2}, 6), make_as(it, {}, Shape{0, 1})}, {}, 0);
    compare("GatherNd", {values_for(DType::Float32, Shape{300, 64}, 7), nd_indices(it, Shape{1000}, {300}, 8)}, {}, 0);
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("ScatterNd matches the CPU, duplicates added in index order") {
  for (DType it : {DType::Int32, DType::Int64}) {
    CAPTURE(dtype_name(it));
    for (DType dt : kNumeric) {
      CAPTURE(dtype_name(dt));
      double tol = tolerance(dt, false);
      // Many duplicates: 40 updates into 6 rows.
      compare("ScatterNd", {nd_indices(it, Shape{40}, {6}, 1), random_tensor(dt, Shape{40, 3}, -4, 4, 2)},
              {attr_ints("shape", {6, 3})}, tol);
      compare("ScatterNd", {nd_indices(it, Shape{5, 2}, {4, 3}, 3), random_tensor(dt, Shape{5, 2, 2}, -4, 4, 4)},
              {attr_ints("shape", {4, 3, 2})}, tol);
      compare("ScatterNd", {nd_indices(it, Shape{9}, {2, 3, 4}, 5), random_tensor(dt, Shape{9}, -4, 4, 6)},
              {attr_ints("shape", {2, 3, 4})}, tol);
      compare("ScatterNd", {make_as(it, {}, Shape{0, 2}), random_tensor(dt, Shape{0}, -4, 4, 7)},
              {attr_ints("shape", {2, 3})}, tol);
    }
    compare("ScatterNd", {nd_indices(it, Shape{2000}, {500}, 8), random_tensor(DType::Float32, Shape{2000, 8}, -1, 1, 9)},
            {attr_ints("shape", {500, 8})}, 1e-5);
  }
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Where matches the CPU for every element width and rank; -0.0 is false, NaN true") {
  for (DType dt : kAllWidths)
    for (const Shape& s : {Shape{}, Shape{9}, Shape{0}, Shape{4, 6}, Shape{3, 4, 5}, Shape{2, 1, 3, 2, 2}}) {
      CAPTURE(dtype_name(dt));
      CAPTURE(s.str());
      // About half zeros: integers cast to the dtype.
      Tensor ints = random_tensor(DType::Int32, s, dt == DType::UInt8 || dt == DType::Bool ? 0 : -1, 1, 11);
      compare("Where", {run_op(ctx(), "Cast", {ints}, {attr_dtype("DstT", dt)})[0]}, {}, 0);
    }
  compare("Where", {random_tensor(DType::Int32, Shape{100003}, -1, 1, 12)}, {}, 0);
  compare("Where", {random_tensor(DType::Int32, Shape{100003}, 0, 0, 13)}, {}, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor special = make<float>({0.0f, -0.0f, nan, 1e-40f, -2.0f, 0.0f}, Shape{6});
  for (DType dt : {DType::Float32, DType::Float16, DType::Float64}) {
    CAPTURE(dtype_name(dt));
    Tensor x = run_op(ctx(), "Cast", {special}, {attr_dtype("DstT", dt)})[0];
    compare("Where", {x}, {}, 0);
  }
  Tensor got = to_cpu(run_op(vk_ctx(), "Where", {to_vk(special)})[0]);
  CHECK(values<int64_t>(got) == std::vector<int64_t>{2, 3, 4});
  CHECK_NO_VALIDATION_ERRORS();
}

TEST_CASE("Sort and TopKV2 match the CPU: stable, NaN placement, any axis") {
  for (DType dt : kNumeric) {
    CAPTURE(dtype_name(dt));
    for (const Shape& s : {Shape{1}, Shape{9}, Shape{4, 7}, Shape{3, 5, 6}, Shape{0, 4}, Shape{2, 300}})
      for (int64_t axis = -1; axis < s.rank(); ++axis)
        for (bool descending : {false, true}) {
          CAPTURE(s.str());
          CAPTURE(axis);
          // Few distinct values, so ties (and stability) matter.
          compare("Sort", {random_tensor(dt, s, -3, 3, 20)},
                  {attr_int("axis", axis), attr_bool("descending", descending)}, 0);
        }
    for (const Shape& s : {Shape{9}, Shape{4, 7}, Shape{3, 5, 6}, Shape{2, 300}, Shape{0, 4}})
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{3}, s[s.rank() - 1]}) {
        CAPTURE(s.str());
        CAPTURE(k);
        compare("TopKV2", {random_tensor(dt, s, -3, 3, 21)}, {attr_int("k", k)}, 0);
      }
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor with_nan = make<float>({3, nan, -1, 3, nan, 0, -0.0f, 2}, Shape{8});
  for (bool descending : {false, true}) {
    CAPTURE(descending);
    Tensor want = run_op(ctx(), "Sort", {with_nan}, {attr_bool("descending", descending)})[0];
    Tensor got = to_cpu(run_op(vk_ctx(), "Sort", {to_vk(with_nan)}, {attr_bool("descending", descending)})[0]);
    std::vector<float> w = values<float>(want), g = values<float>(got);
    for (size_t i = 0; i < w.size(); ++i) {
      CAPTURE(i);
      CHECK(std::isnan(w[i]) == std::isnan(g[i]));
      if (!std::isnan(w[i])) CHECK(std::signbit(w[i]) == std::signbit(g[i]));
      if (!std::isnan(w[i])) CHECK(w[i] == g[i]);
    }
  }
  std::vector<Tensor> top = run_op(vk_ctx(), "TopKV2", {to_vk(with_nan)}, {attr_int("k", 4)});
  CHECK(values<int32_t>(to_cpu(top[1])) == std::vector<int32_t>{1, 4, 0, 3});
  CHECK_THROWS_CODE(run_op(vk_ctx(), "Sort", {to_vk(make<double>({2, 1}, Shape{2}))}), Code::Unimplemented,
                    "Sort: no Vulkan kernel for dtype float64 on device vulkan:0");
  CHECK_NO_VALIDATION_ERRORS();
}

// Row values: `ties` draws from {-3..3} (plus -0.0, NaN and +-inf for floats), else a wide range
// (floats with a few NaNs and infinities), so ties, padding and NaN placement all show.
Tensor sort_input(DType dt, const Shape& s, bool ties, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const bool is_float = dt == DType::Float32 || dt == DType::Float16;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v(static_cast<size_t>(s.num_elements()));
  for (auto& x : v) {
    double c = u(rng);
    if (is_float && c < 0.05) x = std::numeric_limits<double>::quiet_NaN();
    else if (is_float && c < 0.07) x = c < 0.06 ? inf : -inf;
    else if (is_float && ties && c < 0.12) x = -0.0;
    else if (ties) x = std::round(u(rng) * 6 - 3);
    else x = is_float ? u(rng) * 2000 - 1000 : std::round(u(rng) * 2e6 - 1e6);
  }
  return make_as(dt, v, s);
}

// Runs `op` on the CPU and on Vulkan and checks every output has the same dtype, shape and bytes.
// Returns the Vulkan run's seconds (the read back included).
double compare_exact(const std::string& op, const Tensor& x, const std::vector<NamedAttr>& attrs) {
  std::vector<Tensor> want = run_op(ctx(), op, {x}, attrs);
  Tensor on_vk = to_vk(x);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Tensor> got = run_op(vk_ctx(), op, {on_vk}, attrs);
  for (Tensor& t : got) t = to_cpu(t);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].dtype() == want[i].dtype());
    REQUIRE(got[i].shape() == want[i].shape());
    REQUIRE(got[i].nbytes() == want[i].nbytes());
    bool same = want[i].nbytes() == 0 || std::memcmp(got[i].raw_data(), want[i].raw_data(), want[i].nbytes()) == 0;
    CHECK(same);
  }
  return seconds;
}

TEST_CASE("Sort and TopKV2 match the CPU bit for bit on rows of any length (ties, NaN, padding)") {
  for (DType dt : kNumeric) {
    CAPTURE(dtype_name(dt));
    for (const Shape& s : {Shape{1}, Shape{2}, Shape{3}, Shape{17}, Shape{1000}, Shape{4097}, Shape{1, 65536, 1},
                           Shape{3, 5000}})
      for (bool ties : {true, false}) {
        CAPTURE(s.str());
        CAPTURE(ties);
        Tensor x = sort_input(dt, s, ties, 30 + static_cast<uint32_t>(s.num_elements()));
        const int64_t axis = s.rank() == 3 ? 1 : -1;
        for (bool descending : {false, true}) {
          CAPTURE(descending);
          double t = compare_exact("Sort", x, {attr_int("axis", axis), attr_bool("descending", descending)});
          if (s.num_elements() == 65536)
            MESSAGE((std::string("Vulkan Sort ") + dtype_name(dt) + s.str() + (descending ? " descending" : " ascending") +
                    (ties ? " (ties)" : "") + ": " + std::to_string(t) + " s"));
        }
        if (s.rank() == 2) compare_exact("Sort", x, {attr_int("axis", 0), attr_bool("descending", ties)});
        Tensor row = s.rank() == 3 ? run_op(ctx(), "Reshape", {x}, {attr_ints("shape", {1, 65536})})[0] : x;
        const int64_t n = row.shape()[row.rank() - 1];
        for (int64_t k : {int64_t{1}, std::min<int64_t>(5, n), n}) {
          CAPTURE(k);
          double t = compare_exact("TopKV2", row, {attr_int("k", k)});
          if (s.num_elements() == 65536 && k == n)
            MESSAGE((std::string("Vulkan TopKV2 ") + dtype_name(dt) + row.shape().str() + " k=" + std::to_string(k) +
                    (ties ? " (ties)" : "") + ": " + std::to_string(t) + " s"));
        }
      }
  }
  CHECK_NO_VALIDATION_ERRORS();
}

}  // namespace
}  // namespace cairn::test
