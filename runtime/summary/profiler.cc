#include "runtime/summary/profiler.h"

#include <fmt/format.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "runtime/core/error.h"

namespace cairn::summary {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += {'\\', static_cast<char>(c)};
    else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

// Microseconds with nanosecond precision.
std::string micros(int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, static_cast<int>(std::abs(ns % 1000))); }
}  // namespace

void Profiler::start(const ProfilerOptions& options) {
  if (options.max_events == 0) raise(Code::InvalidArgument, "profiler start: max_events is 0");
  if (!prof::begin(options.max_events, options.vulkan_timestamps))
    raise(Code::FailedPrecondition, "profiler start: the profiler is already on (stop it first)");
}

std::unique_ptr<Profile> Profiler::stop() {
  prof::Collected c;
  if (!prof::end(c)) raise(Code::FailedPrecondition, "profiler stop: the profiler is off (start it first)");
  auto p = std::make_unique<Profile>();
  p->events = std::move(c.events);
  auto by_start = [](const prof::Event& a, const prof::Event& b) { return a.start_ns < b.start_ns; };
  if (!std::is_sorted(p->events.begin(), p->events.end(), by_start))  // one thread and no GPU: sorted
    std::stable_sort(p->events.begin(), p->events.end(), by_start);
  p->dropped = c.dropped;
  p->begin_ns = c.begin_ns;
  p->end_ns = c.end_ns;
  p->notes = std::move(c.notes);
  return p;
}

std::string chrome_trace_json(const Profile& p) {
  constexpr int kHost = 1, kGpu = 2;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  out += fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"Host\"}}}}", kHost);
  bool gpu = false;
  std::vector<uint32_t> threads;
  for (const prof::Event& e : p.events) {
    const bool on_gpu = std::strcmp(e.category, "gpu") == 0;
    gpu = gpu || on_gpu;
    if (!on_gpu && std::find(threads.begin(), threads.end(), e.thread) == threads.end()) threads.push_back(e.thread);
    out += fmt::format(
        ",\n{{\"ph\":\"X\",\"cat\":{},\"name\":{},\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},\"args\":{{\"device\":{}{}{}}}}}",
        json_string(e.category), json_string(e.name), micros(e.start_ns - p.begin_ns), micros(e.duration_ns),
        on_gpu ? kGpu : kHost, e.thread, json_string(e.device), e.args.empty() ? "" : ",", e.args);
  }
  for (uint32_t t : threads)
    out += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"thread {}\"}}}}",
                       kHost, t, t);
  if (gpu)
    out += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"GPU\"}}}}", kGpu);
  out += fmt::format("\n],\"otherData\":{{\"dropped_events\":{},\"duration_us\":{}", p.dropped,
                     micros(p.end_ns - p.begin_ns));
  if (!p.notes.empty()) {
    out += ",\"notes\":[";
    for (size_t k = 0; k < p.notes.size(); ++k) out += (k ? "," : "") + json_string(p.notes[k]);
    out += "]";
  }
  return out + "}}\n";
}

void write_chrome_trace(const Profile& p, const std::string& path) {
  const std::string json = chrome_trace_json(p);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) raise(Code::Unavailable, "profiler export: cannot create {}: {}", path, std::strerror(errno));
  f.write(json.data(), static_cast<std::streamsize>(json.size()));
  f.close();
  if (!f) raise(Code::Unavailable, "profiler export: writing {} failed: {}", path, std::strerror(errno));
}

std::string export_to_logdir(const Profile& p, const std::string& logdir, const std::string& run_name) {
  if (logdir.empty()) raise(Code::InvalidArgument, "profiler export: the log directory is empty");
  std::string run = run_name;
  if (run.empty()) {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y_%m_%d_%H_%M_%S", &tm);
    run = buf;
  }
  if (run.find('/') != std::string::npos || run == "." || run == "..")
    raise(Code::InvalidArgument, "profiler export: run name '{}' must be one path component", run);
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const std::filesystem::path dir = std::filesystem::path(logdir) / "plugins" / "profile" / run;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) raise(Code::Unavailable, "profiler export: cannot create {}: {}", dir.string(), ec.message());
  const std::string path = (dir / (std::string(host) + ".trace.json.gz")).string();
  const std::string json = chrome_trace_json(p);
  gzFile gz = gzopen(path.c_str(), "wb");
  if (!gz) raise(Code::Unavailable, "profiler export: cannot create {}: {}", path, std::strerror(errno));
  const int wrote = gzwrite(gz, json.data(), static_cast<unsigned>(json.size()));
  const int closed = gzclose(gz);
  if (wrote != static_cast<int>(json.size()) || closed != Z_OK)
    raise(Code::Unavailable, "profiler export: writing {} failed", path);
  return path;
}

}  // namespace cairn::summary
