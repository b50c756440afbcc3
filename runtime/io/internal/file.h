// POSIX and byte-order helpers shared by the record writer, reader and index (private to runtime/io).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/error.h"

namespace cairn::io::internal {

// The status code for an errno value (ENOENT -> NotFound, EACCES -> PermissionDenied, ENOSPC ->
// ResourceExhausted, EBUSY from renaming onto "<dir>/." -> InvalidArgument, ...): the one mapping
// every file reader and writer in the runtime uses.
Code code_for_errno(int err);
// Raises "<path>: <what>: <strerror>" with code_for_errno(err).
[[noreturn]] void raise_errno(int err, std::string_view path, std::string_view what);

// write(2) until all n bytes are written (EINTR retried).
void write_all(int fd, const void* data, size_t n, std::string_view path);
// pread(2) of up to n bytes at `offset`, retrying EINTR and short reads until n bytes or end of file;
// returns the bytes read (< n only at end of file).
size_t pread_full(int fd, void* dst, size_t n, uint64_t offset, std::string_view path);
// The current size of an open file.
uint64_t file_size(int fd, std::string_view path);

inline void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

}  // namespace cairn::io::internal
