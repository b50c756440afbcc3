// tf.data's parallel and buffering transformations: map, filter, interleave, prefetch,
// prefetch_to_device and cache (docs/data.md, "Parallelism, prefetch and cache").
//
// Over an indexable input, map, prefetch, prefetch_to_device and the memory cache stay indexable:
// their parallelism is the IndexIterator computing several indexes ahead (index_iterator.cc), and
// the state stays the next index. Over a stream they run their own iterators with worker threads,
// and save what they hold (inputs pulled but not yet delivered, buffered elements) explicitly.
//
// Random ops with seeds 0,0 inside map and filter functions draw from a stream keyed by
// (seed, the stage, epoch, element index) (RandomStreamScope, runtime/eager/context.h), so they
// give the same numbers whatever the parallelism and whichever thread runs the function.
#pragma once

#include <functional>
#include <string>

#include "runtime/data/dataset.h"

namespace cairn::data {

// Runs on worker threads, possibly several at once; throws on error.
using ElementFn = std::function<Element(const Element&)>;

struct MapOptions {
  std::string name = "map";
  int num_parallel_calls = 0;  // 0: one element at a time on the caller; N; or kAutotune (the CPUs)
  bool deterministic = true;   // deliver in input order (streams; indexable maps always are)
  int64_t seed = 0;            // key of the function's random streams; 0: the context's seed
};

// Elements fn(x) with spec `out_spec` (each result is checked against it). Errors: "map '<name>'
// (element N): ...", an OutOfRange from fn becoming InvalidArgument.
DatasetPtr map(DatasetPtr in, ElementSpec out_spec, ElementFn fn, MapOptions options);

// The elements for which pred(x) is true (a stream; runs on the consumer's thread).
DatasetPtr filter(DatasetPtr in, std::function<bool(const Element&)> pred, std::string name, int64_t seed);

// Makes the dataset of one input element; runs on the consumer's thread.
using DatasetFn = std::function<DatasetPtr(const Element&)>;

struct InterleaveOptions {
  int cycle_length = kAutotune;  // inner datasets open at once; kAutotune: the CPUs
  int block_length = 1;          // consecutive elements from each
  int num_parallel_calls = 0;    // worker threads reading the open inner iterators ahead; kAutotune: cycle_length
  bool deterministic = true;     // the order is always the round-robin one (see docs/data.md)
};

// TF's interleave: each input element becomes a dataset (spec checked against `out_spec`), read
// cycle_length at a time, block_length elements from each in turn.
DatasetPtr interleave(DatasetPtr in, ElementSpec out_spec, DatasetFn fn, InterleaveOptions options);

// Computes up to buffer_size elements ahead on background threads; kAutotune: 2 x the CPUs.
DatasetPtr prefetch(DatasetPtr in, int64_t buffer_size);

// prefetch whose background thread also copies every component to `device` ("cpu", "vulkan:0").
// Throws NotFound/Unavailable for an unknown device when built.
DatasetPtr prefetch_to_device(DatasetPtr in, std::string device, int64_t buffer_size);

// Caches the elements: in memory for an empty filename, else in that file (written during the
// first complete pass, renamed into place when it ends; later iterators read it).
DatasetPtr cache(DatasetPtr in, std::string filename);

// What kAutotune means for num_parallel_calls, cycle_length and prefetch's workers: the context's
// inter-op thread count when one is set (Context::set_threads), else the number of CPUs (at least 1).
int autotune_parallelism(const Context& ctx);

}  // namespace cairn::data
