// Indexing ops: GatherV2, GatherNd, ScatterNd, UnsortedSegmentSum, Where and OneHot (TensorFlow raw-op names and semantics;
// static values TensorFlow takes as input tensors are attributes with TensorFlow's input names).
#include <string>
#include <vector>

#include "runtime/ops/registry.h"
#include "runtime/ops/shape_fns.h"

namespace cairn {
namespace {

void gather_shape(ShapeContext& c) {
  const Shape& params = c.in(0);
  const Shape& indices = c.in(1);
  const int pr = params.rank(), ir = indices.rank();
  int64_t batch_dims = c.attrs.i("batch_dims");
  if (batch_dims < -ir || batch_dims > ir)
    raise(Code::InvalidArgument, "GatherV2: batch_dims {} is out of range [{}, {}] for indices shape {}", batch_dims,
          -ir, ir, indices.str());
  if (batch_dims < 0) batch_dims += ir;
  const int64_t axis_attr = c.attrs.i("axis");
  if (axis_attr < -pr || axis_attr >= pr)
    raise(Code::InvalidArgument, "GatherV2: axis {} is out of range [{}, {}) for params shape {}", axis_attr, -pr, pr,
          params.str());
  const int axis = normalize_axis(axis_attr, pr, "GatherV2");
  const int bd = static_cast<int>(batch_dims);
  if (axis < bd)
    raise(Code::InvalidArgument, "GatherV2: axis {} must be at least batch_dims {}", axis, bd);
  for (int i = 0; i < bd; ++i)
    if (params[i] != indices[i])
      raise(Code::InvalidArgument,
            "GatherV2: params shape {} and indices shape {} must match in the first {} (batch) dimensions", params.str(),
            indices.str(), bd);
  const int out_rank = pr - 1 + ir - bd;
  if (out_rank > kMaxRank)
    raise(Code::InvalidArgument, "GatherV2: the result would have rank {}, more than the maximum of {}", out_rank,
          kMaxRank);
  Shape out;
  for (int i = 0; i < axis; ++i) out.push_back(params[i]);
  for (int i = bd; i < ir; ++i) out.push_back(indices[i]);
  for (int i = axis + 1; i < pr; ++i) out.push_back(params[i]);
  c.set_out(0, out);
}

void scatter_nd_shape(ShapeContext& c) {
  const Shape& indices = c.in(0);
  const Shape& updates = c.in(1);
  const std::vector<int64_t> dims = c.attrs.ints("shape");
  const Shape out = Shape::from(dims.data(), dims.size(), "ScatterNd");
  if (indices.rank() < 1)
    raise(Code::InvalidArgument, "ScatterNd: indices must have rank >= 1, got shape {}", indices.str());
  const int64_t k = indices[indices.rank() - 1];
  if (k > out.rank())
    raise(Code::InvalidArgument,
          "ScatterNd: the last dimension of indices {} ({}) is larger than the rank of shape {} ({})", indices.str(), k,
          out.str(), out.rank());
  // updates must be indices.shape[:-1] + shape[k:].
  std::vector<int64_t> want;
  for (int i = 0; i < indices.rank() - 1; ++i) want.push_back(indices[i]);
  for (int i = static_cast<int>(k); i < out.rank(); ++i) want.push_back(out[i]);
  bool ok = updates.rank() == static_cast<int>(want.size());
  for (int i = 0; ok && i < updates.rank(); ++i) ok = updates[i] == want[static_cast<size_t>(i)];
  if (!ok) {
    std::string w = "[";
    for (size_t i = 0; i < want.size(); ++i) w += (i ? "," : "") + std::to_string(want[i]);
    raise(Code::InvalidArgument,
          "ScatterNd: updates has shape {} but indices shape {} and shape {} require {} "
          "(indices.shape[:-1] + shape[indices.shape[-1]:])",
          updates.str(), indices.str(), out.str(), w + "]");
  }
  c.set_out(0, out);
}

// GatherNd: each row of indices (its last dimension, k long) picks params[i0, ..., ik-1, ...];
// the output is indices.shape[:-1] + params.shape[k:].
void gather_nd_shape(ShapeContext& c) {
  const Shape& params = c.in(0);
  const Shape& indices = c.in(1);
  if (indices.rank() < 1)
    raise(Code::InvalidArgument, "GatherNd: indices must have rank >= 1, got shape {}", indices.str());
  const int64_t k = indices[indices.rank() - 1];
  if (k > params.rank())
    raise(Code::InvalidArgument,
          "GatherNd: the last dimension of indices {} ({}) is larger than the rank of params shape {} ({})",
          indices.str(), k, params.str(), params.rank());
  const int out_rank = indices.rank() - 1 + params.rank() - static_cast<int>(k);
  if (out_rank > kMaxRank)
    raise(Code::InvalidArgument, "GatherNd: the result would have rank {}, more than the maximum of {}", out_rank,
          kMaxRank);
  Shape out;
  for (int i = 0; i < indices.rank() - 1; ++i) out.push_back(indices[i]);
  for (int i = static_cast<int>(k); i < params.rank(); ++i) out.push_back(params[i]);
  c.set_out(0, out);
}

// UnsortedSegmentSum: segment_ids' shape is a prefix of data's; the output is
// [num_segments] + data.shape[segment_ids.rank:].
void unsorted_segment_sum_shape(ShapeContext& c) {
  const Shape& data = c.in(0);
  const Shape& ids = c.in(1);
  bool prefix = ids.rank() <= data.rank();
  for (int i = 0; prefix && i < ids.rank(); ++i) prefix = ids[i] == data[i];
  if (!prefix)
    raise(Code::InvalidArgument,
          "UnsortedSegmentSum: segment_ids shape {} must be a prefix of data shape {}", ids.str(), data.str());
  std::vector<int64_t> dims = {c.attrs.i("num_segments")};
  for (int i = ids.rank(); i < data.rank(); ++i) dims.push_back(data[i]);
  c.set_out(0, Shape::from(dims.data(), dims.size(), "UnsortedSegmentSum"));
}

void one_hot_shape(ShapeContext& c) {
  const Shape& in = c.in(0);
  const int rank = in.rank();
  const int64_t axis = c.attrs.i("axis");
  if (axis != -1 && (axis < 0 || axis > rank))
    raise(Code::InvalidArgument, "OneHot: axis {} must be -1 or in [0, {}] for indices shape {}", axis, rank,
          in.str());
  if (rank == kMaxRank)
    raise(Code::InvalidArgument, "OneHot: the result would have rank {}, more than the maximum of {}", rank + 1,
          kMaxRank);
  const int a = axis == -1 ? rank : static_cast<int>(axis);
  const int64_t depth = c.attrs.i("depth");
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    if (i == a) dims.push_back(depth);
    dims.push_back(in[i]);
  }
  if (a == rank) dims.push_back(depth);
  c.set_out(0, Shape::from(dims.data(), dims.size(), "OneHot"));
}

CAIRN_REGISTER_OP(OpBuilder("GatherV2")
                      .summary("Takes slices of `params` along `axis` at `indices`; the first `batch_dims` dimensions "
                               "are batch dimensions shared by params and indices. Out-of-range indices are an error.")
                      .input("params", "Tparams")
                      .input("indices", "Tindices")
                      .output("output", "Tparams")
                      .type_attr("Tparams", dtypes::kAll)
                      .type_attr("Tindices", dtypes::kIndex)
                      .int_attr("axis", 0)
                      .int_attr("batch_dims", 0)
                      .shape(gather_shape));

CAIRN_REGISTER_OP(OpBuilder("ScatterNd")
                      .summary("A zero tensor of shape `shape` with `updates` added at `indices` (duplicates add); "
                               "out-of-range indices are an error.")
                      .input("indices", "Tindices")
                      .input("updates", "T")
                      .output("output", "T")
                      .type_attr("Tindices", dtypes::kIndex)
                      .type_attr("T", dtypes::kNumber)
                      .ints_attr_required("shape")
                      .shape(scatter_nd_shape));

CAIRN_REGISTER_OP(OpBuilder("GatherNd")
                      .summary("Slices of `params` at the coordinates in the last dimension of `indices` (k of them: "
                               "output is indices.shape[:-1] + params.shape[k:]); out-of-range indices are an error.")
                      .input("params", "Tparams")
                      .input("indices", "Tindices")
                      .output("output", "Tparams")
                      .type_attr("Tparams", dtypes::kAll)
                      .type_attr("Tindices", dtypes::kIndex)
                      .shape(gather_nd_shape));

CAIRN_REGISTER_OP(OpBuilder("UnsortedSegmentSum")
                      .summary("output[s] = sum of data[i...] over the positions i where segment_ids[i] == s; "
                               "`num_segments` is an attribute; ids outside [0, num_segments) are an error.")
                      .input("data", "T")
                      .input("segment_ids", "Tindices")
                      .output("output", "T")
                      .type_attr("T", dtypes::kNumber)
                      .type_attr("Tindices", dtypes::kIndex)
                      .int_attr_required("num_segments", 0)
                      .shape(unsorted_segment_sum_shape));

CAIRN_REGISTER_OP(OpBuilder("Where")
                      .summary("Coordinates of the non-zero (true) elements of `condition` as int64 [num_true, rank], "
                               "in row-major order.")
                      .input("condition", "T")
                      .output("index", DType::Int64)
                      .type_attr("T", dtypes::kAll)
                      .dynamic_output_shape());

CAIRN_REGISTER_OP(OpBuilder("OneHot")
                      .summary("One-hot encoding: `on_value` where the index matches, `off_value` elsewhere, along a new "
                               "dimension of size `depth` at `axis`; out-of-range indices give all-off rows. on/off values "
                               "are attributes converted to `dtype`.")
                      .input("indices", "TI")
                      .output("output", "dtype")
                      .type_attr("TI", dtype_bit(DType::UInt8) | dtypes::kIndex)
                      .int_attr_required("depth", 0)
                      .float_attr("on_value", 1)
                      .float_attr("off_value", 0)
                      .int_attr("axis", -1)
                      .dtype_attr("dtype", dtypes::kAll, DType::Float32)
                      .shape(one_hot_shape));

}  // namespace
}  // namespace cairn
