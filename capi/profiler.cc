// The profiler section of the C API: runtime/summary/profiler.h.
#include <memory>

#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/summary/profiler.h"

using cairn::Code;
using cairn::raise;
using cairn::capi::read_options;
using cairn::capi::require;

struct cairn_profile {
  std::unique_ptr<cairn::summary::Profile> profile;
};

cairn_status* cairn_profiler_start(const cairn_profiler_options* user_opts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_profiler_start";
  const cairn_profiler_options opts = read_options(user_opts, fn);
  cairn::summary::ProfilerOptions o;
  o.max_events = static_cast<size_t>(opts.max_events);
  o.vulkan_timestamps = opts.vulkan_timestamps != CAIRN_FALSE;
  cairn::summary::Profiler::start(o);
  CAIRN_API_END
}

cairn_bool cairn_profiler_active(void) { return cairn::summary::Profiler::active() ? CAIRN_TRUE : CAIRN_FALSE; }

cairn_status* cairn_profiler_stop(cairn_profile** out) {
  CAIRN_API_BEGIN
  require(out, "cairn_profiler_stop", "out");
  *out = nullptr;
  auto p = std::make_unique<cairn_profile>();
  p->profile = cairn::summary::Profiler::stop();
  *out = p.release();
  CAIRN_API_END
}

cairn_status* cairn_profile_event_count(const cairn_profile* p, size_t* out) {
  CAIRN_API_BEGIN
  require(out, "cairn_profile_event_count", "out");
  *out = require(p, "cairn_profile_event_count", "p")->profile->events.size();
  CAIRN_API_END
}

cairn_status* cairn_profile_dropped(const cairn_profile* p, uint64_t* out) {
  CAIRN_API_BEGIN
  require(out, "cairn_profile_dropped", "out");
  *out = require(p, "cairn_profile_dropped", "p")->profile->dropped;
  CAIRN_API_END
}

cairn_status* cairn_profile_event(const cairn_profile* p, size_t index, const char** name, const char** category,
                                  const char** device, int64_t* start_ns, int64_t* duration_ns) {
  CAIRN_API_BEGIN
  const cairn::summary::Profile& prof = *require(p, "cairn_profile_event", "p")->profile;
  if (index >= prof.events.size())
    raise(Code::OutOfRange, "cairn_profile_event: index {} is beyond the profile's {} events", index,
          prof.events.size());
  const cairn::prof::Event& e = prof.events[index];
  if (name) *name = e.name.c_str();
  if (category) *category = e.category;
  if (device) *device = e.device.c_str();
  if (start_ns) *start_ns = e.start_ns - prof.begin_ns;
  if (duration_ns) *duration_ns = e.duration_ns;
  CAIRN_API_END
}

cairn_status* cairn_profile_chrome_trace(const cairn_profile* p, char** json_out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_profile_chrome_trace";
  require(json_out, fn, "json_out");
  *json_out = nullptr;
  *json_out = cairn::capi::malloc_string(cairn::summary::chrome_trace_json(*require(p, fn, "p")->profile), fn);
  CAIRN_API_END
}

cairn_status* cairn_profile_export_chrome_trace(const cairn_profile* p, const char* path) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_profile_export_chrome_trace";
  cairn::summary::write_chrome_trace(*require(p, fn, "p")->profile, require(path, fn, "path"));
  CAIRN_API_END
}

cairn_status* cairn_profile_export_to_logdir(const cairn_profile* p, const char* logdir, const char* run_name,
                                             char** path_out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_profile_export_to_logdir";
  if (path_out) *path_out = nullptr;
  const std::string path = cairn::summary::export_to_logdir(*require(p, fn, "p")->profile, require(logdir, fn, "logdir"),
                                                            run_name ? run_name : "");
  if (path_out) *path_out = cairn::capi::malloc_string(path, fn);
  CAIRN_API_END
}

void cairn_profile_free(cairn_profile* p) { delete p; }
