// map, prefetch and prefetch_to_device: one element in, one out. Over an indexable input each
// stays indexable (the IndexIterator runs the work ahead on its workers); over a stream each runs
// a StreamWorkIterator.
#include <algorithm>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/parallel.h"
#include "runtime/data/parallel_internal.h"

namespace cairn::data {
namespace {

using internal::StreamWorkIterator;

// What one elementwise stage does and how much of it runs ahead.
struct Elementwise {
  std::string who;          // "map 'f'", "prefetch": errors name it
  std::string description;  // appended to the input's describe()
  ElementFn fn;             // null: the element itself (prefetch)
  bool random = false;      // fn runs in a random stream scope keyed by (stage, epoch, index)
  uint64_t stage = 0;       // the stage's random key
  Device* device = nullptr; // prefetch_to_device: the result's components are copied there
  int workers = 0;          // threads computing fn at once (0: on the caller)
  int64_t buffer = 0;       // elements kept ready ahead
  bool deterministic = true;
};

class ElementwiseDataset final : public Dataset {
 public:
  ElementwiseDataset(DatasetPtr in, ElementSpec spec, Elementwise e)
      : Dataset(in->context(), std::move(spec)), in_(std::move(in)), e_(std::move(e)) {}

  std::string describe() const override { return in_->describe() + e_.description; }
  int64_t cardinality() const override { return in_->cardinality(); }
  bool random_access() const override { return in_->random_access(); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    Element x;
    in_->get(index, epoch, x);
    apply(x, epoch, index);
    out = std::move(x);
  }

  // prefetch passes ranges on (its elements are its input's); a map's function runs per element.
  void get_range(int64_t begin, int64_t end, uint64_t epoch, std::vector<Element>& out) const override {
    if (e_.fn || e_.device) return Dataset::get_range(begin, end, epoch, out);
    in_->get_range(begin, end, epoch, out);
  }

  int parallelism() const override { return std::max(e_.workers, in_->parallelism()); }
  int64_t prefetch_depth() const override { return std::max(e_.buffer, in_->prefetch_depth()); }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override {
    if (random_access()) return make_index_iterator(shared_from_this(), epoch);
    auto self = std::static_pointer_cast<const ElementwiseDataset>(shared_from_this());
    auto work = [self, epoch](Element& x, int64_t index) { self->apply(x, epoch, index); };
    // A stream prefetch pulls on one thread; a map pulls and computes on num_parallel_calls.
    const int workers = e_.fn ? e_.workers : 1;
    const int64_t capacity = std::max<int64_t>(1, e_.buffer) + (e_.fn ? std::max(0, e_.workers) : 0);
    return std::make_unique<StreamWorkIterator>(in_->make_iterator(epoch), std::move(work), workers, capacity,
                                                e_.deterministic, describe());
  }

 private:
  // x becomes this stage's element `index` of iteration `epoch`.
  void apply(Element& x, uint64_t epoch, int64_t index) const {
    if (e_.fn) {
      Element r = with_element_context(e_.who, index, [&] {
        if (!e_.random) return e_.fn(x);
        RandomStreamScope scope(internal::element_key(e_.stage, epoch, index));
        return e_.fn(x);
      });
      spec().check(r, e_.who, index);
      x = std::move(r);
    }
    if (e_.device) x = with_element_context(e_.who, index, [&] { return internal::to_device(x, *e_.device); });
  }

  const DatasetPtr in_;
  const Elementwise e_;
};

DatasetPtr require_input(const DatasetPtr& in, const char* who) {
  if (!in) raise(Code::InvalidArgument, "{}: the input dataset is null", who);
  return in;
}

// A count as describe() shows it: AUTOTUNE stays AUTOTUNE, so a state saved on a machine with
// another number of CPUs still matches the pipeline.
std::string count_text(int64_t n) { return n == kAutotune ? "AUTOTUNE" : std::to_string(n); }

int64_t prefetch_buffer(const Context& ctx, int64_t buffer_size, const char* who) {
  if (buffer_size == kAutotune) return 2 * static_cast<int64_t>(autotune_parallelism(ctx));
  if (buffer_size < 1)
    raise(Code::InvalidArgument, "{}: buffer_size is {} (expected >= 1, or AUTOTUNE = -1)", who, buffer_size);
  return buffer_size;
}

}  // namespace

DatasetPtr map(DatasetPtr in, ElementSpec out_spec, ElementFn fn, MapOptions options) {
  require_input(in, "map");
  const std::string who = fmt::format("map '{}'", options.name);
  if (!fn) raise(Code::InvalidArgument, "{}: the function is null", who);
  if (out_spec.size() == 0) raise(Code::InvalidArgument, "{}: the output spec has no components", who);
  int npc = options.num_parallel_calls;
  if (npc == kAutotune) npc = autotune_parallelism(in->context());
  if (npc < 0 || npc > kMaxParallelism)
    raise(Code::InvalidArgument, "{}: num_parallel_calls is {} (expected 0 to {}, or AUTOTUNE = -1)", who, npc,
          kMaxParallelism);
  Elementwise e;
  e.who = who;
  e.description = fmt::format(".map('{}', parallel={})", options.name, count_text(options.num_parallel_calls));
  e.fn = std::move(fn);
  e.random = true;
  // The stream's identity leaves parallelism out: 1 or 4 calls at once draw the same numbers.
  e.stage = internal::stage_key(in->context(), options.seed, in->describe() + ".map('" + options.name + "')");
  e.workers = npc;
  e.buffer = npc;  // over a stream: as many results ready as computing
  e.deterministic = options.deterministic;
  return std::make_shared<ElementwiseDataset>(in, std::move(out_spec), std::move(e));
}

DatasetPtr prefetch(DatasetPtr in, int64_t buffer_size) {
  require_input(in, "prefetch");
  Elementwise e;
  e.who = "prefetch";
  e.buffer = prefetch_buffer(in->context(), buffer_size, "prefetch");
  // AUTOTUNE leaves the parallelism to us: over an indexable chain, elements are pure functions of
  // their index, so every CPU may compute chunks ahead (reading and checking large records is
  // otherwise bound by one core). An explicit buffer size keeps one worker, as tf.data does.
  if (buffer_size == kAutotune) e.workers = autotune_parallelism(in->context());
  e.description = fmt::format(".prefetch({})", count_text(buffer_size));
  ElementSpec spec = in->spec();
  return std::make_shared<ElementwiseDataset>(in, std::move(spec), std::move(e));
}

DatasetPtr prefetch_to_device(DatasetPtr in, std::string device, int64_t buffer_size) {
  require_input(in, "prefetch_to_device");
  Elementwise e;
  e.who = fmt::format("prefetch_to_device '{}'", device);
  e.buffer = prefetch_buffer(in->context(), buffer_size, "prefetch_to_device");
  e.device = &in->context().device(device);  // NotFound / Unavailable now, not when read
  e.description = fmt::format(".prefetch_to_device('{}', {})", device, count_text(buffer_size));
  ElementSpec spec = in->spec();
  return std::make_shared<ElementwiseDataset>(in, std::move(spec), std::move(e));
}

}  // namespace cairn::data
