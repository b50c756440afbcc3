#include "runtime/summary/writer.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/io/record.h"

namespace cairn::summary {

namespace {

using Clock = std::chrono::steady_clock;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

// TF2's name (tensorflow/core/summary/summary_file_writer.cc + util/events_writer.cc):
// events.out.tfevents.<%010lld secs>.<host>.<pid>.<per-process counter>[.]<suffix>.
std::string event_file_name(const std::string& suffix) {
  static std::atomic<int64_t> counter{0};
  const long long secs = static_cast<long long>(std::time(nullptr));
  std::string sep = suffix.empty() || suffix[0] == '.' ? "" : ".";
  return fmt::format("events.out.tfevents.{:010d}.{}.{}.{}{}{}", secs, hostname(), static_cast<long long>(getpid()),
                     counter.fetch_add(1), sep, suffix);
}

void make_dirs(const std::string& dir, const char* fn) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) raise(Code::FailedPrecondition, "{}: cannot create the log directory {}: {}", fn, dir, ec.message());
  if (!std::filesystem::is_directory(dir, ec))
    raise(Code::FailedPrecondition, "{}: the log directory {} is not a directory", fn, dir);
}

// A queued event. Scalars (the common call) carry their tag and value; everything else a Value or
// serialized bytes.
struct Item {
  enum class Kind : uint8_t { Scalar, Value, Event, Graph };
  Kind kind = Kind::Scalar;
  float scalar = 0;
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  std::unique_ptr<Value> value;
  std::string bytes;

  // About how much memory the queued item holds beyond itself.
  size_t payload() const {
    size_t n = bytes.size() + tag.size();
    if (value) {
      n += value->tensor.content.size();
      for (const std::string& s : value->tensor.strings) n += s.size();
    }
    return n;
  }
};

// Callers wait only when this many events, or this many payload bytes, are pending: a writer
// thread starved of CPU for a while (a loaded machine) does not stall the training loop.
constexpr size_t kMinCapacity = 1024;
constexpr size_t kMaxPendingBytes = size_t{64} << 20;

std::mutex& registry_mutex() {
  static std::mutex mu;
  return mu;
}
std::unordered_map<int64_t, std::weak_ptr<SummaryWriter>>& registry() {
  static std::unordered_map<int64_t, std::weak_ptr<SummaryWriter>> writers;
  return writers;
}
std::shared_ptr<SummaryWriter>& default_writer_slot() {
  static std::shared_ptr<SummaryWriter> writer;
  return writer;
}
std::atomic<int64_t> g_default_step{kDefaultStep};
std::atomic<int64_t> g_next_id{1};

}  // namespace

struct SummaryWriter::Impl {
  int64_t id = 0;
  std::string logdir;
  WriterOptions opts;

  // Shared between callers and the background thread, guarded by mu.
  mutable std::mutex mu;
  std::condition_variable work;  // wakes the background thread
  std::condition_variable room;  // a caller waiting for queue space
  std::condition_variable done;  // a caller waiting for a flush
  std::vector<Item> queue;
  size_t capacity = kMinCapacity;  // max(kMinCapacity, 4 * max_queue)
  size_t pending_bytes = 0;
  bool stop = false;
  bool closed = false;
  bool idle = false;  // the thread waits with no timer: the next event must wake it
  uint64_t flush_requests = 0;
  uint64_t flushes_done = 0;
  Code error_code = Code::Ok;
  std::string error_message;
  std::string path;
  std::thread thread;

  // The background thread's own state (and close()'s, after the thread has ended).
  std::unique_ptr<io::RecordWriter> file;
  std::unordered_set<std::string> tags_with_metadata;
  bool dirty = false;  // records written since the last flush
  Clock::time_point last_flush = Clock::now();

