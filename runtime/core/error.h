// Errors inside the runtime are exceptions carrying a status code; the C API turns them into
// cairn_status values at its boundary (capi/status.h). Messages name the op or function first.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string>
#include <utility>

namespace cairn {

// Same values as cairn_code (TensorFlow's TF_Code, the gRPC canonical codes).
enum class Code : int {
  Ok = 0,
  Cancelled = 1,
  Unknown = 2,
  InvalidArgument = 3,
  DeadlineExceeded = 4,
  NotFound = 5,
  AlreadyExists = 6,
  PermissionDenied = 7,
  ResourceExhausted = 8,
  FailedPrecondition = 9,
  Aborted = 10,
  OutOfRange = 11,
  Unimplemented = 12,
  Internal = 13,
  Unavailable = 14,
  DataLoss = 15,
};

class Error : public std::exception {
 public:
  Error(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  Code code_;
  std::string message_;
};

template <class... Args>
[[noreturn]] void raise(Code code, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace cairn
