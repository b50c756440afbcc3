// POSIX file helpers for the checkpoint writer and reader (private to runtime/checkpoint).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/io/internal/file.h"

namespace cairn::ckpt::internal {

// "<path>: <what>: <strerror>" with the runtime's one errno-to-code mapping (runtime/io).
using io::internal::raise_errno;

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset();
  // close(2) that reports errors (a delayed write error can surface here).
  void close_checked(std::string_view path);

 private:
  int fd_ = -1;
};

// Reads exactly `n` bytes at `offset`; a short read raises DataLoss (the file shrank).
void pread_exact(int fd, void* dst, size_t n, uint64_t offset, std::string_view path);
// Writes exactly `n` bytes at `offset`.
void pwrite_all(int fd, const void* src, size_t n, uint64_t offset, std::string_view path);
// Writes `na` bytes from `a` and then `nb` from `b` at `offset` (one pwritev when the kernel takes
// it all); both sizes nonzero.
void pwrite_pair(int fd, const void* a, size_t na, const void* b, size_t nb, uint64_t offset, std::string_view path);
// fsync of a file, and of the directory holding `path` (so a rename into it is durable).
void fsync_fd(int fd, std::string_view path);
void fsync_parent_dir(const std::string& path);
// The directory part of `path` ("." when there is none) and the file name part.
std::string dir_name(const std::string& path);
std::string base_name(const std::string& path);

// Sequential writes through a large buffer, with positional writes underneath so the writer can
// step back over a payload it decides to store differently. Big blocks bypass the buffer.
class BufferedFile {
 public:
  // Writes of `direct_bytes` or more skip the buffer. With `early_writeback`, the kernel is asked
  // to start writing each stretch of kWritebackBytes to disk as soon as it is written (the final
  // fsync then has little left to wait for); the caller must still fsync.
  BufferedFile(int fd, std::string path, size_t buffer_bytes, size_t direct_bytes, bool early_writeback = false);
  static constexpr uint64_t kWritebackBytes = uint64_t{8} << 20;
  uint64_t position() const { return flushed_ + buffer_.size(); }
  void write(const void* data, size_t n);
  // Writes `data` straight from the caller's memory, whatever its size, after what is buffered (in
  // the same call): for the last, shorter piece of a large block written piece by piece, which
  // would otherwise be copied into the buffer first.
  void write_through(const void* data, size_t n);
  void write_zeros(size_t n);
  // Moves the write position back to `pos` (<= position()); later writes overwrite what was there.
  void rewind(uint64_t pos);
  // Flushes the buffer and cuts the file at the current position when it was ever longer.
  void finish();

 private:
  void flush();
  void wrote(uint64_t n);  // bookkeeping after n bytes went to the file at flushed_
  int fd_;
  std::string path_;
  size_t capacity_;
  size_t direct_;
  std::vector<uint8_t> buffer_;
  uint64_t flushed_ = 0;       // bytes [0, flushed_) are in the file
  uint64_t high_water_ = 0;    // the furthest byte ever written to the file
  bool early_writeback_;
  uint64_t writeback_start_ = 0;  // bytes before this were handed to sync_file_range
};

}  // namespace cairn::ckpt::internal
