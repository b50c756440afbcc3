#include "runtime/core/philox.h"

#include <doctest/doctest.h>

#include <cmath>
#include <set>

namespace cairn {

// Known-answer vectors for Philox4x32-10 from the Random123 distribution (kat_vectors):
// counter (4 words), key (2 words) -> output (4 words).
TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors") {
  using philox::Counter;
  using philox::Key;
  CHECK(philox::philox4x32_10(Counter{0, 0, 0, 0}, Key{0, 0}) ==
        Counter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(philox::philox4x32_10(Counter{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                              Key{0xffffffffu, 0xffffffffu}) ==
        Counter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(philox::philox4x32_10(Counter{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                              Key{0xa4093822u, 0x299f31d0u}) ==
        Counter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("Philox round count and key change the output") {
  using philox::Counter;
  using philox::Key;
  Counter base = philox::philox4x32_10(Counter{1, 0, 0, 0}, Key{0, 0});
  CHECK(base != philox::philox4x32_10(Counter{2, 0, 0, 0}, Key{0, 0}));
  CHECK(base != philox::philox4x32_10(Counter{1, 0, 0, 0}, Key{1, 0}));
  CHECK(base != philox::philox4x32(Counter{1, 0, 0, 0}, Key{0, 0}, 7));
  // One round by hand: words 1 and 3 pick up the high products xor the key.
  Counter one = philox::philox4x32(Counter{1, 2, 3, 4}, Key{5, 6}, 1);
  uint64_t p0 = 0xD2511F53ull * 1, p1 = 0xCD9E8D57ull * 3;
  CHECK(one == Counter{static_cast<uint32_t>(p1 >> 32) ^ 2u ^ 5u, static_cast<uint32_t>(p1),
                       static_cast<uint32_t>(p0 >> 32) ^ 4u ^ 6u, static_cast<uint32_t>(p0)});
}

TEST_CASE("unit conversions stay in [0, 1) and use the documented bits") {
  CHECK(philox::unit_float(0) == 0.0f);
  CHECK(philox::unit_float(0xffffffffu) < 1.0f);
  CHECK(philox::unit_float(0xffffffffu) == 1.0f - 1.0f / 16777216.0f);
  CHECK(philox::unit_float(0x80000000u) == 0.5f);
  CHECK(philox::unit_double(0, 0) == 0.0);
  CHECK(philox::unit_double(0xffffffffu, 0xffffffffu) == 1.0 - 1.0 / 9007199254740992.0);
  CHECK(philox::unit_double(0x80000000u, 0) == 0.5);
  CHECK(philox::unit_float_bits(0xffffffffu, 11) == 1.0f - 1.0f / 2048.0f);
  CHECK(philox::unit_float_bits(0xffffffffu, 8) == 1.0f - 1.0f / 256.0f);
  CHECK(philox::unit_float_bits(0x00200000u, 11) == 1.0f / 2048.0f);
}

TEST_CASE("Box-Muller is finite at the extremes and matches the formula") {
  double z0, z1;
  philox::box_muller(0xffffffffu, 0, &z0, &z1);  // u1 = 1 -> r = 0
  CHECK(z0 == 0.0);
  CHECK(z1 == 0.0);
  philox::box_muller(0, 0, &z0, &z1);  // u1 = 2^-32: the largest radius, still finite
  CHECK(std::isfinite(z0));
  CHECK(z0 == doctest::Approx(std::sqrt(-2.0 * std::log(std::ldexp(1.0, -32)))));
  philox::box_muller(0x7fffffffu, 0x40000000u, &z0, &z1);  // theta = pi/2
  double r = std::sqrt(-2.0 * std::log(0x80000000u / 4294967296.0));
  CHECK(z0 == doctest::Approx(0.0).epsilon(1e-12).scale(1));
  CHECK(z1 == doctest::Approx(r));
  philox::box_muller_53(philox::Counter{0, 0, 0, 0}, &z0, &z1);  // u1 = 1
  CHECK(z0 == 0.0);
}

TEST_CASE("counters for consecutive blocks give distinct outputs") {
  std::set<uint32_t> seen;
  philox::Key key = philox::key_from(philox::mix64(123));
  for (uint64_t b = 0; b < 1000; ++b)
    for (uint32_t w : philox::philox4x32_10(philox::counter_for(b), key)) seen.insert(w);
  CHECK(seen.size() > 3990);  // 4000 words; 32-bit collisions are rare
  CHECK(philox::counter_for(0x123456789abcull, 7) == philox::Counter{0x56789abcu, 0x1234u, 7u, 0u});
}

}  // namespace cairn
