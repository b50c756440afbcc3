// Issue 18: shape arithmetic that cannot overflow. Every op's output shape is checked in one place
// (infer_outputs, with checked_elements from runtime/core/shape.h); each case below crashed or
// returned an impossible "successful" tensor before. Also run under ASan+UBSan (tag "asan").
#include <cstdint>
#include <limits>
#include <vector>

#include "runtime/ops/validate.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

constexpr int64_t k2_62 = int64_t{1} << 62;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

TEST_CASE("checked_elements: the product of the non-zero dimensions must fit, in any order") {
  const int64_t ok[] = {3, 0, 5};
  CHECK(checked_elements(ok, 3) == 15);  // the non-zero product, not the (zero) element count
  CHECK(checked_elements(nullptr, 0) == 1);
  const int64_t neg[] = {2, -1};
  CHECK(checked_elements(neg, 2) == -1);
  // [2^62, 2^62, 0] and [0, 2^62, 2^62] are the same shape up to order: both refused (before,
  // Shape::from accepted the second, whose partial product 2^62 * 2^62 overflows in kernels).
  const int64_t a[] = {k2_62, k2_62, 0}, b[] = {0, k2_62, k2_62};
  CHECK(checked_elements(a, 3) == -1);
  CHECK(checked_elements(b, 3) == -1);
  CHECK_THROWS_CODE(Shape::from(b, 3, "op"), Code::InvalidArgument, "op: the element count of shape [0,4611686018427387904,4611686018427387904] overflows int64");
  const int64_t max[] = {std::numeric_limits<int64_t>::max(), 1};
  CHECK(checked_elements(max, 2) == std::numeric_limits<int64_t>::max());
  CHECK(checked_mul(int64_t{1} << 31, int64_t{1} << 32) == -1);
  CHECK(checked_mul(int64_t{1} << 31, int64_t{1} << 31) == int64_t{1} << 62);
  // A shape built by set_dim and never checked throws rather than wrapping around.
  Shape s{1, 1};
  s.set_dim(0, k2_62);
  s.set_dim(1, 4);
  CHECK_THROWS_CODE(s.num_elements(), Code::InvalidArgument, "element");
}

TEST_CASE("RFFT and IRFFT refuse an fft_length beyond int32 instead of overflowing the output shape") {
  std::vector<int64_t> huge = {k2_62};
  // Segfaulted: [4, 2^61 + 1] complex64 wrapped to a tiny element count.
  CHECK_THROWS_CODE(run1("RFFT", {make<float>(std::vector<float>(24, 1.0f), Shape{4, 6})}, {attr_ints("fft_length", huge)}),
                    Code::InvalidArgument, "RFFT: fft_length must be at most 2^31-1");
  // Returned a "successful" tensor of shape [4, 2^62].
  CHECK_THROWS_CODE(run1("IRFFT", {make<complex64>(std::vector<complex64>(12), Shape{4, 3})}, {attr_ints("fft_length", huge)}),
                    Code::InvalidArgument, "IRFFT: fft_length must be at most 2^31-1");
  std::vector<int64_t> huge2 = {k2_62, k2_62};
  CHECK_THROWS_CODE(run1("RFFT2D", {make<float>(std::vector<float>(24, 1.0f), Shape{4, 6})}, {attr_ints("fft_length", huge2)}),
                    Code::InvalidArgument, "RFFT2D: fft_length must be at most");
  // Failed INTERNAL with a std::vector message.
  CHECK_THROWS_CODE(run1("IRFFT2D", {make<complex64>(std::vector<complex64>(12), Shape{4, 3})}, {attr_ints("fft_length", huge2)}),
                    Code::InvalidArgument, "IRFFT2D: fft_length must be at most");
}

TEST_CASE("every op's output shape is checked for element-count and byte overflow in one place") {
  // Within int32 per dimension, but [8, 2^31-1, 2^30] overflows int64: caught by infer_outputs.
  std::vector<int64_t> len = {kInt32Max, kInt32Max};
  CHECK_THROWS_CODE(run1("RFFT2D", {make<float>(std::vector<float>(8, 1.0f), Shape{8, 1, 1})}, {attr_ints("fft_length", len)}),
                    Code::InvalidArgument, "RFFT2D: output 0 would have shape [8,2147483647,1073741824], whose element count overflows int64");
  // [4, 2^31-1, 2^30] complex64 fits int64 as a count, not as bytes.
  CHECK_THROWS_CODE(run1("RFFT2D", {make<float>(std::vector<float>(4, 1.0f), Shape{4, 1, 1})}, {attr_ints("fft_length", len)}),
                    Code::InvalidArgument, "RFFT2D: output 0 would have shape [4,2147483647,1073741824] of complex64, more than 2^62 bytes");
  CHECK_THROWS_CODE(run1("IRFFT2D", {make<complex64>(std::vector<complex64>(4), Shape{4, 1, 1})}, {attr_ints("fft_length", len)}),
                    Code::InvalidArgument, "IRFFT2D: output 0 would have shape [4,2147483647,2147483647], whose element count overflows");
  // [1, 2^31-1, 2^31-1] float32: the count fits int64, the bytes (about 2^64) do not.
  CHECK_THROWS_CODE(run1("IRFFT2D", {make<complex64>(std::vector<complex64>(1), Shape{1, 1, 1})}, {attr_ints("fft_length", len)}),
                    Code::InvalidArgument, "IRFFT2D: output 0 would have shape [1,2147483647,2147483647] of float32, more than 2^62 bytes");
  // A zero dimension does not hide an overflow among the others (kernels multiply partial products).
  std::vector<int64_t> dims = {0, k2_62, 4};
  CHECK_THROWS_CODE(run1("Fill", {scalar<float>(1)}, {attr_ints("dims", dims)}), Code::InvalidArgument,
                    "Fill: the element count of shape [0,4611686018427387904,4] overflows int64");
  // The check is exact at the boundary: 2^62 bytes is allowed by the shape check (and then
  // refused by the allocator, naming the op), one element more is not.
  std::vector<int64_t> at_bound = {k2_62 / 4}, over = {k2_62 / 4 + 1};
  CHECK_THROWS_CODE(run1("Fill", {scalar<float>(1)}, {attr_ints("dims", at_bound)}), Code::ResourceExhausted, "Fill: ");
  CHECK_THROWS_CODE(run1("Fill", {scalar<float>(1)}, {attr_ints("dims", over)}), Code::InvalidArgument,
                    "more than 2^62 bytes");
}

