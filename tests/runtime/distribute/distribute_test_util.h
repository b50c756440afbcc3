// Shared by the distribute tests: contexts split into logical devices.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/distribute/strategy.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// A fresh context whose CPU is split into `n` logical devices "cpu:0".."cpu:n-1".
inline Ref<Context> split_cpu(int n) {
  ContextOptions o;
  o.num_threads = 1;
  Ref<Context> c = make_ref<Context>(o);
  c->set_logical_devices("cpu:0", std::vector<LogicalDeviceConfig>(static_cast<size_t>(n)));
  return c;
}

// A fresh context with Vulkan device 0 split into `n` logical devices, or null without a driver.
inline Ref<Context> split_vulkan(int n) {
  ContextOptions o;
  o.num_threads = 1;
  Ref<Context> c = make_ref<Context>(o);
  try {
    c->set_logical_devices("vulkan:0", std::vector<LogicalDeviceConfig>(static_cast<size_t>(n)));
    c->device("vulkan:0");
  } catch (const Error& e) {
    if (e.code() == Code::Unavailable || e.code() == Code::NotFound) return {};
    throw;
  }
  return c;
}

inline std::vector<std::string> names(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(prefix + ":" + std::to_string(i));
  return out;
}

// A fresh empty directory under $TEST_TMPDIR (or /tmp).
inline std::string make_dir() {
  static std::atomic<int> counter{0};
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/distribute_" + std::to_string(getpid()) + "_" +
                    std::to_string(counter++);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace cairn::test
