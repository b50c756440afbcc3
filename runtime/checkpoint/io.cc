#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "runtime/checkpoint/internal/io.h"

namespace cairn::ckpt::internal {

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Fd::close_checked(std::string_view path) {
  if (fd_ < 0) return;
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) raise_errno(errno, path, "close");
}

void pread_exact(int fd, void* dst, size_t n, uint64_t offset, std::string_view path) {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    size_t chunk = std::min<size_t>(n, size_t{1} << 30);
    ssize_t got = ::pread(fd, p, chunk, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      raise_errno(errno, path, "read");
    }
    if (got == 0) raise(Code::DataLoss, "{}: unexpected end of file at offset {} (file truncated?)", path, offset);
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
}

void pwrite_all(int fd, const void* src, size_t n, uint64_t offset, std::string_view path) {
  auto* p = static_cast<const uint8_t*>(src);
  while (n > 0) {
    size_t chunk = std::min<size_t>(n, size_t{1} << 30);
    ssize_t put = ::pwrite(fd, p, chunk, static_cast<off_t>(offset));
    if (put < 0) {
      if (errno == EINTR) continue;
      raise_errno(errno, path, "write");
    }
    if (put == 0) raise(Code::Unknown, "{}: write made no progress at offset {}", path, offset);
    p += put;
    n -= static_cast<size_t>(put);
    offset += static_cast<uint64_t>(put);
  }
}

void pwrite_pair(int fd, const void* a, size_t na, const void* b, size_t nb, uint64_t offset, std::string_view path) {
  struct iovec iov[2] = {{const_cast<void*>(a), na}, {const_cast<void*>(b), nb}};
  int first = 0;
  while (first < 2) {
    ssize_t put = ::pwritev(fd, iov + first, 2 - first, static_cast<off_t>(offset));
    if (put < 0) {
      if (errno == EINTR) continue;
      raise_errno(errno, path, "write");
    }
    if (put == 0) raise(Code::Unknown, "{}: write made no progress at offset {}", path, offset);
    offset += static_cast<uint64_t>(put);
    auto left = static_cast<size_t>(put);
    for (; first < 2 && left >= iov[first].iov_len; ++first) left -= iov[first].iov_len;
    if (first < 2) {  // a short write: go on from inside this piece
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
}

void fsync_fd(int fd, std::string_view path) {
  if (::fsync(fd) != 0) raise_errno(errno, path, "fsync");
}

std::string dir_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void fsync_parent_dir(const std::string& path) {
  std::string dir = dir_name(path);
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) raise_errno(errno, dir, "open directory for fsync");
  // Some file systems refuse fsync on directories; the rename is then as durable as they allow.
  if (::fsync(fd.get()) != 0 && errno != EINVAL && errno != ENOTSUP) raise_errno(errno, dir, "fsync directory");
}

BufferedFile::BufferedFile(int fd, std::string path, size_t buffer_bytes, size_t direct_bytes, bool early_writeback)
    : fd_(fd),
      path_(std::move(path)),
      capacity_(buffer_bytes),
      direct_(std::min(direct_bytes, buffer_bytes)),
      early_writeback_(early_writeback) {
  buffer_.reserve(capacity_);
}

void BufferedFile::wrote(uint64_t n) {
  flushed_ += n;
  high_water_ = std::max(high_water_, flushed_);
  if (early_writeback_ && flushed_ >= writeback_start_ + kWritebackBytes) {
    // Only a hint: errors surface in the fsync that follows.
    ::sync_file_range(fd_, static_cast<off_t>(writeback_start_), static_cast<off_t>(flushed_ - writeback_start_),
                       SYNC_FILE_RANGE_WRITE);
    writeback_start_ = flushed_;
  }
}

void BufferedFile::flush() {
  if (buffer_.empty()) return;
  pwrite_all(fd_, buffer_.data(), buffer_.size(), flushed_, path_);
  wrote(buffer_.size());
  buffer_.clear();
}

void BufferedFile::write(const void* data, size_t n) {
  if (n == 0) return;
  if (n < direct_ && buffer_.size() + n <= capacity_) {
    const auto* p = static_cast<const uint8_t*>(data);
    buffer_.insert(buffer_.end(), p, p + n);
    return;
  }
  if (n >= direct_) {  // big block: straight from the caller's memory
    write_through(data, n);
    return;
  }
  flush();
  const auto* p = static_cast<const uint8_t*>(data);
  buffer_.insert(buffer_.end(), p, p + n);
}

void BufferedFile::write_through(const void* data, size_t n) {
  if (n == 0) return;
  if (buffer_.empty()) {
    pwrite_all(fd_, data, n, flushed_, path_);
  } else {  // what is buffered (padding, small entries) and the block in one call
    pwrite_pair(fd_, buffer_.data(), buffer_.size(), data, n, flushed_, path_);
  }
  wrote(buffer_.size() + n);
  buffer_.clear();
}

void BufferedFile::write_zeros(size_t n) {
  static const uint8_t kZeros[256] = {};
  while (n > 0) {
    size_t k = std::min(n, sizeof kZeros);
    write(kZeros, k);
    n -= k;
  }
}

void BufferedFile::rewind(uint64_t pos) {
  if (pos >= flushed_) {
    buffer_.resize(static_cast<size_t>(pos - flushed_));
  } else {
    buffer_.clear();
    flushed_ = pos;
    writeback_start_ = std::min(writeback_start_, pos);
  }
}

void BufferedFile::finish() {
  flush();
  if (high_water_ > flushed_ && ::ftruncate(fd_, static_cast<off_t>(flushed_)) != 0)
    raise_errno(errno, path_, "truncate");
}

}  // namespace cairn::ckpt::internal
