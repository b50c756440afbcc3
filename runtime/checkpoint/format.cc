#include "runtime/checkpoint/format.h"

#include <xxhash.h>

#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "runtime/core/error.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint payloads are stored in host order, which must be little-endian"
#endif

namespace cairn::ckpt {

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::None: return "none";
    case Codec::Zstd: return "zstd";
    case Codec::ZstdShuffle: return "zstd+shuffle";
  }
  return "invalid";
}

void validate_object_graph(const ObjectGraph& graph, std::string_view what) {
  const size_t n = graph.nodes.size();
  for (size_t i = 0; i < n; ++i) {
    const Node& node = graph.nodes[i];
    for (const ChildEdge& c : node.children)
      if (c.node_id >= n)
        raise(Code::InvalidArgument, "{}: node {} has a child '{}' pointing at node {}, but there are {} nodes", what, i,
              c.name, c.node_id, n);
    for (const SlotRef& s : node.slots)
      if (s.optimizer_node >= n || s.variable_node >= n || s.slot_node >= n)
        raise(Code::InvalidArgument, "{}: node {} has slot '{}' with a node id out of range ({}, {}, {}; {} nodes)", what, i,
              s.slot_name, s.optimizer_node, s.variable_node, s.slot_node, n);
  }
}

void encode_header(const Header& h, uint8_t out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, kHeaderMagic, 8);
  store_le32(out + 8, h.format_version);
  store_le32(out + 12, h.flags);
  store_le32(out + 16, kHeaderSize);
  store_le32(out + 20, kPayloadAlignment);
  store_le64(out + 56, checksum(out, 56));
}

Header decode_header(const uint8_t in[kHeaderSize], std::string_view path) {
  if (std::memcmp(in, kHeaderMagic, 8) != 0)
    raise(Code::DataLoss, "{}: not a Cairn checkpoint (bad header magic)", path);
  if (load_le64(in + 56) != checksum(in, 56) && kEnforceChecksums) raise(Code::DataLoss, "{}: header checksum mismatch", path);
  Header h;
  h.format_version = load_le32(in + 8);
  h.flags = load_le32(in + 12);
  if (h.format_version < kMinFormatVersion || h.format_version > kFormatVersion)
    raise(Code::InvalidArgument, "{}: checkpoint format version {} is not supported (this library reads {} to {})", path,
          h.format_version, kMinFormatVersion, kFormatVersion);
  if (h.flags != 0) raise(Code::InvalidArgument, "{}: header has unknown flags {:#x}", path, h.flags);
  if (load_le32(in + 16) != kHeaderSize || load_le32(in + 20) != kPayloadAlignment)
    raise(Code::DataLoss, "{}: header declares an unexpected header size or alignment", path);
  for (size_t i = 24; i < 56; ++i)
    if (in[i] != 0) raise(Code::DataLoss, "{}: header reserved bytes are not zero", path);
  return h;
}

void encode_footer(const Footer& f, uint8_t out[kFooterSize]) {
  std::memset(out, 0, kFooterSize);
  store_le64(out, f.index_offset);
  store_le64(out + 8, f.index_size);
  store_le64(out + 16, f.index_checksum);
  store_le32(out + 24, f.format_version);
  std::memcpy(out + 32, kFooterMagic, 8);
}

Footer decode_footer(const uint8_t in[kFooterSize], std::string_view path) {
  if (std::memcmp(in + 32, kFooterMagic, 8) != 0)
    raise(Code::DataLoss, "{}: footer magic missing (file truncated or damaged)", path);
  if (load_le32(in + 28) != 0) raise(Code::DataLoss, "{}: footer reserved bytes are not zero", path);
  Footer f;
  f.index_offset = load_le64(in);
  f.index_size = load_le64(in + 8);
  f.index_checksum = load_le64(in + 16);
  f.format_version = load_le32(in + 24);
  return f;
}

uint64_t checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

namespace {
template <size_t W>
void shuffle_fixed(const uint8_t* src, uint8_t* dst, size_t n, size_t begin = 0) {
  for (size_t i = begin; i < n; ++i)
    for (size_t b = 0; b < W; ++b) dst[b * n + i] = src[i * W + b];
}
template <size_t W>
void unshuffle_fixed(const uint8_t* src, uint8_t* dst, size_t n, size_t begin = 0) {
  for (size_t i = begin; i < n; ++i)
    for (size_t b = 0; b < W; ++b) dst[i * W + b] = src[b * n + i];
}

#ifdef __SSE2__
// 16 elements at a time with SSE2 (part of every x86-64); the scalar loop does the tail, so the
// bytes are the same as the scalar version's.
__m128i load16(const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
void store16(uint8_t* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

void shuffle2(const uint8_t* src, uint8_t* dst, size_t n) {
  const __m128i low = _mm_set1_epi16(0xff);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i a = load16(src + 2 * i), b = load16(src + 2 * i + 16);
    store16(dst + i, _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)));
    store16(dst + n + i, _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)));
  }
  shuffle_fixed<2>(src, dst, n, i);
}

