// Input pipelines (issue 13) through the C API: printed figures, never a test.
//
//   bazel run -c opt //bench:data_bench -- [guide] [images] [tfrecord] [--dir DIR] [--mib N] [--sizes B,B,..]
//                                           [--epochs N]
//   bench/data_bench.sh   (builds this, runs it and the peers' scripts, prints ratios from one run)
//
// guide     TensorFlow's "Better performance with the tf.data API" benchmark: a generator that
//           sleeps 30 ms to open and 15 ms per element (3 elements), a training step of 10 ms, two
//           epochs, a map that sleeps 30 ms. The sleeps are host callbacks, so each pipeline has an
//           ideal time; printed beside the measured one (target: within 10%).
// images    60,000 28x28 uint8 images (and int64 labels) in memory: from_tensor_slices -> map
//           (cast to float32, / 255; compiled) -> shuffle(10000) -> batch(128) -> prefetch.
//           Elements per second (bench/peers/ runs the same in tf.data and PyTorch).
// tfrecord  TFRecord files read through tfrecord -> prefetch against read() of the same files;
//           also the source alone (on the caller's thread), tfrecord -> batch(32) -> prefetch, and
//           cairn_record_reader (no pipeline).
// Every section also reports the iterator's checkpoint: cairn_iterator_save's size and time.
//
// Lines starting with "@ " are for data_bench.sh: "@ <key> <value>".
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cairn/cairn.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void check(cairn_status* st, const char* what) {
  if (st == nullptr) return;
  std::fprintf(stderr, "data_bench: %s: %s\n", what, cairn_status_message(st));
  std::exit(1);
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

void report(const std::string& key, double value) { std::printf("@ %s %.6g\n", key.c_str(), value); }

cairn_context* g_ctx = nullptr;

// Owns a dataset handle; each stage frees the previous handle (the new dataset keeps what it needs).
struct Pipeline {
  cairn_dataset* ds = nullptr;
  Pipeline() = default;
  Pipeline(Pipeline&& o) noexcept : ds(o.ds) { o.ds = nullptr; }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;
  // `next` by reference: it is read after the constructor call beside it has set it.
  Pipeline& then(cairn_status* st, cairn_dataset* const& next, const char* what) {
    check(st, what);
    cairn_dataset_free(ds);
    ds = next;
    return *this;
  }
  ~Pipeline() { cairn_dataset_free(ds); }
};

// Pulls one element; false at the end of data. The tensors are freed at once.
bool next(cairn_object* it, std::vector<cairn_tensor*>& out, int64_t* leading = nullptr, size_t* bytes = nullptr) {
  cairn_status* st = cairn_iterator_next(it, out.data(), out.size());
  if (st != nullptr) {
    if (cairn_status_code(st) == CAIRN_OUT_OF_RANGE) {
      cairn_status_free(st);
      return false;
    }
    check(st, "cairn_iterator_next");
  }
  if (leading != nullptr) *leading = cairn_tensor_rank(out[0]) > 0 ? cairn_tensor_dim(out[0], 0) : 1;
  if (bytes != nullptr) *bytes = cairn_tensor_nbytes(out[0]);
  for (auto*& t : out) {
    cairn_tensor_free(t);
    t = nullptr;
  }
  return true;
}

cairn_object* iterate(const cairn_dataset* ds) {
  cairn_object* it = nullptr;
  check(cairn_dataset_iterate(ds, &it), "cairn_dataset_iterate");
  return it;
}

// Saves `it`'s state `reps` times: prints and reports its size and the mean time per save.
void checkpoint_figures(cairn_object* it, const std::string& key, int reps = 20) {
  size_t size = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) {
    void* state = nullptr;
    check(cairn_iterator_save(it, &state, &size), "cairn_iterator_save");
    cairn_free(state);
  }
  const double per = since(t0) / reps;
  std::printf("  checkpoint %-34s %10zu bytes, save %9.1f us (position %lld)\n", key.c_str(), size, per * 1e6,
              static_cast<long long>(cairn_iterator_position(it)));
  report("ckpt." + key + ".bytes", static_cast<double>(size));
  report("ckpt." + key + ".save_us", per * 1e6);
}

