#include "runtime/core/profile_events.h"

#include <time.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>

namespace cairn::prof {

std::atomic<bool> g_on{false};

namespace {

struct Buffer {
  std::mutex mu;
  std::deque<Event> events;  // grows without moving what it holds
  uint64_t generation = 0;  // the recording these events belong to
  uint32_t thread = 0;
};

struct State {
  std::mutex mu;  // buffers, notes, begin/end
  std::vector<std::shared_ptr<Buffer>> buffers;  // kept after their thread exits, until collected
  std::vector<std::string> notes;
  std::atomic<uint64_t> generation{0};
  std::atomic<uint64_t> count{0}, dropped{0};
  size_t max_events = 0;
  int64_t begin_ns = 0;
  uint32_t next_thread = 1;
  std::atomic<bool> gpu_timestamps{true};
  std::mutex hooks_mu;  // not held while a hook runs other code than the list
  std::vector<std::pair<const void*, void (*)(const void*)>> hooks;
};

State& state() {
  static State* s = new State;  // never destroyed: threads may record during exit
  return *s;
}

Buffer& local() {
  static thread_local std::shared_ptr<Buffer> b = [] {
    auto p = std::make_shared<Buffer>();
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    p->thread = s.next_thread++;
    s.buffers.push_back(p);
    return p;
  }();
  return *b;
}

}  // namespace

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

uint32_t thread_id() { return local().thread; }

void record(Event e) {
  if (!on()) return;
  State& s = state();
  Buffer& b = local();
  if (s.count.fetch_add(1, std::memory_order_relaxed) >= s.max_events) {
    s.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (e.thread == 0) e.thread = b.thread;
  const uint64_t gen = s.generation.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> lock(b.mu);
  if (b.generation != gen) {
    b.events.clear();
    b.generation = gen;
  }
  b.events.push_back(std::move(e));
}

bool gpu_timestamps() { return state().gpu_timestamps.load(std::memory_order_relaxed); }

std::string& current_label() {
  static thread_local std::string label;
  return label;
}

void add_flush_hook(const void* owner, void (*fn)(const void*)) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.hooks_mu);
  s.hooks.emplace_back(owner, fn);
}

void remove_flush_hook(const void* owner) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.hooks_mu);
  s.hooks.erase(std::remove_if(s.hooks.begin(), s.hooks.end(), [&](const auto& h) { return h.first == owner; }),
                s.hooks.end());
}

bool begin(size_t max_events, bool gpu_timestamps) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (on()) return false;
  const uint64_t gen = s.generation.fetch_add(1) + 1;
  for (auto& b : s.buffers) {
    std::lock_guard<std::mutex> bl(b->mu);
    b->events.clear();
    b->generation = gen;
  }
  s.notes.clear();
  s.max_events = max_events;
  s.count = 0;
  s.dropped = 0;
  s.begin_ns = now_ns();
  s.gpu_timestamps = gpu_timestamps;
  g_on.store(true, std::memory_order_release);
  return true;
}

bool end(Collected& out) {
  State& s = state();
  if (on()) {
    // Hooks record events (which takes no State lock); hooks_mu keeps a device from going away
    // while its hook runs.
    std::lock_guard<std::mutex> hl(s.hooks_mu);
    for (const auto& [owner, fn] : s.hooks) fn(owner);
  }
  std::lock_guard<std::mutex> lock(s.mu);
  if (!on()) return false;
  g_on.store(false, std::memory_order_release);
  out = {};
  out.begin_ns = s.begin_ns;
  out.end_ns = now_ns();
  const uint64_t gen = s.generation.load();
  std::vector<std::shared_ptr<Buffer>> alive;
  size_t total = 0;
  for (auto& b : s.buffers) {
    std::lock_guard<std::mutex> bl(b->mu);
    total += b->generation == gen ? b->events.size() : 0;
  }
  out.events.reserve(total);
  for (auto& b : s.buffers) {
    {
      std::lock_guard<std::mutex> bl(b->mu);
      if (b->generation == gen)
        std::move(b->events.begin(), b->events.end(), std::back_inserter(out.events));
      b->events.clear();
    }
    if (b.use_count() > 1) alive.push_back(b);  // a thread still holds it
  }
  s.buffers = std::move(alive);
  out.dropped = s.dropped.load();
  out.notes = s.notes;
  return true;
}

void note(const std::string& text) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (std::find(s.notes.begin(), s.notes.end(), text) == s.notes.end()) s.notes.push_back(text);
}

}  // namespace cairn::prof
