// tf.data for Cairn: datasets (immutable pipeline descriptions) and iterators (running them).
//
// Two kinds of dataset, as in Grain:
//  - Indexable ("random access"): element i of iteration `epoch` is a pure function get(i, epoch),
//    safe to call from several threads at once. Sources over tensors, ranges, text/CSV files and
//    uncompressed TFRecord files are indexable, and map, batch, padded_batch, shuffle (a seeded
//    permutation of indices), repeat, take, skip, shard, zip, concatenate, enumerate, select,
//    parse_example and prefetch keep an indexable input indexable. Iterating one is an
//    IndexIterator: its whole state is (epoch, next index), and all of its parallelism (map's
//    num_parallel_calls, prefetch's buffer) is the IndexIterator computing several indexes ahead
//    on worker threads and delivering them in order.
//  - Streams: filter, unbatch, interleave, shuffle/prefetch over a stream, generators, compressed
//    record files. Their iterators keep their own state and save it explicitly (buffers included).
//
// Epochs: make_iterator(epoch) starts iteration `epoch` of a dataset. repeat runs iteration
// derive_epoch(epoch, r) of its input for repetition r, so shuffles reshuffle and random ops in
// map draw new numbers on each pass, and a restored iterator recomputes exactly the same.
//
// docs/data.md describes the model for users.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/philox.h"
#include "runtime/eager/context.h"
#include "runtime/tensor/tensor.h"

namespace cairn::data {

constexpr int64_t kInfinite = -1;  // cardinality of a dataset that never ends (== CAIRN_INFINITE_CARDINALITY)
constexpr int64_t kUnknown = -2;   // cardinality not known without running (== CAIRN_UNKNOWN_CARDINALITY)
constexpr int kAutotune = -1;      // == CAIRN_AUTOTUNE
// The most threads one map or interleave may run at once (the header says 1024): each is an OS
// thread, and 65,536 of them exhaust the memory for their stacks.
constexpr int kMaxParallelism = 1024;

// One component of an element: a name, a dtype and dims (-1 where unknown).
struct ComponentSpec {
  std::string name;
  DType dtype = DType::Invalid;
  std::vector<int64_t> dims;
};

struct ElementSpec {
  std::vector<ComponentSpec> components;

  size_t size() const { return components.size(); }
  // The index of component `name`, or -1.
  int index_of(std::string_view name) const;
  // "x: float32[-1,64], label: int32[]".
  std::string text() const;
  // Throws InvalidArgument "<who>: component '<name>' (element <index>) is <dtype[shape]>, expected
  // <spec>" when `element` does not fit this spec (count, dtypes, known dims).
  void check(const std::vector<Tensor>& element, std::string_view who, int64_t index) const;
};

using Element = std::vector<Tensor>;

// The iteration of repetition `r` of a repeat running in iteration `epoch`: r itself in
// iteration 0 (so the passes of a top-level repeat are epochs 0, 1, 2, ...), a mix otherwise.
inline uint64_t derive_epoch(uint64_t epoch, uint64_t r) {
  return epoch == 0 ? r : philox::mix64(epoch * 0x9e3779b97f4a7c15ull + r);
}

// ---- Iterator state: a small byte string (little-endian, length-prefixed), versioned by its first
// byte. Iterators write their fields in a fixed order and read them back in the same order. ----
class StateWriter {
 public:
  void put_i64(int64_t v);
  void put_u64(uint64_t v);
  void put_bool(bool v) { put_u64(v ? 1 : 0); }
  void put_bytes(std::string_view b);
  // A CPU tensor (dtype, shape, bytes; strings element by element).
  void put_tensor(const Tensor& t);
  void put_element(const Element& e);
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class StateReader {
 public:
  // `what` names the pipeline in errors: DataLoss "<what>: corrupt iterator state: ...". Tensors
  // are read onto the CPU.
  StateReader(std::string_view bytes, std::string what, Context& ctx);
  int64_t get_i64();
  uint64_t get_u64();
  bool get_bool() { return get_u64() != 0; }
  std::string get_bytes();
  Tensor get_tensor();
  Element get_element();
  bool done() const { return pos_ == bytes_.size(); }
  [[noreturn]] void corrupt(std::string_view why) const;

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  std::string what_;
  Context* ctx_;
};

// Runs a dataset. next() is called by one thread at a time (the iterator object serializes
// callers); background threads are the iterator's own business and stop in cancel().
class Iterator {
 public:
  virtual ~Iterator() = default;
  // The next element into `out` (resized to the spec's size); false at the end (and on every call
  // after it). Throws for a failed element naming the transformation and the element; that element
  // is then skipped and a later call continues with the next one.
  virtual bool next(Element& out) = 0;
  // Writes the state from which a fresh iterator of the same dataset and epoch continues with
  // exactly the element this one's next() would return. May pause background work briefly.
  virtual void save(StateWriter& w) = 0;
  // Replaces this iterator's position with a saved one (discarding work done ahead).
  virtual void restore(StateReader& r) = 0;
  // Stops background threads and waits for them. Idempotent; next() is not called afterwards.
  virtual void cancel() {}
};

class Dataset;
using DatasetPtr = std::shared_ptr<const Dataset>;

class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  Dataset(Context& ctx, ElementSpec spec) : ctx_(Ref<Context>::share(&ctx)), spec_(std::move(spec)) {}
  virtual ~Dataset() = default;

