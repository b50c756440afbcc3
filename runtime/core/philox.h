// Philox4x32-10, the counter-based generator of Salmon et al., "Parallel Random Numbers: As Easy
// as 1, 2, 3" (SC'11): 10 rounds of a multiply/xor bijection of a 128-bit counter under a 64-bit
// key. Random ops map element i to (counter derived from i, key), so a value depends only on the
// key and its index, never on how the work is split across threads.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace cairn::philox {

using Counter = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

// One round: two 32x32->64 multiplies; the high halves are mixed with the other words and the key.
inline Counter philox_round(const Counter& c, const Key& k) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
  return Counter{static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
                 static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
}

// Philox4x32 with `rounds` rounds (10 is the standard, crush-resistant choice). The key is bumped by
// the Weyl constants between rounds.
inline Counter philox4x32(Counter c, Key k, int rounds = 10) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    c = philox_round(c, k);
  }
  return c;
}

inline Counter philox4x32_10(const Counter& c, const Key& k) { return philox4x32(c, k, 10); }

// splitmix64's finalizer: a bijective mix used to derive keys from user seeds.
inline uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline Key key_from(uint64_t k) { return Key{static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32)}; }

// The key of a random op call: from the op's (seed, seed2) when either is non-zero, so explicit
// seeds reproduce exactly across calls and contexts; otherwise the per-call seed the context hands
// out (which follows the context's global seed).
inline Key op_key(int64_t seed, int64_t seed2, uint64_t call_seed) {
  if (seed == 0 && seed2 == 0) return key_from(call_seed);
  return key_from(mix64(mix64(static_cast<uint64_t>(seed)) ^ static_cast<uint64_t>(seed2)));
}

// The counter for block `block` (a 64-bit index) and `attempt` (resampling round, 0 first).
inline Counter counter_for(uint64_t block, uint32_t attempt = 0) {
  return Counter{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), attempt, 0u};
}

// Uniform [0, 1) with 24 random bits, exactly representable in float.
inline float unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// Uniform [0, 1) with 53 random bits from two words.
inline double unit_double(uint32_t hi, uint32_t lo) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);  // 53 bits
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}
// Uniform [0, 1) with `bits` random bits (<= 24), exactly representable in a float with `bits`
// significand bits: keeps float16 (11) and bfloat16 (8) results strictly below 1 after rounding.
inline float unit_float_bits(uint32_t x, int bits) {
  return static_cast<float>(x >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));
}

// Box-Muller: two standard normals from two words (u1 in (0, 1], u2 in [0, 1)).
inline void box_muller(uint32_t a, uint32_t b, double* z0, double* z1) {
  const double u1 = (static_cast<double>(a) + 1.0) * (1.0 / 4294967296.0);
  const double u2 = static_cast<double>(b) * (1.0 / 4294967296.0);
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 6.283185307179586476925286766559 * u2;
  *z0 = r * std::cos(theta);
  *z1 = r * std::sin(theta);
}
// Box-Muller with 53-bit uniforms from four words.
inline void box_muller_53(const Counter& w, double* z0, double* z1) {
  const double u1 = 1.0 - unit_double(w[0], w[1]);  // (0, 1]
  const double u2 = unit_double(w[2], w[3]);
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 6.283185307179586476925286766559 * u2;
  *z0 = r * std::cos(theta);
  *z1 = r * std::sin(theta);
}

}  // namespace cairn::philox
