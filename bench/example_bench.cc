// tf.train.Example parsing speed: Cairn's batched parse_examples (its own pointer-based wire reader)
// against a reader built on nanopb's pb_decode primitives (pb_decode_tag, string substreams,
// pb_decode_varint / pb_decode_fixed32) walking the same records, in the same run.
//
//   bazel run -c opt //bench:example_bench -- [RECORDS]     (default 200,000)
//
// Records look like a tf.data training set: label int64[1], dense float[32], tokens int64[~20]
// (VarLen), a 784-byte image (bytes), weight float[1]; about 1.1 KB each. Cases:
//  - parse_examples: batches of 256 into tensors (FixedLen label/dense/weight, VarLen tokens,
//    FixedLen uint8 image), the tf.io.parse_example workload;
//  - the same on a thread pool of every core (blocks of 64 records in parallel);
//  - parse_example: one record into the message structure (std::map, strings), per record;
//  - nanopb walk: every feature of every record decoded into reused vectors with nanopb's
//    primitives, no key lookups and no tensors: less work than parse_examples does.
// Prints records/s and MB/s; the ratio is parse_examples over the nanopb walk. Not a test.
#include <pb_decode.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/io/example.h"

using namespace cairn;
using namespace cairn::io;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> make_records(size_t n) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Example ex;
    ex.features["label"] = Feature::int64s({static_cast<int64_t>(rng() % 10)});
    std::vector<float> dense(32);
    for (float& x : dense) x = u(rng);
    ex.features["dense"] = Feature::floats(dense);
    std::vector<int64_t> tokens(10 + rng() % 21);
    for (int64_t& t : tokens) t = static_cast<int64_t>(rng() % 50000);
    ex.features["tokens"] = Feature::int64s(tokens);
    std::string image(784, '\0');
    for (char& c : image) c = static_cast<char>(rng());
    ex.features["image"] = Feature::bytes({image});
    ex.features["weight"] = Feature::floats({u(rng)});
    out.push_back(serialize(ex));
  }
  return out;
}

// ---- the nanopb-primitives reader: same walk as runtime/io/example.cc, through pb_istream_t ----
struct Scratch {
  std::vector<float> floats;
  std::vector<int64_t> int64s;
  size_t bytes = 0;
};

bool nanopb_list(pb_istream_t* s, uint32_t kind, Scratch& out) {
  while (s->bytes_left) {
    pb_wire_type_t wire;
    uint32_t tag;
    bool eof;
    if (!pb_decode_tag(s, &wire, &tag, &eof)) return false;
    if (tag != 1) {
      if (!pb_skip_field(s, wire)) return false;
      continue;
    }
    if (kind == 1 && wire == PB_WT_STRING) {
      pb_istream_t sub;
      if (!pb_make_string_substream(s, &sub)) return false;
      out.bytes += sub.bytes_left;
      if (!pb_read(&sub, nullptr, sub.bytes_left)) return false;  // skips: the bytes are only counted
      if (!pb_close_string_substream(s, &sub)) return false;
    } else if (kind == 2 && wire == PB_WT_STRING) {
      pb_istream_t sub;
      if (!pb_make_string_substream(s, &sub)) return false;
      while (sub.bytes_left) {
        float x;
        if (!pb_decode_fixed32(&sub, &x)) return false;
        out.floats.push_back(x);
      }
      if (!pb_close_string_substream(s, &sub)) return false;
    } else if (kind == 3 && wire == PB_WT_STRING) {
      pb_istream_t sub;
      if (!pb_make_string_substream(s, &sub)) return false;
      while (sub.bytes_left) {
        uint64_t v;
        if (!pb_decode_varint(&sub, &v)) return false;
        out.int64s.push_back(static_cast<int64_t>(v));
      }
      if (!pb_close_string_substream(s, &sub)) return false;
    } else if (!pb_skip_field(s, wire)) {
      return false;
    }
  }
  return true;
}