// ---------------------------------------------------------------------------------------------
// 1. TensorFlow's tf.data performance guide, with its sleeps.

constexpr double kOpen = 0.030;   // the generator "opens its file" before element 0
constexpr double kRead = 0.015;   // and "reads" each element
constexpr double kTrain = 0.010;  // the training step after each element
constexpr double kMapSleep = 0.030;
constexpr int64_t kSamples = 3;
constexpr int kGuideEpochs = 2;

// ArtificialDataset: element i is the int64 vector [i].
cairn_status* artificial(void*, cairn_context* ctx, int64_t index, cairn_tensor** out, size_t, cairn_bool* got) {
  if (index == 0) sleep_s(kOpen);
  if (index >= kSamples) {
    *got = CAIRN_FALSE;
    return nullptr;
  }
  sleep_s(kRead);
  const int64_t dim = 1;
  *got = CAIRN_TRUE;
  return cairn_tensor_create(ctx, CAIRN_INT64, &dim, 1, &index, sizeof index, out);
}

const char* kSampleName = "sample";
const int64_t kOneDim = 1;

cairn_tensor_spec sample_spec() {
  cairn_tensor_spec s = CAIRN_TENSOR_SPEC_INIT;
  s.dtype = CAIRN_INT64;
  s.shape = &kOneDim;
  s.rank = 1;
  return s;
}

cairn_status* artificial_dataset(cairn_context* ctx, cairn_dataset** out) {
  const cairn_tensor_spec spec = sample_spec();
  return cairn_dataset_from_generator(ctx, &kSampleName, &spec, 1, artificial, nullptr, nullptr, out);
}

// The interleave function: an ArtificialDataset per input element.
cairn_status* artificial_for(void*, cairn_context* ctx, cairn_tensor* const*, size_t, cairn_dataset** out) {
  return artificial_dataset(ctx, out);
}

// mapped_function: 30 ms of "hard pre-processing", the element unchanged.
cairn_status* slow_identity(void*, cairn_context*, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  sleep_s(kMapSleep);
  return cairn_tensor_share(in[0], out);
}

// The guide's benchmark(): a fresh iterator per epoch, a 10 ms step per element.
double guide_run(const cairn_dataset* ds, int epochs) {
  std::vector<cairn_tensor*> out(cairn_dataset_num_components(ds), nullptr);
  auto t0 = Clock::now();
  for (int e = 0; e < epochs; ++e) {
    cairn_object* it = iterate(ds);
    while (next(it, out)) sleep_s(kTrain);
    cairn_object_free(it);
  }
  return since(t0);
}

Pipeline guide_source() {
  Pipeline p;
  cairn_dataset* d = nullptr;
  return std::move(p.then(artificial_dataset(g_ctx, &d), d, "from_generator"));
}

Pipeline& guide_map(Pipeline& p, int32_t parallel) {
  const cairn_tensor_spec spec = sample_spec();
  cairn_map_options o = CAIRN_MAP_OPTIONS_INIT;
  o.compile = CAIRN_FALSE;  // the sleep must run for every element
  o.n_outputs = 1;
  o.output_names = &kSampleName;
  o.output_specs = &spec;
  o.num_parallel_calls = parallel;
  cairn_dataset* d = nullptr;
  return p.then(cairn_dataset_map(p.ds, "mapped_function", slow_identity, nullptr, &o, &d), d, "map");
}

Pipeline guide_interleave(int32_t parallel) {
  Pipeline p;
  cairn_dataset* d = nullptr;
  p.then(cairn_dataset_range(g_ctx, 0, 2, 1, &d), d, "range");
  const cairn_tensor_spec spec = sample_spec();
  cairn_interleave_options o = CAIRN_INTERLEAVE_OPTIONS_INIT;
  o.num_parallel_calls = parallel;
  return std::move(p.then(cairn_dataset_interleave(p.ds, artificial_for, nullptr, &kSampleName, &spec, 1, &o, &d), d,
                          "interleave"));
}

