// Gradients of the indexing ops (gathers, scatters, segment sums) and of the ops that pick values
// by index (Sort, TopKV2). A gather's gradient adds dy into the positions it read, so duplicate
// indices accumulate; a scatter's gradient gathers dy back. Index inputs get no gradient.
#include <cmath>
#include <string_view>
#include <utility>

#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT: gradient formulas read better unqualified

int64_t product(const Shape& s, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i) p *= s[i];
  return p;
}

Tensor unsorted_segment_sum(Context& c, const Tensor& data, const Tensor& ids, int64_t num_segments) {
  return run1(c, "UnsortedSegmentSum", {data, ids}, {attr_int("num_segments", num_segments)});
}

// `ids` ([rows, n], int64) shifted by row * stride, flattened: row r's ids index the r-th block
// of `stride` segments, so one segment sum serves every row at once.
Tensor offset_rows(Context& c, const Tensor& ids, int64_t rows, int64_t stride) {
  Tensor flat_ids = ids;
  if (rows > 1) {
    const double span = static_cast<double>(rows) * static_cast<double>(stride);
    Tensor starts = run1(c, "Range", {},
                         {attr_float("start", 0), attr_float("limit", span), attr_float("delta", static_cast<double>(stride)),
                          attr_dtype("dtype", DType::Int64)});
    flat_ids = add(c, ids, reshape(c, starts, Shape{rows, 1}));
  }
  return reshape(c, flat_ids, Shape{ids.num_elements()});
}

// ---- GatherV2 ----

// With B = the batch dimensions, params is [B, outer, limit, inner] and dy is
// [B, outer, N, inner] (N: the indices' non-batch elements). Moving N next to B and offsetting
// each batch's indices by b * limit turns the whole gradient into one segment sum over the
// B * limit params rows.
void gather_grad(GradContext& g) {
  if (!g.need(0)) return;
  Context& c = g.ctx;
  const Tensor& params = g.x(0);
  const Tensor& indices = g.x(1);
  const Shape& ps = params.shape();
  const int pr = ps.rank(), ir = indices.rank();
  int64_t bd64 = g.attrs.i("batch_dims");
  if (bd64 < 0) bd64 += ir;
  const int bd = static_cast<int>(bd64);
  const int64_t axis_attr = g.attrs.i("axis");
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + pr : axis_attr);
  const int64_t batches = product(ps, 0, bd), outer = product(ps, bd, axis), limit = ps[axis];
  const int64_t inner = product(ps, axis + 1, pr), n = product(indices.shape(), bd, ir);
  if (ps.num_elements() == 0) {
    g.set(0, zeros_like(c, params));
    return;
  }
  Tensor dy = reshape(c, g.dy(), Shape{batches, outer, n, inner});
  if (outer > 1) dy = transpose(c, dy, {0, 2, 1, 3});
  dy = reshape(c, dy, Shape{batches * n, outer, inner});
  Tensor ids = offset_rows(c, reshape(c, cast(c, indices, DType::Int64), Shape{batches, n}), batches, limit);
  Tensor rows = unsorted_segment_sum(c, dy, ids, batches * limit);
  if (outer > 1) rows = transpose(c, reshape(c, rows, Shape{batches, limit, outer, inner}), {0, 2, 1, 3});
  g.set(0, reshape(c, rows, ps));
}

// ---- GatherNd, ScatterNd, UnsortedSegmentSum: each one's gradient is another of them ----

void gather_nd_grad(GradContext& g) {
  if (!g.need(0)) return;
  const std::vector<int64_t> shape = g.x(0).shape().to_vector();
  g.set(0, run1(g.ctx, "ScatterNd", {g.x(1), g.dy()}, {attr_ints("shape", shape)}));
}

void scatter_nd_grad(GradContext& g) {
  if (!g.need(1)) return;
  g.set(1, run1(g.ctx, "GatherNd", {g.dy(), g.x(0)}));
}

