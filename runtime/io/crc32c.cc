#include "runtime/io/crc32c.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

namespace cairn::io {

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  // ISA-L works on the pre- and post-inverted register: seed with ~crc, invert the result.
  uint32_t reg = ~crc;
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));  // ISA-L takes a non-const pointer
  while (n > 0) {
    int chunk = static_cast<int>(std::min<size_t>(n, size_t{1} << 30));  // its length is an int
    reg = crc32_iscsi(p, chunk, reg);
    p += chunk;
    n -= static_cast<size_t>(chunk);
  }
  return ~reg;
}

}  // namespace cairn::io
