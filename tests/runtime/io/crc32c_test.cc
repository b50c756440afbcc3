#include "runtime/io/crc32c.h"

#include <doctest/doctest.h>

#include <random>
#include <string>

namespace cairn::io {
namespace {

// Bit by bit, from the definition (reflected polynomial 0x82F63B78).
uint32_t reference_crc32c(const std::string& s) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

TEST_CASE("crc32c: the check value and the empty string") {
  CHECK(crc32c("123456789", 9) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0u);
  // RFC 3720 B.4: 32 bytes of zeros, 32 bytes of 0xFF.
  std::string zeros(32, '\0'), ones(32, '\xff');
  CHECK(crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  CHECK(crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
}

TEST_CASE("crc32c: matches the bitwise definition at every length and alignment, and extends") {
  std::mt19937 rng(7);
  std::string buf(4096 + 64, '\0');
  for (auto& c : buf) c = static_cast<char>(rng());
  for (size_t len : {1, 2, 3, 7, 8, 15, 16, 31, 63, 64, 255, 256, 1000, 4096}) {
    for (size_t align = 0; align < 8; ++align) {
      std::string s = buf.substr(align, len);
      uint32_t want = reference_crc32c(s);
      CHECK(crc32c(buf.data() + align, len) == want);
      size_t cut = len / 3;
      CHECK(crc32c_extend(crc32c(s.data(), cut), s.data() + cut, len - cut) == want);
    }
  }
}

TEST_CASE("crc32c: masking as TensorFlow's, and unmasking undoes it") {
  uint32_t crc = crc32c("foo", 3);
  CHECK(mask_crc(crc) != crc);
  CHECK(mask_crc(mask_crc(crc)) != crc);
  CHECK(unmask_crc(mask_crc(crc)) == crc);
  CHECK(unmask_crc(unmask_crc(mask_crc(mask_crc(crc)))) == crc);
  // ((c >> 15) | (c << 17)) + 0xa282ead8, spelled out for one value.
  CHECK(mask_crc(0x00000001u) == 0x00020000u + 0xa282ead8u);
  CHECK(mask_crc(0x00008000u) == 0x00000001u + 0xa282ead8u);
}

}  // namespace
}  // namespace cairn::io
