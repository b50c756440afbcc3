// Push-constant structs, mirrored field for field from the shaders' `Push` blocks.
#pragma once

#include <cstdint>

namespace cairn::gpu {

constexpr int kMaxShaderRank = 6;

struct UnaryPush {  // unary.comp
  uint32_t n;
  float a, b;
  int32_t ia, ib;
};
static_assert(sizeof(UnaryPush) == 20, "mirror of unary.comp's Push");

struct BinaryPush {  // binary.comp
  uint32_t n;
  uint32_t rank;
  uint32_t dims[kMaxShaderRank];
  uint32_t xs[kMaxShaderRank];
  uint32_t ys[kMaxShaderRank];
};
static_assert(sizeof(BinaryPush) == 80, "mirror of binary.comp's Push");

struct ReducePush {  // reduce.comp
  uint32_t outer, r, inner;
  uint32_t mean, divisor;
};
static_assert(sizeof(ReducePush) == 20, "mirror of reduce.comp's Push");

struct MatMulPush {  // matmul.comp
  uint32_t m, n, k;
  uint32_t a_batch_stride, b_batch_stride;
  uint32_t transpose_a, transpose_b;
};
static_assert(sizeof(MatMulPush) == 28, "mirror of matmul.comp's Push");

struct StridedPush {  // strided.comp
  uint32_t n;
  uint32_t rank;
  int32_t in_base;
  uint32_t out_base;
  uint32_t dims[kMaxShaderRank];
  int32_t in_strides[kMaxShaderRank];
  uint32_t out_strides[kMaxShaderRank];
  uint32_t mods[kMaxShaderRank];
};
static_assert(sizeof(StridedPush) == 112, "mirror of strided.comp's Push");

struct SelectPush {  // select.comp
  uint32_t n;
  uint32_t rank;
  uint32_t dims[kMaxShaderRank];
  uint32_t cs[kMaxShaderRank];
  uint32_t ts[kMaxShaderRank];
  uint32_t es[kMaxShaderRank];
};
static_assert(sizeof(SelectPush) == 104, "mirror of select.comp's Push");

struct CastPush {  // cast.comp
  uint32_t n;
};
static_assert(sizeof(CastPush) == 4, "mirror of cast.comp's Push");

struct TrainingPush {  // training.comp
  uint32_t n;
};
static_assert(sizeof(TrainingPush) == 4, "mirror of training.comp's Push");

struct AxisPush {  // axis.comp, argreduce.comp
  uint32_t outer, r, inner;
  uint32_t exclusive, reverse;
};
static_assert(sizeof(AxisPush) == 20, "mirror of axis.comp's Push");

struct GatherPush {  // gather.comp
  uint32_t total, n, count, inner;
  uint32_t zero;
};
static_assert(sizeof(GatherPush) == 20, "mirror of gather.comp's Push");

struct OneHotPush {  // onehot.comp
  uint32_t total, depth, inner;
  float on, off;
  int32_t ion, ioff;
};
static_assert(sizeof(OneHotPush) == 28, "mirror of onehot.comp's Push");

struct SegmentPush {  // segment.comp
  uint32_t total, rows, inner;
};
static_assert(sizeof(SegmentPush) == 12, "mirror of segment.comp's Push");

struct RangePush {  // range.comp
  uint32_t n;
  float start, delta;
  int32_t istart, idelta;
};
static_assert(sizeof(RangePush) == 20, "mirror of range.comp's Push");

struct RandomPush {  // random.comp
  uint32_t n;
  uint32_t key0, key1;
};
static_assert(sizeof(RandomPush) == 12, "mirror of random.comp's Push");

struct ConvPush {  // conv.comp
  uint32_t total;
  uint32_t batch, in_h, in_w, cin;
  uint32_t kh, kw, cout;
  uint32_t out_h, out_w;
  uint32_t stride_h, stride_w, dil_h, dil_w;
  int32_t pad_h, pad_w;
};
static_assert(sizeof(ConvPush) == 64, "mirror of conv.comp's Push");

struct PoolPush {  // pool.comp
  uint32_t total;
  uint32_t batch, in_h, in_w, c;
  uint32_t kh, kw;
  uint32_t out_h, out_w;
  uint32_t stride_h, stride_w;
  int32_t pad_h, pad_w;
};
static_assert(sizeof(PoolPush) == 52, "mirror of pool.comp's Push");

struct NdIndexPush {  // nd_index.comp
  uint32_t rows, k;
  uint32_t dims[8];
};
static_assert(sizeof(NdIndexPush) == 40, "mirror of nd_index.comp's Push");

struct SortPush {  // sort.comp
  uint32_t lines, r, inner, k;
  uint32_t descending;
  uint32_t mode;  // 0 init, 1 bitonic step, 2 write
  uint32_t pw;    // r rounded up to a power of two
  uint32_t kk, jj;
};
static_assert(sizeof(SortPush) == 36, "mirror of sort.comp's Push");

struct WherePush {  // where.comp
  uint32_t n, rank, count_only;
  uint32_t dims[8];
};
static_assert(sizeof(WherePush) == 44, "mirror of where.comp's Push");

struct FftRealPush {  // fft_real.comp
  uint32_t total, rows, cols, in_rows, in_cols;
};
static_assert(sizeof(FftRealPush) == 20, "mirror of fft_real.comp's Push");

}  // namespace cairn::gpu