void guide_case(const char* key, const char* what, const Pipeline& p, double ideal, int epochs = kGuideEpochs) {
  guide_run(p.ds, 1);  // warm: threads, first allocations
  const double t = guide_run(p.ds, epochs);
  std::printf("  %-22s %-52s %7.1f ms  ideal %7.1f ms  %.3fx\n", key, what, t * 1e3, ideal * 1e3, t / ideal);
  report(std::string("guide.") + key + ".s", t);
  report(std::string("guide.") + key + ".ideal_s", ideal);
}

void guide() {
  std::printf("== tf.data performance guide (sleeps: open %.0f ms, read %.0f ms x %lld, step %.0f ms, map %.0f ms; %d epochs)\n",
              kOpen * 1e3, kRead * 1e3, static_cast<long long>(kSamples), kTrain * 1e3, kMapSleep * 1e3, kGuideEpochs);
  const double E = kGuideEpochs, N = static_cast<double>(kSamples);
  {
    Pipeline p = guide_source();
    // Everything in sequence: open, then read + step per element.
    guide_case("naive", "ArtificialDataset()", p, E * (kOpen + N * (kRead + kTrain)));
    cairn_dataset* d = nullptr;
    p.then(cairn_dataset_prefetch(p.ds, CAIRN_AUTOTUNE, &d), d, "prefetch");
    // Reading (15 ms) is slower than the step (10 ms): the reader sets the pace, the last step follows.
    guide_case("prefetch", ".prefetch(AUTOTUNE)", p, E * (kOpen + N * kRead + kTrain));
  }
  {
    Pipeline seq = guide_interleave(0);
    // Two inputs opened and read one after the other, a step per element.
    guide_case("interleave_sequential", "range(2).interleave(ArtificialDataset)", seq,
               E * (2 * kOpen + 2 * N * (kRead + kTrain)));
    Pipeline par = guide_interleave(CAIRN_AUTOTUNE);
    // Both inputs open and read at once: two readers make an element per 7.5 ms, faster than the
    // 10 ms step, so after the first element (open + read) the steps set the pace.
    guide_case("interleave_parallel", "range(2).interleave(..., num_parallel_calls=AUTOTUNE)", par,
               E * (kOpen + kRead + 2 * N * kTrain));
  }
  {
    Pipeline seq = guide_source();
    guide_map(seq, 0);
    guide_case("map_sequential", ".map(mapped_function)", seq, E * (kOpen + N * (kRead + kMapSleep + kTrain)));
    Pipeline par = guide_source();
    guide_map(par, CAIRN_AUTOTUNE);
    // Maps overlap (two in flight): each element is ready 30 ms after it is read; the reader sets
    // the pace, then the last map and step follow.
    guide_case("map_parallel", ".map(mapped_function, num_parallel_calls=AUTOTUNE)", par,
               E * (kOpen + N * kRead + kMapSleep + kTrain));
    // Not in the guide: three calls, so one worker can pull the input while two map.
    Pipeline three = guide_source();
    guide_map(three, 3);
    guide_case("map_parallel_3", ".map(mapped_function, num_parallel_calls=3)", three,
               E * (kOpen + N * kRead + kMapSleep + kTrain));
    // The first epoch as map_sequential, later ones only the steps (the cache is filled by the
    // first iterator and read by the next ones). Not warmed: a warm run would fill the cache.
    cairn_dataset* d = nullptr;
    Pipeline cached = guide_source();
    guide_map(cached, 0);
    cached.then(cairn_dataset_cache(cached.ds, nullptr, &d), d, "cache");
    const double t = guide_run(cached.ds, 5);
    const double ideal = kOpen + N * (kRead + kMapSleep + kTrain) + 4 * N * kTrain;
    std::printf("  %-22s %-52s %7.1f ms  ideal %7.1f ms  %.3fx\n", "cache", ".map(mapped_function).cache(), 5 epochs",
                t * 1e3, ideal * 1e3, t / ideal);
    report("guide.cache.s", t);
    report("guide.cache.ideal_s", ideal);
  }
  {
    Pipeline p = guide_source();
    guide_map(p, CAIRN_AUTOTUNE);
    cairn_dataset* d = nullptr;
    p.then(cairn_dataset_prefetch(p.ds, CAIRN_AUTOTUNE, &d), d, "prefetch");
    cairn_object* it = iterate(p.ds);
    std::vector<cairn_tensor*> out(1, nullptr);
    next(it, out);
    checkpoint_figures(it, "guide_map_prefetch");
    cairn_object_free(it);
  }
}