// Calls fn(substream) for every LEN field `number` of the message in `s`.
template <class Fn>
bool nanopb_each(pb_istream_t* s, uint32_t number, Fn&& fn) {
  while (s->bytes_left) {
    pb_wire_type_t wire;
    uint32_t tag;
    bool eof;
    if (!pb_decode_tag(s, &wire, &tag, &eof)) return false;
    if (wire != PB_WT_STRING || (number && tag != number)) {
      if (!pb_skip_field(s, wire)) return false;
      continue;
    }
    pb_istream_t sub;
    if (!pb_make_string_substream(s, &sub)) return false;
    if (!fn(&sub, tag)) return false;
    if (!pb_close_string_substream(s, &sub)) return false;
  }
  return true;
}

bool nanopb_walk(const std::string& record, Scratch& out) {
  pb_istream_t s = pb_istream_from_buffer(reinterpret_cast<const pb_byte_t*>(record.data()), record.size());
  return nanopb_each(&s, 1, [&](pb_istream_t* features, uint32_t) {         // Example.features
    return nanopb_each(features, 1, [&](pb_istream_t* entry, uint32_t) {    // map entries
      return nanopb_each(entry, 0, [&](pb_istream_t* field, uint32_t tag) {  // key = 1, value = 2
        if (tag != 2) return pb_read(field, nullptr, field->bytes_left);
        return nanopb_each(field, 0, [&](pb_istream_t* list, uint32_t kind) { return nanopb_list(list, kind, out); });
      });
    });
  });
}

double rate(size_t n, double seconds) { return static_cast<double>(n) / seconds; }

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  const std::vector<std::string> records = make_records(n);
  size_t total = 0;
  for (const std::string& r : records) total += r.size();
  std::vector<std::string_view> views(records.begin(), records.end());
  CpuDevice* host = new CpuDevice(default_allocator());

  const std::vector<FeatureSpec> specs = {
      {"label", SpecKind::FixedLen, DType::Int64, Shape{}, std::nullopt},
      {"dense", SpecKind::FixedLen, DType::Float32, Shape{32}, std::nullopt},
      {"tokens", SpecKind::VarLen, DType::Int64, Shape{}, std::nullopt},
      {"image", SpecKind::FixedLen, DType::UInt8, Shape{28, 28}, std::nullopt},
      {"weight", SpecKind::FixedLen, DType::Float32, Shape{}, std::nullopt},
  };
  constexpr size_t kBatch = 256;
  int64_t sink = 0;
  const double t_batch = best_of(3, [&] {
    for (size_t i = 0; i < n; i += kBatch) {
      auto out = parse_examples(*host, views.data() + i, std::min(kBatch, n - i), specs);
      sink += out[0].num_elements();
    }
  });
  ThreadPool pool(0);
  const double t_pool = best_of(3, [&] {
    for (size_t i = 0; i < n; i += kBatch) {
      auto out = parse_examples(*host, views.data() + i, std::min(kBatch, n - i), specs, &pool);
      sink += out[0].num_elements();
    }
  });
  const double t_struct = best_of(3, [&] {
    for (const std::string& r : records) sink += static_cast<int64_t>(parse_example(r).features.size());
  });
  Scratch scratch;
  const double t_nanopb = best_of(3, [&] {
    for (const std::string& r : records) {
      scratch.floats.clear();
      scratch.int64s.clear();
      scratch.bytes = 0;
      if (!nanopb_walk(r, scratch)) std::abort();
      sink += static_cast<int64_t>(scratch.int64s.size());
    }
  });

  const double mb = static_cast<double>(total) / 1e6;
  std::printf("%zu records, %.0f bytes each on average (sink %lld)\n", n, static_cast<double>(total) / n,
              static_cast<long long>(sink));
  std::printf("parse_examples (batches of %zu into tensors): %10.0f records/s  %7.1f MB/s\n", kBatch,
              rate(n, t_batch), mb / t_batch);
  std::printf("parse_examples on %d threads               : %10.0f records/s  %7.1f MB/s\n", pool.num_threads(),
              rate(n, t_pool), mb / t_pool);
  std::printf("parse_example (message structure)          : %10.0f records/s  %7.1f MB/s\n", rate(n, t_struct),
              mb / t_struct);
  std::printf("nanopb primitives walk (values only)       : %10.0f records/s  %7.1f MB/s\n", rate(n, t_nanopb),
              mb / t_nanopb);
  std::printf("ratio parse_examples / nanopb walk: %.2fx\n", t_nanopb / t_batch);
  return 0;
}
