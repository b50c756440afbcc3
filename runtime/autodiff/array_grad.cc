// Gradients of the shape and array ops (TensorFlow's array_grad.py semantics): each routes dy
// back to the input elements it came from, with the inverse data movement.
#include <string_view>

#include "runtime/autodiff/gradient.h"

namespace cairn {
namespace {

using namespace op;  // NOLINT: gradient formulas read better unqualified

Tensor slice(Context& c, const Tensor& x, const Axes& begin, const Axes& size) {
  return run1(c, "Slice", {x}, {attr_ints("begin", begin), attr_ints("size", size)});
}

int norm_axis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

// The forward op's attributes (as explicit_attrs gives them) without the named one.
std::vector<NamedAttr> attrs_without(const Attrs& attrs, std::string_view drop) {
  std::vector<NamedAttr> out;
  for (const NamedAttr& a : explicit_attrs(attrs))
    if (a.name != drop) out.push_back(a);
  return out;
}

// ---- Same elements, new shape ----

void reshape_like_input_grad(GradContext& g) { g.set(0, reshape(g.ctx, g.dy(), g.x(0).shape())); }

// y = transpose(x, perm) puts x's axis perm[i] at i; dy goes back with the inverse permutation.
// An empty perm reverses the axes, which is its own inverse.
void transpose_grad(GradContext& g) {
  const Axes perm = g.attrs.ints("perm");
  Axes inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  g.set(0, transpose(g.ctx, g.dy(), inverse));
}

// ---- Joining and splitting: the inverse op on dy ----

// Input i of the concatenation is the block of dy at its offset along the axis.
void concat_grad(GradContext& g) {
  const int rank = g.y().rank();
  const int axis = norm_axis(g.attrs.i("axis"), rank);
  int64_t offset = 0;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Shape& s = g.inputs[i].shape();
    if (g.need(static_cast<int>(i))) {
      Axes begin(static_cast<size_t>(rank), 0);
      begin[static_cast<size_t>(axis)] = offset;
      g.set(static_cast<int>(i), slice(g.ctx, g.dy(), begin, s.to_vector()));
    }
    offset += s[axis];
  }
}

void pack_grad(GradContext& g) {
  const int n = static_cast<int>(g.inputs.size());
  std::vector<Tensor> parts =
      run_op(g.ctx, "Unpack", {g.dy()}, {attr_int("num", n), attr_int("axis", g.attrs.i("axis"))});
  for (int i = 0; i < n; ++i)
    if (g.need(i)) g.set(i, parts[static_cast<size_t>(i)]);
}

// Outputs nobody used arrive as zeros, so every piece is there to stack.
void unpack_grad(GradContext& g) {
  g.set(0, run1(g.ctx, "Pack", g.output_grads, {attr_int("axis", g.attrs.i("axis"))}));
}

void split_grad(GradContext& g) {
  g.set(0, run1(g.ctx, "ConcatV2", g.output_grads, {attr_int("axis", g.attrs.i("axis"))}));
}

// ---- Slicing: dy goes back into a zero tensor of the input's shape ----

// Slice takes the block [begin, begin + size); padding dy by begin before and the rest after
// puts it back in place (size may have been -1, so the output's shape is the true size).
void slice_grad(GradContext& g) {
  const Axes begin = g.attrs.ints("begin");
  const Shape& in = g.x(0).shape();
  const Shape& out = g.y().shape();
  Axes paddings;
  for (int i = 0; i < in.rank(); ++i) {
    paddings.push_back(begin[static_cast<size_t>(i)]);
    paddings.push_back(in[i] - begin[static_cast<size_t>(i)] - out[i]);
  }
  g.set(0, run1(g.ctx, "Pad", {g.dy()}, {attr_ints("paddings", paddings)}));
}

void strided_slice_grad(GradContext& g) {
  const std::vector<int64_t> shape = g.x(0).shape().to_vector();
  std::vector<NamedAttr> attrs = explicit_attrs(g.attrs);
  attrs.push_back(attr_ints("shape", shape));
  g.set(0, run1(g.ctx, "StridedSliceGrad", {g.dy()}, attrs));
}

// StridedSliceGrad is linear in dy: its gradient is the forward slice of the incoming gradient.
void strided_slice_grad_grad(GradContext& g) {
  g.set(0, run1(g.ctx, "StridedSlice", {g.dy()}, attrs_without(g.attrs, "shape")));
}

void pad_grad(GradContext& g) {
  const Axes paddings = g.attrs.ints("paddings");
  Axes begin;
  for (size_t i = 0; i < paddings.size(); i += 2) begin.push_back(paddings[i]);
  g.set(0, slice(g.ctx, g.dy(), begin, g.x(0).shape().to_vector()));
}

// ---- Repetition and reordering ----

// Along each tiled axis dy holds `m` copies of the input's `d` elements one after another:
// viewed as [before, m, d * after], the copies sum over the middle axis. One axis at a time
// keeps every view at rank 3 whatever the input's rank.
void tile_grad(GradContext& g) {
  Context& c = g.ctx;
  const Axes multiples = g.attrs.ints("multiples");
  const Shape& in = g.x(0).shape();
  Tensor grad = g.dy();
  for (int i = 0; i < in.rank(); ++i) {
    const int64_t m = multiples[static_cast<size_t>(i)];
    if (m == 1) continue;
    Shape current = grad.shape();
    int64_t before = 1, after = 1;
    for (int j = 0; j < i; ++j) before *= current[j];
    for (int j = i + 1; j < current.rank(); ++j) after *= current[j];
    Tensor summed = sum(c, reshape(c, grad, Shape{before, m, in[i] * after}), {1});
    current.set_dim(i, in[i]);
    grad = reshape(c, summed, current);
  }
  g.set(0, grad.shape() == in ? grad : reshape(c, grad, in));
}

void reverse_grad(GradContext& g) {
  g.set(0, run1(g.ctx, "Reverse", {g.dy()}, {attr_ints("axis", g.attrs.ints("axis"))}));
}

// Every output element is the value: it gets the sum of dy.
void fill_grad(GradContext& g) { g.set(0, all_sum(g.ctx, g.dy())); }

}  // namespace