// ---------------------------------------------------------------------------------------------
// 2. 60,000 28x28 uint8 images in memory.

constexpr int64_t kImages = 60000;
constexpr int64_t kSide = 28;
constexpr int64_t kBatch = 128;
constexpr int64_t kShuffleBuffer = 10000;

cairn_tensor* f32_scalar(cairn_context* ctx, float v) {
  cairn_tensor* t = nullptr;
  check(cairn_tensor_create(ctx, CAIRN_FLOAT32, nullptr, 0, &v, sizeof v, &t), "scalar");
  return t;
}

// (image, label) -> (float32(image) / 255, label); traced once.
cairn_status* normalize(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_attr to_float{};
  to_float.name = "DstT";
  to_float.kind = CAIRN_ATTR_DTYPE;
  to_float.dtype = CAIRN_FLOAT32;
  cairn_tensor* as_float = nullptr;
  cairn_status* st = cairn_op_run(ctx, "Cast", in, 1, &to_float, 1, &as_float, 1);
  if (st != nullptr) return st;
  cairn_tensor* scale = f32_scalar(ctx, 255.0f);
  cairn_tensor* div_in[2] = {as_float, scale};
  st = cairn_op_run(ctx, "RealDiv", div_in, 2, nullptr, 0, &out[0], 1);
  cairn_tensor_free(as_float);
  cairn_tensor_free(scale);
  if (st != nullptr) return st;
  return cairn_op_run(ctx, "Identity", &in[1], 1, nullptr, 0, &out[1], 1);
}

// label >= 0: always true, only there to turn the indexable source into a stream.
cairn_status* keep_all(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  int64_t zero = 0;
  cairn_tensor* z = nullptr;
  cairn_status* st = cairn_tensor_create(ctx, CAIRN_INT64, nullptr, 0, &zero, sizeof zero, &z);
  if (st != nullptr) return st;
  cairn_tensor* ge_in[2] = {in[1], z};
  st = cairn_op_run(ctx, "GreaterEqual", ge_in, 2, nullptr, 0, out, 1);
  cairn_tensor_free(z);
  return st;
}

const char* kImageNames[2] = {"image", "label"};

// The images pipeline; with `stream`, a filter before the map makes the shuffle buffer elements.
Pipeline images_pipeline(bool stream, int32_t map_parallel) {
  std::vector<uint8_t> pixels(static_cast<size_t>(kImages * kSide * kSide));
  std::vector<int64_t> labels(static_cast<size_t>(kImages));
  uint64_t s = 0x9E3779B97F4A7C15ull;
  for (auto& p : pixels) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    p = static_cast<uint8_t>(s >> 56);
  }
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  const int64_t image_shape[3] = {kImages, kSide, kSide};
  cairn_tensor* tensors[2] = {nullptr, nullptr};
  check(cairn_tensor_create(g_ctx, CAIRN_UINT8, image_shape, 3, pixels.data(), pixels.size(), &tensors[0]), "images");
  check(cairn_tensor_create(g_ctx, CAIRN_INT64, &kImages, 1, labels.data(), labels.size() * sizeof(int64_t),
                            &tensors[1]),
        "labels");
  Pipeline p;
  cairn_dataset* d = nullptr;
  p.then(cairn_dataset_from_tensor_slices(g_ctx, kImageNames, tensors, 2, &d), d, "from_tensor_slices");
  cairn_tensor_free(tensors[0]);
  cairn_tensor_free(tensors[1]);
  if (stream) {
    cairn_filter_options fo = CAIRN_FILTER_OPTIONS_INIT;
    p.then(cairn_dataset_filter(p.ds, "keep_all", keep_all, nullptr, &fo, &d), d, "filter");
  }
  cairn_map_options mo = CAIRN_MAP_OPTIONS_INIT;
  mo.n_outputs = 2;
  mo.output_names = kImageNames;
  mo.num_parallel_calls = map_parallel;
  p.then(cairn_dataset_map(p.ds, "normalize", normalize, nullptr, &mo, &d), d, "map");
  p.then(cairn_dataset_shuffle(p.ds, kShuffleBuffer, 42, CAIRN_TRUE, &d), d, "shuffle");
  p.then(cairn_dataset_batch(p.ds, kBatch, CAIRN_FALSE, &d), d, "batch");
  p.then(cairn_dataset_prefetch(p.ds, CAIRN_AUTOTUNE, &d), d, "prefetch");
  return p;
}

