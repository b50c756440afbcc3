#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/io/internal/file.h"

namespace cairn::io::internal {

Code code_for_errno(int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Code::NotFound;
    case EACCES:
    case EPERM:
    case EROFS: return Code::PermissionDenied;
    case EEXIST: return Code::AlreadyExists;
    case ENOSPC:
    case EDQUOT:
    case ENOMEM:
    case EMFILE:
    case ENFILE: return Code::ResourceExhausted;
    case EIO: return Code::DataLoss;
    case EISDIR:
    case EINVAL:
    case ENAMETOOLONG:
    // A path that cannot be written as a file: "<dir>/." (rename gives EBUSY), a non-empty
    // directory in the way, a symlink loop.
    case EBUSY:
    case ENOTEMPTY:
    case ELOOP: return Code::InvalidArgument;
    default: return Code::Unknown;
  }
}

void raise_errno(int err, std::string_view path, std::string_view what) {
  char buf[256];
  const char* msg = strerror_r(err, buf, sizeof buf);  // GNU variant: returns the message
  raise(code_for_errno(err), "{}: {}: {}", path, what, msg);
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