CAIRN_REGISTER_GRADIENT("ExpandDims", reshape_like_input_grad);
CAIRN_REGISTER_GRADIENT("Squeeze", reshape_like_input_grad);
CAIRN_REGISTER_GRADIENT("Transpose", transpose_grad);
CAIRN_REGISTER_GRADIENT("ConcatV2", concat_grad);
CAIRN_REGISTER_GRADIENT("Pack", pack_grad);
CAIRN_REGISTER_GRADIENT("Unpack", unpack_grad);
CAIRN_REGISTER_GRADIENT("Split", split_grad);
CAIRN_REGISTER_GRADIENT("Slice", slice_grad);
CAIRN_REGISTER_GRADIENT("StridedSlice", strided_slice_grad);
CAIRN_REGISTER_GRADIENT("StridedSliceGrad", strided_slice_grad_grad);
CAIRN_REGISTER_GRADIENT("Pad", pad_grad);
CAIRN_REGISTER_GRADIENT("Tile", tile_grad);
CAIRN_REGISTER_GRADIENT("Reverse", reverse_grad);
CAIRN_REGISTER_GRADIENT("Fill", fill_grad);

// Constructors without a floating input: nothing to differentiate.
CAIRN_NOT_DIFFERENTIABLE("Range");
CAIRN_NOT_DIFFERENTIABLE("RandomUniform");
CAIRN_NOT_DIFFERENTIABLE("RandomStandardNormal");
CAIRN_NOT_DIFFERENTIABLE("TruncatedNormal");

}  // namespace cairn