// One epoch through a fresh iterator: elements per second.
double images_epoch(const cairn_dataset* ds) {
  std::vector<cairn_tensor*> out(2, nullptr);
  auto t0 = Clock::now();
  cairn_object* it = iterate(ds);
  int64_t n = 0, rows = 0;
  while (next(it, out, &rows)) n += rows;
  cairn_object_free(it);
  const double t = since(t0);
  if (n != kImages) {
    std::fprintf(stderr, "data_bench: an epoch gave %lld elements, not %lld\n", static_cast<long long>(n),
                 static_cast<long long>(kImages));
    std::exit(1);
  }
  return kImages / t;
}

void images_case(const char* key, const char* what, bool stream, int32_t parallel, int epochs) {
  Pipeline p = images_pipeline(stream, parallel);
  images_epoch(p.ds);  // warm
  std::vector<double> rates;
  for (int e = 0; e < epochs; ++e) rates.push_back(images_epoch(p.ds));
  std::sort(rates.begin(), rates.end());
  const double median = rates[rates.size() / 2];
  std::printf("  %-16s %-58s %10.0f elements/s (median of %d epochs; %.0f-%.0f)\n", key, what, median, epochs,
              rates.front(), rates.back());
  report(std::string("images.") + key + ".eps", median);
  // Checkpoint mid-epoch (after 200 batches).
  cairn_object* it = iterate(p.ds);
  std::vector<cairn_tensor*> out(2, nullptr);
  for (int b = 0; b < 200; ++b) next(it, out);
  checkpoint_figures(it, std::string("images_") + key);
  cairn_object_free(it);
}

void images(int epochs) {
  std::printf("== %lld %lldx%lld uint8 images: map(cast, /255) -> shuffle(%lld) -> batch(%lld) -> prefetch(AUTOTUNE)\n",
              static_cast<long long>(kImages), static_cast<long long>(kSide), static_cast<long long>(kSide),
              static_cast<long long>(kShuffleBuffer), static_cast<long long>(kBatch));
  images_case("cairn", "map num_parallel_calls=AUTOTUNE (the peers' setting)", false, CAIRN_AUTOTUNE, epochs);
  images_case("cairn_seqmap", "map num_parallel_calls=0", false, 0, epochs);
  images_case("cairn_stream", "filter before map: shuffle buffers 10,000 elements", true, CAIRN_AUTOTUNE, epochs);
}

// ---------------------------------------------------------------------------------------------
// 3. TFRecord files: the pipeline against read() of the same files.

constexpr int kFiles = 4;

double read_files(const std::vector<std::string>& paths, uint64_t* total) {
  static std::vector<char> buf(1 << 20);
  auto t0 = Clock::now();
  uint64_t sum = 0;
  for (const auto& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      std::perror(path.c_str());
      std::exit(1);
    }
    for (ssize_t got; (got = ::read(fd, buf.data(), buf.size())) > 0;) sum += static_cast<uint64_t>(got);
    ::close(fd);
  }
  *total = sum;
  return since(t0);
}

