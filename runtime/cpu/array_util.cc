#include "runtime/cpu/array_util.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/convert.h"

namespace cairn {

void convert_scalar(DType dtype, double v, void* dst) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = convert<T>(v);
    std::memcpy(dst, &value, sizeof(T));
  });
}

void row_major_strides(const Shape& s, int64_t* strides) {
  int64_t stride = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= s[i];
  }
}

void copy_bytes(ThreadPool& pool, void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  pool.parallel_for(static_cast<int64_t>(nbytes), 4 * kCopyGrainBytes,
                    [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, static_cast<size_t>(e - b)); });
}

namespace {

template <size_t E>
void fill_fixed(char* dst, int64_t n, const void* value) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * E, value, E);
}

bool all_zero_bytes(const void* value, size_t elem) {
  const unsigned char* p = static_cast<const unsigned char*>(value);
  for (size_t i = 0; i < elem; ++i)
    if (p[i] != 0) return false;
  return true;
}

}  // namespace

void fill_elements(void* dst, int64_t n, const void* value, size_t elem) {
  if (n <= 0) return;
  char* d = static_cast<char*>(dst);
  if (all_zero_bytes(value, elem)) {
    std::memset(d, 0, static_cast<size_t>(n) * elem);
    return;
  }
  switch (elem) {
    case 1: std::memset(d, *static_cast<const unsigned char*>(value), static_cast<size_t>(n)); break;
    case 2: fill_fixed<2>(d, n, value); break;
    case 4: fill_fixed<4>(d, n, value); break;
    case 8: fill_fixed<8>(d, n, value); break;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * elem, value, elem);
  }
}

void fill_elements(ThreadPool& pool, void* dst, int64_t n, const void* value, size_t elem) {
  if (n <= 0) return;
  char* d = static_cast<char*>(dst);
  const int64_t grain = std::max<int64_t>(1, 4 * kCopyGrainBytes / static_cast<int64_t>(elem));
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) { fill_elements(d + b * elem, e - b, value, elem); });
}

namespace {

// Walks the rows of an index space (every dimension but the last) keeping byte offsets into the
// destination and source.
struct Odometer {
  int rank;
  const int64_t* shape;
  const int64_t* dst_strides;  // bytes
  const int64_t* src_strides;  // bytes
  int64_t coord[kMaxRank] = {};
  int64_t dst = 0, src = 0;

  void seek(int64_t index) {
    dst = src = 0;
    for (int d = rank - 1; d >= 0; --d) {
      coord[d] = index % shape[d];
      index /= shape[d];
      dst += coord[d] * dst_strides[d];
      src += coord[d] * src_strides[d];
    }
  }
  void next() {
    for (int d = rank - 1; d >= 0; --d) {
      dst += dst_strides[d];
      src += src_strides[d];
      if (++coord[d] < shape[d]) return;
      dst -= dst_strides[d] * shape[d];
      src -= src_strides[d] * shape[d];
      coord[d] = 0;
    }
  }
};

template <size_t E>
void strided_run(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, E);
}

// Copies n elements with byte strides ds and ss.
void strided_run_any(size_t elem, char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  switch (elem) {
    case 1: strided_run<1>(dst, ds, src, ss, n); break;
    case 2: strided_run<2>(dst, ds, src, ss, n); break;
    case 4: strided_run<4>(dst, ds, src, ss, n); break;
    case 8: strided_run<8>(dst, ds, src, ss, n); break;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, src + i * ss, elem);
  }
}

// Tiled 2-D transpose block: rows [k0,k1) of dimension k (source-contiguous) against the
// destination-contiguous last dimension.
template <size_t E>
void transpose_tile(char* dst, int64_t dk, const char* src, int64_t sl, int64_t k0, int64_t k1, int64_t l0,
                    int64_t l1) {
  for (int64_t k = k0; k < k1; ++k) {
    char* d = dst + k * dk;
    const char* s = src + k * static_cast<int64_t>(E);
    for (int64_t l = l0; l < l1; ++l) std::memcpy(d + l * static_cast<int64_t>(E), s + l * sl, E);
  }
}