  // Keeps the first error until a caller takes it.
  void fail(Code code, const std::string& message) {
    std::lock_guard<std::mutex> lk(mu);
    if (error_code == Code::Ok) {
      error_code = code;
      error_message = message;
    }
  }
  void take_error_locked() {
    if (error_code == Code::Ok) return;
    Code c = error_code;
    std::string m = std::move(error_message);
    error_code = Code::Ok;
    error_message.clear();
    throw Error(c, std::move(m));
  }

  // After a failed write the file's tail is unknown (a full disk may have taken part of a record):
  // the error is kept, the file dropped, and the next event starts a new file (as TF's
  // EventsWriter does), so no file holds a torn record followed by more records.
  void fail_and_abandon(Code code, const std::string& message) {
    fail(code, fmt::format("SummaryWriter({}): {}; events not yet flushed may be lost, later events go to a new file",
                           logdir, message));
    if (!file) return;
    try {
      file->close();
    } catch (const std::exception&) {
    }
    file.reset();
  }

  // Opens a new event file (creating the directory) and writes its file_version record.
  void open_file() {
    make_dirs(logdir, "SummaryWriter");
    std::string p = (std::filesystem::path(logdir) / event_file_name(opts.filename_suffix)).string();
    file = io::RecordWriter::open(p);
    std::string version = encode_file_version_event(wall_now());
    file->write(version.data(), version.size());
    tags_with_metadata.clear();  // a new file needs each tag's metadata again
    dirty = true;
    std::lock_guard<std::mutex> lk(mu);
    path = std::move(p);
  }

  // The record of one queued event; each tag's first value in this file carries its metadata.
  std::string serialize(Item& item) {
    switch (item.kind) {
      case Item::Kind::Scalar: {
        const bool first = tags_with_metadata.insert(item.tag).second;
        return encode_summary_event(item.wall_time, item.step, scalar_value(std::move(item.tag), item.scalar), first);
      }
      case Item::Kind::Value: {
        const bool first = tags_with_metadata.insert(item.value->tag).second;
        return encode_summary_event(item.wall_time, item.step, *item.value, first);
      }
      case Item::Kind::Graph: return encode_graph_event(item.wall_time, item.step, item.bytes);
      case Item::Kind::Event: return std::move(item.bytes);
    }
    return {};
  }

  void write_batch(std::vector<Item>& batch) {
    for (Item& item : batch) {
      try {
        if (!file) open_file();  // a reopen that failed before: try again
        std::string rec = serialize(item);
        file->write(rec.data(), rec.size());
        dirty = true;
      } catch (const Error& e) {
        fail_and_abandon(e.code(), e.message());
      } catch (const std::exception& e) {
        fail_and_abandon(Code::Internal, e.what());
      }
    }
    batch.clear();
  }

  // Pushes written records to the OS and checks that the file is still there: a deleted log
  // directory leaves a file nobody can read, so its events are reported lost and a new file begins.
  void flush_file() {
    last_flush = Clock::now();
    if (!file) return;
    try {
      file->flush();
      dirty = false;
      struct stat st;
      if (::stat(file->path().c_str(), &st) != 0 && errno == ENOENT) {
        std::string gone = file->path();
        try {
          file->close();
        } catch (const Error&) {
        }
        file.reset();
        fail(Code::NotFound,
             fmt::format("SummaryWriter: the event file {} no longer exists (was the log directory {} deleted?); "
                         "the events written to it are lost, later events go to a new file",
                         gone, logdir));
        open_file();
        file->flush();
        dirty = false;
      }
    } catch (const Error& e) {
      fail_and_abandon(e.code(), e.message());
    } catch (const std::exception& e) {
      fail_and_abandon(Code::Internal, e.what());
    }
  }

  bool timer_due() const {
    return opts.flush_millis > 0 && (dirty || !queue.empty()) &&
           Clock::now() >= last_flush + std::chrono::milliseconds(opts.flush_millis);
  }

