// Shared by the distribute tests: contexts split into logical devices.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/distribute/strategy.h"
#include "runtime/nn/layer.h"
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
// The default device is vulkan:0, so a trace's constants go to the replicas' device kind.
// With `cpu_fallback`, ops without a Vulkan kernel for a dtype (keras' float64 metrics) run on the CPU.
inline Ref<Context> split_vulkan(int n, bool cpu_fallback = false) {
  ContextOptions o;
  o.num_threads = 1;
  o.device = "vulkan:0";
  o.gpu.cpu_fallback = cpu_fallback;
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

// A tensor's values, read on the host (Vulkan tensors included).
inline std::vector<double> host_doubles(Context& c, const Tensor& t) {
  return as_doubles(t.device()->is_host() ? t : tensor_on_device(t, c.cpu()));
}

// The float reduction-order bound of the mirrored tests: a mirrored run sums each gradient in
// another order (per-replica partial sums, then replicas in order) than one device summing the
// global batch, so the weights differ by rounding only: a few float32 ulps per step, amplified a
// little by the steps after. We require max |diff| <= 1e-5 * max |w| (float32's epsilon is 1.2e-7).
inline void check_reduction_order_bound(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  double max_w = 0, max_diff = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    max_w = std::max(max_w, std::fabs(want[i]));
    max_diff = std::max(max_diff, std::fabs(got[i] - want[i]));
  }
  MESSAGE("max |diff| " << max_diff << ", max |w| " << max_w << ", ratio " << max_diff / max_w);
  CHECK(max_diff <= 1e-5 * max_w);
  CHECK(max_w > 0.1);  // the weights are not trivially zero
}

// Appends Dense(hidden, activation) -> Dense(outputs) with seeded kernels to `m` and, with a
// `device`, builds it on a [1, 4] input there (inside a strategy's scope: mirrored weights).
inline void add_two_dense(Context& c, nn::Sequential& m, int64_t hidden, nn::Activation activation,
                          int64_t outputs, uint64_t seed, Device* device) {
  nn::DenseOptions d;
  d.units = hidden;
  d.activation = activation;
  d.kernel_initializer.seed = seed;
  m.add(nn::dense(c, d));
  d.units = outputs;
  d.activation = nn::Activation::Linear;
  d.kernel_initializer.seed = seed + 1;
  m.add(nn::dense(c, d));
  if (device) m(tensor_on_device(make<float>({0, 0, 0, 0}, Shape{1, 4}), *device));
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
