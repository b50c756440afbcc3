#include "runtime/ops/shape_fns.h"

#include <algorithm>

namespace cairn {

std::string ints_str(const int64_t* v, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  int rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = i - (rank - a.rank());
    int ib = i - (rank - b.rank());
    int64_t da = ia >= 0 ? a[ia] : 1;
    int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) raise(Code::InvalidArgument, "{}: incompatible shapes {} and {}", op, a.str(), b.str());
    out.set_dim(i, da == 1 ? db : da);
  }
  return out;
}

void reduction_axes_mask(const Shape& in, const int64_t* axes, size_t n_axes, const char* op, bool* out) {
  for (int i = 0; i < in.rank(); ++i) out[i] = n_axes == 0;
  for (size_t k = 0; k < n_axes; ++k) out[normalize_axis(axes[k], in.rank(), op)] = true;
}

Shape reduced_shape(const Shape& in, const int64_t* axes, size_t n_axes, bool keep_dims, const char* op) {
  bool mask[kMaxRank];
  reduction_axes_mask(in, axes, n_axes, op, mask);
  Shape out;
  for (int i = 0; i < in.rank(); ++i) {
    if (!mask[i]) out.push_back(in[i]);
    else if (keep_dims) out.push_back(1);
  }
  return out;
}

namespace shapes {
void unchanged(ShapeContext& c) { c.set_out(0, c.in(0)); }

void broadcast(ShapeContext& c) {
  Shape& out = c.outputs[0].shape;
  out = c.in(0);
  for (int i = 1; i < c.num_inputs; ++i)
    if (c.in(i) != out) out = broadcast_shapes(out, c.in(i), c.op());
}

void scalar(ShapeContext& c) { c.set_out(0, Shape()); }

void reduce(ShapeContext& c) {
  const AttrValue& axis = c.attrs.get("axis");
  c.set_out(0, reduced_shape(c.in(0), axis.ints, axis.n_ints, c.attrs.b("keep_dims"), c.op()));
}
}  // namespace shapes

}  // namespace cairn