void transpose_tile_any(size_t elem, char* dst, int64_t dk, const char* src, int64_t sl, int64_t k0, int64_t k1,
                        int64_t l0, int64_t l1) {
  switch (elem) {
    case 1: transpose_tile<1>(dst, dk, src, sl, k0, k1, l0, l1); break;
    case 2: transpose_tile<2>(dst, dk, src, sl, k0, k1, l0, l1); break;
    case 4: transpose_tile<4>(dst, dk, src, sl, k0, k1, l0, l1); break;
    case 8: transpose_tile<8>(dst, dk, src, sl, k0, k1, l0, l1); break;
    default:
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t l = l0; l < l1; ++l)
          std::memcpy(dst + k * dk + l * static_cast<int64_t>(elem), src + k * static_cast<int64_t>(elem) + l * sl, elem);
  }
}

constexpr int64_t kTile = 32;

}  // namespace

void strided_copy(ThreadPool& pool, size_t elem, int rank, const int64_t* shape, char* dst,
                  const int64_t* dst_strides, const char* src, const int64_t* src_strides) {
  // Drop size-1 dimensions and merge neighbours that are contiguous on both sides. Strides
  // become bytes.
  const int64_t e = static_cast<int64_t>(elem);
  int64_t sh[kMaxRank], ds[kMaxRank], ss[kMaxRank];
  int r = 0;
  for (int i = 0; i < rank; ++i) {
    if (shape[i] == 0) return;
    if (shape[i] == 1) continue;
    const int64_t d = dst_strides[i] * e, s = src_strides[i] * e;
    if (r > 0 && ds[r - 1] == d * shape[i] && ss[r - 1] == s * shape[i]) {
      sh[r - 1] *= shape[i];
      ds[r - 1] = d;
      ss[r - 1] = s;
    } else {
      sh[r] = shape[i];
      ds[r] = d;
      ss[r] = s;
      ++r;
    }
  }
  if (r == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  const int64_t width = sh[r - 1];
  int64_t rows = 1;
  for (int i = 0; i < r - 1; ++i) rows *= sh[i];

  // Contiguous rows: memcpy each.
  if (ds[r - 1] == e && ss[r - 1] == e) {
    const int64_t row_bytes = width * e;
    if (rows == 1) {
      copy_bytes(pool, dst, src, static_cast<size_t>(row_bytes));
      return;
    }
    pool.parallel_for(rows, std::max<int64_t>(1, kCopyGrainBytes / row_bytes), [&](int64_t b, int64_t end) {
      Odometer it{r - 1, sh, ds, ss};
      it.seek(b);
      for (int64_t row = b; row < end; ++row, it.next())
        std::memcpy(dst + it.dst, src + it.src, static_cast<size_t>(row_bytes));
    });
    return;
  }

  // Transposing copies: the destination's last dimension is contiguous and some other dimension
  // is contiguous in the source. Copy square tiles so both sides stay in cache.
  if (ds[r - 1] == e) {
    int k = -1;
    for (int i = 0; i < r - 1; ++i)
      if (ss[i] == e) k = i;
    if (k >= 0 && sh[k] >= 8 && width >= 8) {
      int64_t osh[kMaxRank], ods[kMaxRank], oss[kMaxRank];
      int orank = 0;
      int64_t outer = 1;
      for (int i = 0; i < r - 1; ++i) {
        if (i == k) continue;
        osh[orank] = sh[i];
        ods[orank] = ds[i];
        oss[orank] = ss[i];
        outer *= sh[i];
        ++orank;
      }
      const int64_t nk = sh[k], dk = ds[k], sl = ss[r - 1];
      const int64_t k_tiles = (nk + kTile - 1) / kTile;
      const int64_t strip_bytes = kTile * width * e;
      pool.parallel_for(outer * k_tiles, std::max<int64_t>(1, kCopyGrainBytes / strip_bytes), [&](int64_t b, int64_t end) {
        Odometer it{orank, osh, ods, oss};
        it.seek(b / k_tiles);
        int64_t cur = b / k_tiles;
        for (int64_t item = b; item < end; ++item) {
          const int64_t o = item / k_tiles, kt = item % k_tiles;
          while (cur < o) {
            it.next();
            ++cur;
          }
          const int64_t k0 = kt * kTile, k1 = std::min(nk, k0 + kTile);
          for (int64_t l0 = 0; l0 < width; l0 += kTile)
            transpose_tile_any(elem, dst + it.dst, dk, src + it.src, sl, k0, k1, l0, std::min(width, l0 + kTile));
        }
      });
      return;
    }
  }

  // Anything else: element by element along the last dimension (split within the row when
  // there is only one).
  if (rows == 1) {
    pool.parallel_for(width, std::max<int64_t>(1, kCopyGrainBytes / e), [&](int64_t b, int64_t end) {
      strided_run_any(elem, dst + b * ds[0], ds[0], src + b * ss[0], ss[0], end - b);
    });
    return;
  }
  pool.parallel_for(rows, std::max<int64_t>(1, kCopyGrainBytes / (width * e)), [&](int64_t b, int64_t end) {
    Odometer it{r - 1, sh, ds, ss};
    it.seek(b);
    for (int64_t row = b; row < end; ++row, it.next())
      strided_run_any(elem, dst + it.dst, ds[r - 1], src + it.src, ss[r - 1], width);
  });
}

namespace {

// Runs `copy(item)` for items = outer * n, where item t moves `bytes(t % n)` bytes. Few large
// items each use the whole pool; many small ones are spread over it.
template <class Copy>
void for_blocks(ThreadPool& pool, int64_t outer, int n, int64_t total_width, Copy&& copy) {
  const int64_t items = outer * n;
  if (items == 0 || total_width == 0) return;
  const int64_t avg = std::max<int64_t>(1, total_width / n);
  if (avg >= 4 * kCopyGrainBytes) {
    for (int64_t t = 0; t < items; ++t) copy(t, true);
    return;
  }
  pool.parallel_for(items, std::max<int64_t>(1, kCopyGrainBytes / avg), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) copy(t, false);
  });
}

}  // namespace

