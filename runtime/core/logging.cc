#include "runtime/core/logging.h"

#include <cstdio>

namespace cairn {

void LogSink::log(LogLevel level, const std::string& message) const {
  if (level < min_level) return;
  if (callback) {
    callback(user_data, level, message.c_str());
    return;
  }
  static const char* const kNames[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "cairn %s: %s\n", kNames[static_cast<int>(level)], message.c_str());
}

}  // namespace cairn