  void run() {
    // A batch thread: when a summary call wakes it, the scheduler does not let it preempt the
    // caller (on a busy machine the wake-up would otherwise cost the caller a context switch).
    sched_param param{};
    (void)sched_setscheduler(0, SCHED_BATCH, &param);  // Linux: this thread only; best effort
    std::vector<Item> batch;
    std::unique_lock<std::mutex> lk(mu);
    for (;;) {
      while (!stop && flush_requests == flushes_done && queue.size() < static_cast<size_t>(opts.max_queue) &&
             !timer_due()) {
        if (opts.flush_millis > 0 && (dirty || !queue.empty())) {
          work.wait_until(lk, last_flush + std::chrono::milliseconds(opts.flush_millis));
        } else {
          idle = true;
          work.wait(lk);
          idle = false;
        }
      }
      batch.swap(queue);
      pending_bytes = 0;
      const uint64_t ticket = flush_requests;
      const bool flush_now = stop || ticket != flushes_done || timer_due();
      room.notify_all();
      lk.unlock();
      write_batch(batch);
      if (flush_now) flush_file();
      lk.lock();
      if (flush_now) {
        flushes_done = ticket;
        done.notify_all();
      }
      if (stop && queue.empty()) return;
    }
  }

  void enqueue(Item&& item) {
    std::unique_lock<std::mutex> lk(mu);
    take_error_locked();
    for (;;) {
      if (closed) raise(Code::FailedPrecondition, "SummaryWriter({}): the writer is closed", logdir);
      if (queue.size() < capacity && (queue.empty() || pending_bytes < kMaxPendingBytes)) break;
      work.notify_one();
      room.wait(lk);
    }
    pending_bytes += item.payload();
    queue.push_back(std::move(item));
    // Wake the thread for a full queue, or for the first event after it went idle (its flush timer
    // starts then); otherwise it wakes on its own, so most calls make no system call.
    if (queue.size() >= static_cast<size_t>(opts.max_queue) || (idle && opts.flush_millis > 0)) {
      idle = false;
      lk.unlock();  // the woken thread takes the lock at once: do not make it wait for ours
      work.notify_one();
    }
  }
};

SummaryWriter::SummaryWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<SummaryWriter> SummaryWriter::create(const std::string& logdir, const WriterOptions& options) {
  if (logdir.empty()) raise(Code::InvalidArgument, "SummaryWriter: the log directory is empty");
  if (options.max_queue < 1)
    raise(Code::InvalidArgument, "SummaryWriter({}): max_queue is {}; expected >= 1", logdir, options.max_queue);
  if (options.flush_millis < 0)
    raise(Code::InvalidArgument, "SummaryWriter({}): flush_millis is {}; expected >= 0", logdir, options.flush_millis);
  if (options.filename_suffix.find('/') != std::string::npos)
    raise(Code::InvalidArgument, "SummaryWriter({}): filename_suffix '{}' contains '/'", logdir, options.filename_suffix);
  auto impl = std::make_unique<Impl>();
  impl->id = g_next_id.fetch_add(1);
  impl->logdir = logdir;
  impl->opts = options;
  impl->capacity = std::max<size_t>(kMinCapacity, 4 * static_cast<size_t>(options.max_queue));
  impl->open_file();
  impl->file->flush();  // the file and its version record exist once create returns
  impl->dirty = false;
  impl->last_flush = Clock::now();
  Impl* raw = impl.get();
  raw->thread = std::thread([raw] { raw->run(); });
  std::shared_ptr<SummaryWriter> w(new SummaryWriter(std::move(impl)));
  std::lock_guard<std::mutex> lk(registry_mutex());
  registry()[raw->id] = w;
  return w;
}

SummaryWriter::~SummaryWriter() {
  {
    std::lock_guard<std::mutex> lk(registry_mutex());
    registry().erase(impl_->id);
  }
  try {
    close();
  } catch (...) {
  }
}

int64_t SummaryWriter::id() const { return impl_->id; }
const std::string& SummaryWriter::logdir() const { return impl_->logdir; }

std::string SummaryWriter::path() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->path;
}

