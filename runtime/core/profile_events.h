// The profiler's recording side (what runtime/summary/profiler.h starts, stops and exports): a
// process-wide on/off flag that hot paths test with one relaxed load, and per-thread bounded event
// buffers. It lives in core so that eager dispatch, graph replay and the Vulkan backend can record
// without depending on the summary library.
//
// Off: prof::on() is one relaxed atomic load and a predictable branch. On: record() appends to the
// calling thread's buffer under its own (uncontended) mutex; a process-wide counter caps the total
// and counts what it drops.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace cairn::prof {

extern std::atomic<bool> g_on;
inline bool on() { return g_on.load(std::memory_order_relaxed); }

// Host clock: CLOCK_MONOTONIC in nanoseconds (the clock GPU timestamps are mapped onto).
int64_t now_ns();

struct Event {
  const char* category = "";  // "eager", "graph", "function", "gpu" (a string literal)
  std::string name;           // the op, the node ("MatMul_3") or the function
  std::string device;         // "cpu", "vulkan:0"
  int64_t start_ns = 0;       // host clock (now_ns)
  int64_t duration_ns = 0;
  uint32_t thread = 0;        // a small id per recording thread (1, 2, ...); GPU events: the queue's
  std::string args;           // extra JSON members ("\"node\":3"), or empty
};

// Appends `e` (thread set here unless it is already) when on, within the cap.
void record(Event e);
// The calling thread's id in events (assigned on first use).
uint32_t thread_id();

// Starts recording (clears every buffer). False if already on. `gpu_timestamps`: whether GPU
// backends time their work with timestamp queries.
bool begin(size_t max_events, bool gpu_timestamps = true);
bool gpu_timestamps();
struct Collected {
  std::vector<Event> events;  // by thread, then in recording order
  uint64_t dropped = 0;       // events beyond max_events
  int64_t begin_ns = 0, end_ns = 0;
  std::vector<std::string> notes;  // e.g. "GPU timestamps unavailable on ...: host times"
};
// Stops recording and gathers the events. False (and nothing) if it was off. Flush hooks run
// first, while still on (a GPU device waits for its timed work so its events are in the profile).
bool end(Collected& out);
void add_flush_hook(const void* owner, void (*fn)(const void* owner));
void remove_flush_hook(const void* owner);

// The op being dispatched on this thread while the profiler is on (a GPU backend labels the
// commands it records with it); empty otherwise.
std::string& current_label();
// A note for the profile being recorded (kept once).
void note(const std::string& text);

// While a graph replay records its nodes on this thread, the eager dispatch it falls back to does
// not record them a second time.
struct ReplayScope {
  ReplayScope() { ++depth(); }
  ~ReplayScope() { --depth(); }
  ReplayScope(const ReplayScope&) = delete;
  ReplayScope& operator=(const ReplayScope&) = delete;
  static int& depth() {
    static thread_local int d = 0;
    return d;
  }
};

}  // namespace cairn::prof
