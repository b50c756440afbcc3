// CRC32C (Castagnoli), the checksum of TFRecord files, event files and TensorFlow checkpoints,
// computed by ISA-L's crc32_iscsi (8-9 GB/s here), and TensorFlow's masking of stored CRCs.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cairn::io {

// The CRC32C of `data` continuing from `crc` (the CRC32C of the bytes before it; 0 to start).
// crc32c_extend(crc32c(a), b) == crc32c(a + b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);

// The standard CRC32C of n bytes: crc32c("123456789", 9) == 0xE3069283.
inline uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }

// TensorFlow stores masked CRCs (core/lib/hash/crc32c.h), so a CRC of data that holds CRCs stays
// well distributed: rotate right by 15 and add a constant.
inline constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
inline constexpr uint32_t mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
inline constexpr uint32_t unmask_crc(uint32_t masked) {
  uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace cairn::io
