#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/io/internal/file.h"

namespace cairn::io::internal {

namespace {
Code errno_code(int err) {
  if (err == ENOENT || err == ENOTDIR) return Code::NotFound;
  if (err == EACCES || err == EPERM || err == EROFS) return Code::PermissionDenied;
  if (err == ENOSPC || err == EDQUOT || err == EMFILE || err == ENFILE || err == ENOMEM) return Code::ResourceExhausted;
  if (err == EISDIR || err == EINVAL || err == ENAMETOOLONG) return Code::InvalidArgument;
  return err == EIO ? Code::DataLoss : Code::Unknown;
}
}  // namespace

void raise_errno(int err, std::string_view path, std::string_view what) {
  char buf[256];
  const char* msg = strerror_r(err, buf, sizeof buf);  // GNU variant: returns the message
  raise(errno_code(err), "{}: {}: {}", path, what, msg);
}

void write_all(int fd, const void* data, size_t n, std::string_view path) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t put = ::write(fd, p, std::min<size_t>(n, size_t{1} << 30));
    if (put < 0) {
      if (errno == EINTR) continue;
      raise_errno(errno, path, "write");
    }
    p += put;
    n -= static_cast<size_t>(put);
  }
}

size_t pread_full(int fd, void* dst, size_t n, uint64_t offset, std::string_view path) {
  auto* p = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd, p + done, std::min<size_t>(n - done, size_t{1} << 30), static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      raise_errno(errno, path, "read");
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

uint64_t file_size(int fd, std::string_view path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) raise_errno(errno, path, "stat");
  return static_cast<uint64_t>(st.st_size);
}

}  // namespace cairn::io::internal