// data[i...] went to output[ids[i]]: it gets dy[ids[i]].
void unsorted_segment_sum_grad(GradContext& g) {
  if (!g.need(0)) return;
  g.set(0, gather(g.ctx, g.dy(), g.x(1), 0));
}

// ---- Sort and TopKV2: dy goes back to the positions the values were taken from ----

// dy and indices are [..., k] (indices into a last axis of n); the result is [..., n] with
// dy[..., j] added at indices[..., j].
Tensor scatter_last_axis(Context& c, const Tensor& dy, const Tensor& indices, const Shape& out_shape) {
  const int64_t n = out_shape[out_shape.rank() - 1];
  const int64_t k = dy.shape()[dy.rank() - 1];
  const int64_t rows = out_shape.num_elements() == 0 ? 0 : out_shape.num_elements() / n;
  if (rows == 0 || k == 0) return filled(c, *dy.device(), dy.dtype(), out_shape, 0);
  Tensor ids = offset_rows(c, reshape(c, cast(c, indices, DType::Int64), Shape{rows, k}), rows, n);
  Tensor flat = unsorted_segment_sum(c, reshape(c, dy, Shape{rows * k}), ids, rows * n);
  return reshape(c, flat, out_shape);
}

void top_k_grad(GradContext& g) {
  g.set(0, scatter_last_axis(g.ctx, g.dy(0), g.y(1), g.x(0).shape()));
}

// The key whose stable descending order is the ascending Sort's order: -x, with NaN (last when
// ascending, but largest to TopKV2) mapped to -inf. Only a NaN before a +inf in the same row
// still comes out in the wrong order (both keys are -inf, and the lower index wins).
Tensor ascending_key(Context& c, const Tensor& x) {
  Tensor is_nan = run1(c, "IsNan", {x});
  return select(c, is_nan, scalar_like(c, x, -INFINITY), neg(c, x));
}

// Sort is stable. TopKV2 with k = n orders largest first and breaks ties by the lower index,
// which is a stable descending sort (NaN first, as Sort's descending order has it); on
// ascending_key it is the ascending one. Its indices are the permutation that dy is scattered
// back through. Sort works on any axis, TopKV2 on the last: the axis is swapped to the end and
// back.
void sort_grad(GradContext& g) {
  Context& c = g.ctx;
  const Tensor& x = g.x(0);
  const int rank = x.rank();
  const int64_t axis_attr = g.attrs.i("axis");
  const int axis = static_cast<int>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  Axes swap(static_cast<size_t>(rank));
  for (int i = 0; i < rank; ++i) swap[static_cast<size_t>(i)] = i;
  std::swap(swap[static_cast<size_t>(axis)], swap[static_cast<size_t>(rank - 1)]);
  const bool moved = axis != rank - 1;
  auto to_last = [&](const Tensor& t) { return moved ? transpose(c, t, swap) : t; };

  Tensor xt = stop_gradient(c, to_last(x));
  Tensor key = g.attrs.b("descending") ? xt : ascending_key(c, xt);
  const int64_t n = xt.shape()[rank - 1];
  Tensor order = run_op(c, "TopKV2", {key}, {attr_int("k", n)})[1];
  Tensor dx = scatter_last_axis(c, to_last(g.dy()), order, xt.shape());
  g.set(0, to_last(dx));
}

}  // namespace

CAIRN_REGISTER_GRADIENT("GatherV2", gather_grad);
CAIRN_REGISTER_GRADIENT("GatherNd", gather_nd_grad);
CAIRN_REGISTER_GRADIENT("ScatterNd", scatter_nd_grad);
CAIRN_REGISTER_GRADIENT("UnsortedSegmentSum", unsorted_segment_sum_grad);
CAIRN_REGISTER_GRADIENT("TopKV2", top_k_grad);
CAIRN_REGISTER_GRADIENT("Sort", sort_grad);

// Index results only: integer coordinates (Where) or a constant pattern chosen by integer
// indices (OneHot).
CAIRN_NOT_DIFFERENTIABLE("Where");
CAIRN_NOT_DIFFERENTIABLE("OneHot");

}  // namespace cairn