std::vector<std::string> write_records(const std::string& dir, size_t record_bytes, size_t total_bytes) {
  std::vector<std::string> paths;
  std::string payload(record_bytes, '\0');
  uint64_t s = 88172645463325252ull ^ record_bytes;
  for (auto& c : payload) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    c = static_cast<char>(s);
  }
  const size_t per_file = std::max<size_t>(1, total_bytes / record_bytes / kFiles);
  for (int f = 0; f < kFiles; ++f) {
    paths.push_back(dir + "/cairn-data-bench-" + std::to_string(record_bytes) + "-" + std::to_string(f) + ".tfrecord");
    cairn_record_writer* w = nullptr;
    check(cairn_record_writer_open(paths.back().c_str(), nullptr, &w), "cairn_record_writer_open");
    for (size_t i = 0; i < per_file; ++i) check(cairn_record_writer_write(w, payload.data(), payload.size()), "write");
    check(cairn_record_writer_close(w), "cairn_record_writer_close");
    cairn_record_writer_free(w);
  }
  return paths;
}

// Reads every record of the files with cairn_record_reader (no pipeline): the record format's own cost.
double reader_pass(const std::vector<std::string>& paths, uint64_t* records) {
  auto t0 = Clock::now();
  uint64_t n = 0;
  for (const auto& path : paths) {
    cairn_record_reader* r = nullptr;
    check(cairn_record_reader_open(path.c_str(), nullptr, &r), "cairn_record_reader_open");
    const void* data = nullptr;
    size_t size = 0;
    cairn_bool got = CAIRN_FALSE;
    for (;;) {
      check(cairn_record_reader_next(r, &data, &size, &got), "cairn_record_reader_next");
      if (!got) break;
      ++n;
    }
    cairn_record_reader_free(r);
  }
  *records = n;
  return since(t0);
}

// Iterates `ds` to the end once: the time; every record's bytes and count in *payload, *records.
double pipeline_pass(const cairn_dataset* ds, uint64_t* payload, uint64_t* records) {
  std::vector<cairn_tensor*> out(1, nullptr);
  auto t0 = Clock::now();
  cairn_object* it = iterate(ds);
  *payload = *records = 0;
  size_t bytes = 0;
  while (next(it, out, nullptr, &bytes)) {
    *payload += bytes;
    ++*records;
  }
  cairn_object_free(it);
  return since(t0);
}