  Context& context() const { return *ctx_; }
  const ElementSpec& spec() const { return spec_; }

  // This pipeline as text, e.g. "range(0, 10, 1).map('f', parallel=4).batch(32)": errors and the
  // state's pipeline check use it.
  virtual std::string describe() const = 0;
  // kInfinite, kUnknown or a count (of one iteration).
  virtual int64_t cardinality() const = 0;

  // ---- Indexable datasets ----
  virtual bool random_access() const { return false; }
  // Element `index` (0 <= index < cardinality, or any index when infinite) of iteration `epoch`.
  // Thread-safe and a pure function of (index, epoch). Only called when random_access().
  virtual void get(int64_t index, uint64_t epoch, Element& out) const;
  // Elements begin, begin + 1, ... (< end) of iteration `epoch` into `out` (cleared first), as many
  // as one cheap pass computes: a source whose records lie together in a file reads them with one
  // system call. Fewer than end - begin (none, by default) leaves element begin + out.size() to
  // get(), which computes it or throws its error; so this never throws, and an element that fails
  // is reported by get() in its turn. Thread-safe and pure like get().
  virtual void get_range(int64_t begin, int64_t end, uint64_t epoch, std::vector<Element>& out) const;
  // How many elements an IndexIterator over this pipeline computes at once (the largest
  // num_parallel_calls in the indexable chain; 1 means on the calling thread) and how many it keeps
  // ready ahead (the largest prefetch buffer). Datasets with an input pass the input's on.
  virtual int parallelism() const { return 1; }
  virtual int64_t prefetch_depth() const { return 0; }

  // A new iterator over iteration `epoch`. The default serves indexable datasets with an
  // IndexIterator; streams override it.
  virtual std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const;

  // The epoch of the next iterator object made over this dataset (0, 1, ...), so that each new
  // iterator runs its own iteration (reshuffle_each_iteration).
  uint64_t take_iteration() const { return next_iteration_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Ref<Context> ctx_;
  ElementSpec spec_;
  mutable std::atomic<uint64_t> next_iteration_{0};
};

// The iterator of indexable datasets (index_iterator.cc): state = next index; computes up to
// parallelism() chunks of consecutive indexes at once and keeps prefetch_depth() chunks ready,
// delivering in index order (a chunk is one element while elements are slow, up to 64 cheap ones).
std::unique_ptr<Iterator> make_index_iterator(DatasetPtr ds, uint64_t epoch);

// Runs `fn` (the work of one element of stage `who`) and rethrows its error as
// "<who> (element <index>): <message>", turning OutOfRange into InvalidArgument so that an error
// can never look like the end of the data.
template <class F>
auto with_element_context(std::string_view who, int64_t index, F&& fn) -> decltype(fn());

}  // namespace cairn::data

#include "runtime/data/dataset_inl.h"