TEST_CASE("ConcatV2 refuses inputs whose sizes on the axis add up past int64 (zero-element inputs)") {
  // float16[INT64_MAX, 0] holds no elements, so two of them exist; their axis-0 sum does not fit.
  const int64_t max = std::numeric_limits<int64_t>::max();
  Tensor empty = Tensor::allocate(ctx().cpu(), DType::Float16, Shape{max, 0});
  CHECK_THROWS_CODE(run1("ConcatV2", {empty, empty}, {attr_int("axis", 0)}), Code::InvalidArgument,
                    "ConcatV2: the inputs' sizes on axis 0 add up to more than int64 holds");
  Tensor three = Tensor::allocate(ctx().cpu(), DType::Float16, Shape{3, 0});
  CHECK(run1("ConcatV2", {three, three}, {attr_int("axis", 0)}).shape() == Shape{6, 0});
}

TEST_CASE("GatherNd and ScatterNd with coordinate-free rows over an empty tensor do not walk the rows") {
  // indices [2^31, 0] hold no elements, so 2^31 rows cost nothing to pass in; the output is empty.
  // Before, 2^31 offsets (16 GiB) were computed first (the op fuzzer's F3).
  Tensor params = Tensor::allocate(ctx().cpu(), DType::UInt8, Shape{int64_t{1} << 31, 0});
  Tensor indices = Tensor::allocate(ctx().cpu(), DType::Int32, Shape{int64_t{1} << 31, 0});
  CHECK(run1("GatherNd", {params, indices}, {}).shape() == Shape{int64_t{1} << 31, int64_t{1} << 31, 0});
  // k == 0 over a non-empty tensor still copies all of it per row.
  Tensor small = make<float>({1, 2, 3}, Shape{3});
  Tensor two_rows = Tensor::allocate(ctx().cpu(), DType::Int32, Shape{2, 0});
  CHECK(values<float>(run1("GatherNd", {small, two_rows}, {})) == std::vector<float>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("MatMul over 2^40 empty matrices returns at once") {
  // The op fuzzer's F1: the batch loop ran once per (empty) matrix.
  Tensor a = Tensor::allocate(ctx().cpu(), DType::Float32, Shape{int64_t{1} << 40, 0, 1});
  Tensor b = make<float>({2}, Shape{1, 1});
  CHECK(run1("MatMul", {a, b}, {}).shape() == Shape{int64_t{1} << 40, 0, 1});
}

TEST_CASE("pooling and convolution gradients name the op when their shape attribute overflows") {
  std::vector<int64_t> huge = {k2_62, k2_62, 1, 1};
  std::vector<int64_t> ones = {1, 1, 1, 1};
  Tensor grad = make<float>({1}, Shape{1, 1, 1, 1});
  CHECK_THROWS_CODE(run1("AvgPoolGrad", {grad},
                         {attr_ints("orig_input_shape", huge), attr_ints("ksize", ones), attr_ints("strides", ones),
                          attr_string("padding", "VALID")}),
                    Code::InvalidArgument, "AvgPoolGrad: orig_input_shape: the element count of shape [4611686018427387904,4611686018427387904,1,1] overflows int64");
  Tensor filter = make<float>({1}, Shape{1, 1, 1, 1});
  CHECK_THROWS_CODE(run1("Conv2DBackpropInput", {filter, grad},
                         {attr_ints("input_sizes", huge), attr_ints("strides", ones), attr_string("padding", "VALID")}),
                    Code::InvalidArgument, "Conv2DBackpropInput: input_sizes: the element count");
  CHECK_THROWS_CODE(run1("Conv2DBackpropFilter", {grad, grad},
                         {attr_ints("filter_sizes", huge), attr_ints("strides", ones), attr_string("padding", "VALID")}),
                    Code::InvalidArgument, "Conv2DBackpropFilter: filter_sizes: the element count");
}

}  // namespace
}  // namespace cairn::test