void unshuffle2(const uint8_t* src, uint8_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i p0 = load16(src + i), p1 = load16(src + n + i);
    store16(dst + 2 * i, _mm_unpacklo_epi8(p0, p1));
    store16(dst + 2 * i + 16, _mm_unpackhi_epi8(p0, p1));
  }
  unshuffle_fixed<2>(src, dst, n, i);
}

// Byte `shift / 8` of each of the 16 words in a..d, as 16 bytes.
inline __m128i byte_plane(__m128i a, __m128i b, __m128i c, __m128i d, int shift) {
  const __m128i low = _mm_set1_epi32(0xff);
  const __m128i sh = _mm_cvtsi32_si128(shift);
  a = _mm_and_si128(_mm_srl_epi32(a, sh), low);
  b = _mm_and_si128(_mm_srl_epi32(b, sh), low);
  c = _mm_and_si128(_mm_srl_epi32(c, sh), low);
  d = _mm_and_si128(_mm_srl_epi32(d, sh), low);
  // Values 0..255 pass the signed 32->16 and unsigned 16->8 saturating packs unchanged.
  return _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d));
}

void shuffle4(const uint8_t* src, uint8_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint8_t* s = src + 4 * i;
    __m128i a = load16(s), b = load16(s + 16), c = load16(s + 32), d = load16(s + 48);
    for (int k = 0; k < 4; ++k) store16(dst + k * n + i, byte_plane(a, b, c, d, 8 * k));
  }
  shuffle_fixed<4>(src, dst, n, i);
}

void unshuffle4(const uint8_t* src, uint8_t* dst, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i p0 = load16(src + i), p1 = load16(src + n + i), p2 = load16(src + 2 * n + i), p3 = load16(src + 3 * n + i);
    __m128i lo01 = _mm_unpacklo_epi8(p0, p1), hi01 = _mm_unpackhi_epi8(p0, p1);
    __m128i lo23 = _mm_unpacklo_epi8(p2, p3), hi23 = _mm_unpackhi_epi8(p2, p3);
    uint8_t* d = dst + 4 * i;
    store16(d, _mm_unpacklo_epi16(lo01, lo23));
    store16(d + 16, _mm_unpackhi_epi16(lo01, lo23));
    store16(d + 32, _mm_unpacklo_epi16(hi01, hi23));
    store16(d + 48, _mm_unpackhi_epi16(hi01, hi23));
  }
  unshuffle_fixed<4>(src, dst, n, i);
}
#else
void shuffle2(const uint8_t* src, uint8_t* dst, size_t n) { shuffle_fixed<2>(src, dst, n); }
void unshuffle2(const uint8_t* src, uint8_t* dst, size_t n) { unshuffle_fixed<2>(src, dst, n); }
void shuffle4(const uint8_t* src, uint8_t* dst, size_t n) { shuffle_fixed<4>(src, dst, n); }
void unshuffle4(const uint8_t* src, uint8_t* dst, size_t n) { unshuffle_fixed<4>(src, dst, n); }
#endif
}  // namespace

void shuffle_bytes(const uint8_t* src, uint8_t* dst, size_t size, size_t width) {
  const size_t n = width ? size / width : 0;
  switch (width) {
    case 2: return shuffle2(src, dst, n);
    case 4: return shuffle4(src, dst, n);
    case 8: return shuffle_fixed<8>(src, dst, n);
    default:
      if (width <= 1) {
        if (size) std::memcpy(dst, src, size);
        return;
      }
      for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < width; ++b) dst[b * n + i] = src[i * width + b];
  }
}

void unshuffle_bytes(const uint8_t* src, uint8_t* dst, size_t size, size_t width) {
  const size_t n = width ? size / width : 0;
  switch (width) {
    case 2: return unshuffle2(src, dst, n);
    case 4: return unshuffle4(src, dst, n);
    case 8: return unshuffle_fixed<8>(src, dst, n);
    default:
      if (width <= 1) {
        if (size) std::memcpy(dst, src, size);
        return;
      }
      for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < width; ++b) dst[i * width + b] = src[b * n + i];
  }
}

}  // namespace cairn::ckpt