void tfrecord_case(const std::string& dir, size_t record_bytes, size_t total_bytes) {
  const auto paths = write_records(dir, record_bytes, total_bytes);
  std::vector<const char*> cpaths;
  for (const auto& p : paths) cpaths.push_back(p.c_str());
  Pipeline bare;
  cairn_dataset* d = nullptr;
  bare.then(cairn_dataset_tfrecord(g_ctx, cpaths.data(), cpaths.size(), nullptr, &d), d, "tfrecord");
  Pipeline p;
  p.then(cairn_dataset_prefetch(bare.ds, CAIRN_AUTOTUNE, &d), d, "prefetch");
  Pipeline batched;  // one hand-off per 32 records
  batched.then(cairn_dataset_batch(bare.ds, 32, CAIRN_FALSE, &d), d, "batch");
  batched.then(cairn_dataset_prefetch(batched.ds, CAIRN_AUTOTUNE, &d), d, "prefetch");
  uint64_t file_bytes = 0, payload = 0, records = 0, n = 0;
  read_files(paths, &file_bytes);  // into the page cache
  const double first = pipeline_pass(p.ds, &payload, &records);  // builds each file's index
  double raw = 1e30, piped = 1e30, unpiped = 1e30, reader = 1e30, in_batches = 1e30;
  uint64_t batched_payload = 0;
  for (int i = 0; i < 5; ++i) {  // interleaved, so load elsewhere hits all alike; best of 5
    raw = std::min(raw, read_files(paths, &n));
    piped = std::min(piped, pipeline_pass(p.ds, &payload, &records));
    unpiped = std::min(unpiped, pipeline_pass(bare.ds, &payload, &n));
    reader = std::min(reader, reader_pass(paths, &n));
    in_batches = std::min(in_batches, pipeline_pass(batched.ds, &batched_payload, &n));
  }
  if (payload != records * record_bytes || batched_payload != payload) {
    std::fprintf(stderr, "data_bench: read %llu records of %llu bytes in all\n", static_cast<unsigned long long>(records),
                 static_cast<unsigned long long>(payload));
    std::exit(1);
  }
  const double gb = static_cast<double>(file_bytes) / 1e9;
  std::printf("  %8zu-byte records x %7llu: read() %6.2f GB/s | tfrecord->prefetch %6.2f GB/s %5.2fx (%7.0f records/s)"
              " | tfrecord alone %6.2f GB/s %5.2fx | ->batch(32)->prefetch %6.2f GB/s %5.2fx"
              " | cairn_record_reader %6.2f GB/s %5.2fx | first pass %5.2f GB/s\n",
              record_bytes, static_cast<unsigned long long>(records), gb / raw, gb / piped, raw / piped,
              records / piped, gb / unpiped, raw / unpiped, gb / in_batches, raw / in_batches, gb / reader,
              raw / reader, gb / first);
  const std::string key = "tfrecord." + std::to_string(record_bytes);
  report(key + ".ratio", raw / piped);
  report(key + ".gbps", gb / piped);
  report(key + ".rps", records / piped);
  report(key + ".raw_gbps", gb / raw);
  report(key + ".bare_ratio", raw / unpiped);
  report(key + ".reader_ratio", raw / reader);
  report(key + ".batched_ratio", raw / in_batches);
  std::vector<cairn_tensor*> out(1, nullptr);
  cairn_object* it = iterate(p.ds);
  for (uint64_t i = 0; i < records / 2; ++i) next(it, out);
  checkpoint_figures(it, "tfrecord_" + std::to_string(record_bytes));
  cairn_object_free(it);
  for (const auto& path : paths) {
    ::unlink(path.c_str());
    ::unlink((path + ".cairnidx").c_str());
  }
}

void tfrecord(const std::string& dir, size_t mib, const std::vector<size_t>& sizes) {
  std::printf("== TFRecord: %d files, %zu MiB per record size, tfrecord -> prefetch(AUTOTUNE) against read() of the "
              "files (1 MiB buffer), page cache warm, best of 5\n",
              kFiles, mib);
  for (size_t size : sizes) tfrecord_case(dir, size, mib << 20);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sections;
  std::string dir = "/tmp";
  size_t mib = 128;
  int epochs = 5;
  std::vector<size_t> sizes = {100, 1024, 16 << 10, 256 << 10, 1 << 20};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--mib" && i + 1 < argc) {
      mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--sizes" && i + 1 < argc) {  // record sizes in bytes, comma-separated
      sizes.clear();
      for (const char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        sizes.push_back(std::strtoull(p, &end, 10));
        p = *end == ',' ? end + 1 : end;
        if (sizes.back() == 0) {
          std::fprintf(stderr, "data_bench: --sizes takes byte counts like 100,1024\n");
          return 2;
        }
      }
    } else if (a == "--epochs" && i + 1 < argc) {
      epochs = std::atoi(argv[++i]);
    } else if (a == "guide" || a == "images" || a == "tfrecord") {
      sections.push_back(a);
    } else {
      std::fprintf(stderr, "usage: data_bench [guide] [images] [tfrecord] [--dir DIR] [--mib N] [--sizes B,B,..] [--epochs N]\n");
      return 2;
    }
  }
  if (sections.empty()) sections = {"guide", "images", "tfrecord"};
  check(cairn_context_create(nullptr, &g_ctx), "cairn_context_create");
  std::printf("data_bench: %u CPUs\n", std::thread::hardware_concurrency());
  for (const auto& s : sections) {
    if (s == "guide") guide();
    if (s == "images") images(epochs);
    if (s == "tfrecord") tfrecord(dir, mib, sizes);
  }
  cairn_context_free(g_ctx);
  return 0;
}
