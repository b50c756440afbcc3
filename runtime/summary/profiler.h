// The profiler (tf.profiler / tf.summary.trace_on + trace_export): while on, each eager op, each
// node of a graph replay (and the replay as a whole) and, on Vulkan, each batch of GPU work records
// its name, device, start and duration (runtime/core/profile_events.h records them; GPU times come
// from vkCmdWriteTimestamp, mapped onto the host clock: gpu/vulkan). Off, it costs eager dispatch
// and replay one relaxed load and a predictable branch.
//
// Exports: Chrome trace-event JSON (Perfetto, chrome://tracing), and the same gzipped where
// TensorBoard's profile plugin looks: <logdir>/plugins/profile/<run_name>/<hostname>.trace.json.gz.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/profile_events.h"

namespace cairn::summary {

struct ProfilerOptions {
  size_t max_events = 1000000;   // events kept; later ones are counted as dropped
  bool vulkan_timestamps = true;  // GPU timestamps on Vulkan devices that support them
};

// A stopped profile: its events sorted by start time.
struct Profile {
  std::vector<prof::Event> events;
  uint64_t dropped = 0;
  int64_t begin_ns = 0, end_ns = 0;  // host clock (prof::now_ns)
  std::vector<std::string> notes;
};

class Profiler {
 public:
  // Process-wide. FAILED_PRECONDITION when it is already on; INVALID_ARGUMENT for max_events 0.
  static void start(const ProfilerOptions& options = {});
  // FAILED_PRECONDITION when it is off.
  static std::unique_ptr<Profile> stop();
  static bool active() { return prof::on(); }
};

// {"displayTimeUnit":"ns","traceEvents":[{"ph":"X","name",...,"ts","dur","pid","tid","args"}...]}:
// times in microseconds from the profile's start; pid 1 is the host (tid: recording thread), pid 2
// the GPU (tid: queue); "M" events name them; dropped events and notes go in "otherData".
std::string chrome_trace_json(const Profile& p);
// Writes chrome_trace_json to `path` (throws naming the path).
void write_chrome_trace(const Profile& p, const std::string& path);
// Writes <logdir>/plugins/profile/<run_name>/<hostname>.trace.json.gz (directories made as
// needed); returns the path. An empty run_name uses the date and time ("2026_11_25_16_30_00").
std::string export_to_logdir(const Profile& p, const std::string& logdir, const std::string& run_name);

}  // namespace cairn::summary
