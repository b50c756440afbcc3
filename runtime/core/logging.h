// Log levels and sinks. A context carries one sink; with none, warnings and errors go to stderr.
#pragma once

#include <string>

namespace cairn {

enum class LogLevel : int { Debug = 0, Info = 1, Warning = 2, Error = 3 };

struct LogSink {
  void (*callback)(void* user_data, LogLevel level, const char* message) = nullptr;
  void* user_data = nullptr;
  LogLevel min_level = LogLevel::Warning;
  void (*release)(void* user_data) = nullptr;  // called once when the owning context is destroyed

  void log(LogLevel level, const std::string& message) const;
};

}  // namespace cairn