void concat_rows(ThreadPool& pool, int64_t outer, int n, const char* const* srcs, const int64_t* widths, char* dst) {
  std::vector<int64_t> offset(static_cast<size_t>(n) + 1, 0);
  for (int j = 0; j < n; ++j) offset[j + 1] = offset[j] + widths[j];
  const int64_t total = offset[n];
  for_blocks(pool, outer, n, total, [&](int64_t t, bool big) {
    const int64_t o = t / n;
    const int j = static_cast<int>(t % n);
    if (widths[j] == 0) return;
    char* d = dst + o * total + offset[j];
    const char* s = srcs[j] + o * widths[j];
    if (big) copy_bytes(pool, d, s, static_cast<size_t>(widths[j]));
    else std::memcpy(d, s, static_cast<size_t>(widths[j]));
  });
}

void split_rows(ThreadPool& pool, int64_t outer, int n, const char* src, char* const* dsts, const int64_t* widths) {
  std::vector<int64_t> offset(static_cast<size_t>(n) + 1, 0);
  for (int j = 0; j < n; ++j) offset[j + 1] = offset[j] + widths[j];
  const int64_t total = offset[n];
  for_blocks(pool, outer, n, total, [&](int64_t t, bool big) {
    const int64_t o = t / n;
    const int j = static_cast<int>(t % n);
    if (widths[j] == 0) return;
    char* d = dsts[j] + o * widths[j];
    const char* s = src + o * total + offset[j];
    if (big) copy_bytes(pool, d, s, static_cast<size_t>(widths[j]));
    else std::memcpy(d, s, static_cast<size_t>(widths[j]));
  });
}

}  // namespace cairn
