// tf.summary's file writer: create_file_writer(logdir, max_queue, flush_millis, filename_suffix).
//
// A SummaryWriter owns one event file in its log directory, named as TensorFlow 2 names them:
//   <logdir>/events.out.tfevents.<10-digit unix seconds>.<hostname>.<pid>.<counter><filename_suffix>
// (counter: per process, from 0; the suffix gets a leading "." when it has none, default ".v2").
// The file is a TFRecord stream of Event protos whose first record is file_version "brain.Event:2".
//
// Summary calls on the calling thread only queue the event (a scalar copies its tag and value);
// a background thread serializes and writes. When max_queue events are pending the thread is woken
// and takes them all (TF2 writes each max_queue events too, but on the caller's thread). The queue
// is bounded: a caller waits when max(1024, 4 * max_queue) events or 64 MiB are pending, so a
// writer thread starved of CPU for a moment does not stall the caller, and one that cannot keep up
// does not grow without bound. Written events reach the operating system on flush(), on close(),
// and every flush_millis (default 1000 ms, so a short run shows its data in TensorBoard right away;
// 0 turns the timer off).
//
// Errors of the background thread (a full disk, an event file or log directory deleted under it)
// never stop the caller's program: the first one is kept and thrown by the next summary call,
// flush() or close() on this writer, then cleared. When the event file has disappeared (its log
// directory was deleted), the error names the file; the writer then recreates the directory and
// continues in a new event file, so later events are not lost too.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/summary/event.h"

namespace cairn::summary {

struct WriterOptions {
  int64_t max_queue = 10;       // events pending before the writer thread writes them (>= 1)
  int64_t flush_millis = 1000;  // flush timer; 0: only on flush() and close()
  std::string filename_suffix = ".v2";
};

// "No step given": use the default step (set_step).
constexpr int64_t kDefaultStep = std::numeric_limits<int64_t>::min();

class SummaryWriter {
 public:
  // Creates `logdir` (and its parents) when missing and opens a new event file there. Throws
  // naming the directory or the file when that fails.
  static std::shared_ptr<SummaryWriter> create(const std::string& logdir, const WriterOptions& options = {});
  ~SummaryWriter();  // close(), swallowing its error
  SummaryWriter(const SummaryWriter&) = delete;
  SummaryWriter& operator=(const SummaryWriter&) = delete;

  // A process-unique id (> 0): how summary ops inside traced functions name this writer.
  int64_t id() const;
  const std::string& logdir() const;
  // The event file being written (a new one after the old one disappeared).
  std::string path() const;

  // Queue one summary. step kDefaultStep: the default step, which must be set. Throws a pending
  // background error, FailedPrecondition after close(), InvalidArgument without a step.
  void scalar(std::string_view tag, float value, int64_t step);
  void write(Value value, int64_t step);
  // Queue an already serialized Event (its bytes are written as they are).
  void write_event(std::string serialized_event);
  // Queue Event{wall_time now, step, graph_def}: a binary tensorflow.GraphDef.
  void write_graph(int64_t step, std::string graphdef_bytes);

  // Writes every queued event and pushes the file to the operating system; waits for it. Throws a
  // pending background error (this flush's included).
  void flush();
  // flush(), then stops the background thread and closes the file. Idempotent; later summary
  // calls throw FailedPrecondition.
  void close();
  bool closed() const;

  struct Impl;

 private:
  explicit SummaryWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The process-wide default writer (tf.summary's `with writer.as_default()`); null when none.
std::shared_ptr<SummaryWriter> default_writer();
void set_default_writer(std::shared_ptr<SummaryWriter> writer);
// The process-wide default step (tf.summary.experimental.set_step); kDefaultStep when unset.
void set_default_step(int64_t step);
int64_t default_step();
// `step`, or the default step for kDefaultStep; InvalidArgument naming `kind` and `tag` when
// neither is set.
int64_t resolve_step(int64_t step, const char* kind, std::string_view tag);

// The live writer with this id (0: the default writer); null when it is gone or none is set.
std::shared_ptr<SummaryWriter> find_writer(int64_t id);

}  // namespace cairn::summary