bool SummaryWriter::closed() const {
  std::lock_guard<std::mutex> lk(impl_->mu);
  return impl_->closed;
}

void SummaryWriter::scalar(std::string_view tag, float value, int64_t step) {
  Item item;
  item.kind = Item::Kind::Scalar;
  item.step = resolve_step(step, "scalar", tag);
  item.wall_time = wall_now();
  item.scalar = value;
  item.tag.assign(tag);
  impl_->enqueue(std::move(item));
}

void SummaryWriter::write(Value value, int64_t step) {
  Item item;
  item.kind = Item::Kind::Value;
  item.step = resolve_step(step, summary_kind(value.plugin), value.tag);
  item.wall_time = wall_now();
  item.value = std::make_unique<Value>(std::move(value));
  impl_->enqueue(std::move(item));
}

void SummaryWriter::write_event(std::string serialized_event) {
  Item item;
  item.kind = Item::Kind::Event;
  item.bytes = std::move(serialized_event);
  impl_->enqueue(std::move(item));
}

void SummaryWriter::write_graph(int64_t step, std::string graphdef_bytes) {
  Item item;
  item.kind = Item::Kind::Graph;
  item.step = step == kDefaultStep ? (default_step() == kDefaultStep ? 0 : default_step()) : step;
  item.wall_time = wall_now();
  item.bytes = std::move(graphdef_bytes);
  impl_->enqueue(std::move(item));
}

void SummaryWriter::flush() {
  Impl& m = *impl_;
  std::unique_lock<std::mutex> lk(m.mu);
  m.take_error_locked();
  if (m.closed) raise(Code::FailedPrecondition, "SummaryWriter({}): the writer is closed", m.logdir);
  const uint64_t ticket = ++m.flush_requests;
  m.work.notify_one();
  m.done.wait(lk, [&] { return m.flushes_done >= ticket; });
  m.take_error_locked();
}

void SummaryWriter::close() {
  Impl& m = *impl_;
  {
    std::unique_lock<std::mutex> lk(m.mu);
    if (m.closed) return m.take_error_locked();
    m.closed = true;
    m.stop = true;
    m.work.notify_one();
    m.room.notify_all();
  }
  m.thread.join();
  if (m.file) {
    try {
      m.file->close();
    } catch (const Error& e) {
      m.fail(e.code(), fmt::format("SummaryWriter({}): {}", m.logdir, e.message()));
    }
    m.file.reset();
  }
  std::lock_guard<std::mutex> lk(m.mu);
  m.take_error_locked();
}

std::shared_ptr<SummaryWriter> default_writer() {
  std::lock_guard<std::mutex> lk(registry_mutex());
  return default_writer_slot();
}

void set_default_writer(std::shared_ptr<SummaryWriter> writer) {
  std::shared_ptr<SummaryWriter> old;
  {
    std::lock_guard<std::mutex> lk(registry_mutex());
    old = std::exchange(default_writer_slot(), std::move(writer));
  }
  // `old` may be the last reference: it closes here, outside the registry lock (its destructor
  // takes that lock).
}

void set_default_step(int64_t step) { g_default_step.store(step, std::memory_order_relaxed); }
int64_t default_step() { return g_default_step.load(std::memory_order_relaxed); }

int64_t resolve_step(int64_t step, const char* kind, std::string_view tag) {
  if (step != kDefaultStep) return step;
  int64_t s = default_step();
  if (s == kDefaultStep)
    raise(Code::InvalidArgument, "{} '{}': no step given and no default step set (set one with cairn_summary_set_step)",
          kind, tag);
  return s;
}

std::shared_ptr<SummaryWriter> find_writer(int64_t id) {
  std::lock_guard<std::mutex> lk(registry_mutex());
  if (id == 0) return default_writer_slot();
  auto it = registry().find(id);
  return it == registry().end() ? nullptr : it->second.lock();
}

}  // namespace cairn::summary
