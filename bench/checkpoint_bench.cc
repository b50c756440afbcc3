// Checkpoint save/restore speed against raw file I/O of the same bytes, in the same run
// (design/ARCHITECTURE.md budgets: save >= 0.7x raw write+fsync, restore >= 0.8x raw read; issue 20:
// save >= 0.95x, restore >= 0.95x, zstd save >= 0.5x on two cores). bench/checkpoint_bench.sh adds
// TensorFlow's save and restore of the same variables.
//
//   bazel run -c opt //bench:checkpoint_bench -- [DIR [SECTIONS [REPS]]]
//       DIR defaults to /tmp/cairn-ckpt-bench; SECTIONS is a comma-separated subset of
//       raw,zstd,small,object (all by default); REPS (default 5) repetitions of the raw and
//       object cases. Lines "@ name seconds" are for the script.
//
// Saves and restores get the context's thread pool, as Checkpoint::write and restore do.
// Cases: 256 MiB of float32 in 100 tensors, raw and zstd (random-normal-ish values, and the same
// pruned to 1/4 nonzero, which compresses well; zstd at the default level and at 3); 10,000 small
// tensors (per-tensor cost). The write baseline writes the same bytes to a fresh file in the same
// directory; the read baseline preads the checkpoint's own payload ranges (same disk blocks).
// Restores are measured with the file in the page cache ("hot") and after dropping it from the
// cache with posix_fadvise ("cold"). In section `raw` each repetition runs the raw write, the
// format-level save and the save of the same tensors through the object graph in a rotating order
// (same conditions for all three: fresh files, fsync, no dirty pages left by the one before), and
// prints every pair and its process CPU time beside the medians. Prints figures; it is not a test.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/writer.h"
#include "runtime/eager/context.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void die(const char* what) {
  std::perror(what);
  std::exit(1);
}

// Values like trained weights: roughly normal (sum of 4 uniforms), std ~0.05.
Tensor normal_tensor(Device& cpu, int64_t n, uint64_t seed) {
  Tensor t = Tensor::allocate(cpu, DType::Float32, Shape{n});
  float* p = t.mutable_data<float>();
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int k = 0; k < 4; ++k) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      acc += static_cast<float>(s >> 40) * (1.0f / 16777216.0f) - 0.5f;
    }
    p[i] = acc * 0.087f;
  }
  return t;
}

// A pruned layer: `zeros_of_4` of every 4 values (chosen by a hash of the index) set to zero, the
// rest kept. Compresses well, unlike dense float weights.
Tensor pruned_tensor(Device& cpu, const Tensor& dense, int zeros_of_4) {
  Tensor t = Tensor::allocate(cpu, DType::Float32, dense.shape());
  const float* src = dense.data<float>();
  float* dst = t.mutable_data<float>();
  for (int64_t i = 0; i < dense.num_elements(); ++i) {
    uint64_t h = static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ull;
    dst[i] = static_cast<int>((h >> 60) & 3) < zeros_of_4 ? 0.0f : src[i];
  }
  return t;
}

double process_cpu_seconds() {
  struct rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Runs `timed` (which returns its wall-clock seconds) and appends the process CPU time it took to
// `cpu`: a figure that the machine's load changes much less than wall-clock time.
template <class F>
double with_cpu(std::vector<double>& cpu, F timed) {
  const double cpu0 = process_cpu_seconds();
  const double wall = timed();
  cpu.push_back(process_cpu_seconds() - cpu0);
  return wall;
}

void drop_from_page_cache(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die(path.c_str());
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

uint64_t file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) die(path.c_str());
  return static_cast<uint64_t>(st.st_size);
}

// The baseline: the same bytes, one write per tensor, to a fresh file in the same directory, fsync.
double raw_write(const std::string& path, const std::vector<ckpt::SaveEntry>& entries) {
  ::unlink(path.c_str());
  auto t0 = Clock::now();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) die(path.c_str());
  for (const auto& e : entries) {
    const char* p = static_cast<const char*>(e.tensor.raw_data());
    size_t left = e.tensor.nbytes();
    while (left > 0) {
      ssize_t w = ::write(fd, p, left);
      if (w <= 0) die("write");
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  if (::fsync(fd) != 0) die("fsync");
  ::close(fd);
  return seconds_since(t0);
}

struct Range {
  uint64_t offset, size;
};

// The payload ranges of a checkpoint file, so the raw baseline reads exactly the same disk blocks.
std::vector<Range> payload_ranges(const std::string& path) {
  std::vector<Range> ranges;
  ckpt::Reader r = ckpt::Reader::open(path);
  for (const auto& e : r.entries())
    if (e.dtype != DType::String) ranges.push_back({e.offset, e.stored_size});
  return ranges;
}

// Where the values lie in the file raw_write wrote: back to back.
std::vector<Range> back_to_back(const std::vector<ckpt::SaveEntry>& entries) {
  std::vector<Range> ranges;
  uint64_t off = 0;
  for (const auto& e : entries) {
    ranges.push_back({off, e.tensor.nbytes()});
    off += e.tensor.nbytes();
  }
  return ranges;
}

// The baseline: read the same bytes into freshly allocated buffers, one pread per tensor.
double raw_read(const std::string& path, const std::vector<Range>& ranges) {
  auto t0 = Clock::now();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) die(path.c_str());
  std::vector<void*> buffers;
  for (const Range& range : ranges) {
    size_t n = range.size;
    void* buf = std::aligned_alloc(64, (n + 63) / 64 * 64);
    buffers.push_back(buf);
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(range.offset + done));
      if (r <= 0) die("pread");
      done += static_cast<size_t>(r);
    }
  }
  ::close(fd);
  double t = seconds_since(t0);
  for (void* b : buffers) std::free(b);
  return t;
}

double ckpt_save(const std::string& path, const std::vector<ckpt::SaveEntry>& entries, bool compress, ThreadPool* pool,
                 ckpt::WriteStats* stats = nullptr, int zstd_level = ckpt::WriteOptions{}.zstd_level) {
  ckpt::WriteOptions o;
  o.compress = compress;
  o.zstd_level = zstd_level;
  o.fsync = true;
  o.pool = pool;  // the context's pool, as Checkpoint::write uses
  ::unlink(path.c_str());  // a fresh file, as for the raw baseline (a manager saves to new names)
  auto t0 = Clock::now();
  ckpt::WriteStats s = ckpt::write_checkpoint(path, ckpt::ObjectGraph{}, entries, ckpt::Metadata{}, o);
  double t = seconds_since(t0);
  if (stats) *stats = s;
  return t;
}

double ckpt_restore(const std::string& path, Device& cpu, ThreadPool* pool, std::vector<Tensor>* out = nullptr) {
  auto t0 = Clock::now();
  ckpt::Reader r = ckpt::Reader::open(path);
  r.set_thread_pool(pool);  // as Checkpoint::restore does with the context's pool
  std::vector<Tensor> loaded;
  loaded.reserve(r.entries().size());
  for (const auto& e : r.entries())
    if (e.dtype != DType::String) loaded.push_back(r.load(e, cpu));
  double t = seconds_since(t0);
  if (out) *out = std::move(loaded);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void check_restored(const std::string& path, const std::vector<ckpt::SaveEntry>& entries, Device& cpu) {
  ckpt::Reader r = ckpt::Reader::open(path);
  for (const auto& e : entries) {
    Tensor t = r.load(e.key, cpu);
    if (t.nbytes() != e.tensor.nbytes() || std::memcmp(t.raw_data(), e.tensor.raw_data(), t.nbytes()) != 0) {
      std::fprintf(stderr, "restored value differs for %s\n", e.key.c_str());
      std::exit(1);
    }
  }
}

// A checkpoint whose root holds `groups` trackables, each with the given variables as edges
// "v0", "v1", ...; the variables share the tensors (no copy). `variables` gets them.
std::unique_ptr<ckpt::Checkpoint> object_checkpoint(Context& ctx, const std::vector<ckpt::SaveEntry>& values,
                                                    int groups, std::vector<Ref<Variable>>* variables = nullptr) {
  std::vector<std::pair<std::string, Ref<Object>>> children;
  for (int g = 0; g < groups; ++g) children.emplace_back("group" + std::to_string(g), Trackable::create(ctx));
  for (size_t i = 0; i < values.size(); ++i) {
    Ref<Variable> v = Variable::create(ctx, values[i].tensor);
    children[i % groups].second->set("v" + std::to_string(i), v);
    if (variables) variables->push_back(v);
  }
  return std::make_unique<ckpt::Checkpoint>(ctx, children);
}

double object_save(ckpt::Checkpoint& c, const std::string& path) {
  ::unlink(path.c_str());
  auto t0 = Clock::now();
  c.write(path);
  return seconds_since(t0);
}

long minor_faults() {
  struct rusage u;
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Page faults of the last object_restore: a figure the machine's load does not change.
long g_restore_faults = 0;

double object_restore(ckpt::Checkpoint& c, const std::string& path) {
  const long faults = minor_faults();
  auto t0 = Clock::now();
  c.restore(path)->assert_consumed();
  double t = seconds_since(t0);
  g_restore_faults = minor_faults() - faults;
  return t;
}

// The same while a read of every variable is held: the replaced buffers cannot be reused, so the
// values go to fresh memory (the restore before issue 20's buffer reuse).
double object_restore_held(ckpt::Checkpoint& c, const std::string& path, const std::vector<Ref<Variable>>& vars) {
  std::vector<Tensor> held;
  for (const Ref<Variable>& v : vars) held.push_back(v->read());
  return object_restore(c, path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp/cairn-ckpt-bench";
  // Sections to run (default all): "raw" (the format alone), "zstd", "small", "object".
  const std::string only = argc > 2 ? argv[2] : "raw,zstd,small,object";
  auto section = [&](const char* name) { return ("," + only + ",").find("," + std::string(name) + ",") != std::string::npos; };
  ::mkdir(dir.c_str(), 0755);
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  Context ctx(ContextOptions{});
  Device& cpu = ctx.cpu();

  // ---- 256 MiB of float32 in 100 tensors ----
  const int64_t total_floats = int64_t{256} << 18;  // 256 MiB / 4
  const int n_tensors = 100;
  std::vector<ckpt::SaveEntry> big;
  for (int i = 0; i < n_tensors; ++i) {
    int64_t n = total_floats / n_tensors + (i < total_floats % n_tensors ? 1 : 0);
    char key[64];
    std::snprintf(key, sizeof key, "layer_%03d/kernel/.ATTRIBUTES/VARIABLE_VALUE", i);
    big.emplace_back(key, normal_tensor(cpu, n, static_cast<uint64_t>(i)));
  }
  const double mib = static_cast<double>(total_floats) * 4 / (1 << 20);
  const std::string raw_path = dir + "/raw.bin", ckpt_path = dir + "/ckpt", zpath = dir + "/ckpt_zstd",
                    object_path = dir + "/object";

  auto line = [&](const char* what, double t_ckpt, double t_base) {
    std::printf("  %-28s %8.1f ms  %7.0f MiB/s   raw %8.1f ms  %7.0f MiB/s   ratio %.2fx\n", what, t_ckpt * 1e3,
                mib / t_ckpt, t_base * 1e3, mib / t_base, t_base / t_ckpt);
  };
  // Each repetition's pair (the two were measured back to back), so a range shows beside the medians.
  // On a loaded machine the median of these ratios is steadier than the ratio of the medians.
  auto pairs = [](const std::vector<double>& t_ckpt, const std::vector<double>& t_base) {
    std::vector<double> ratios;
    std::printf("    per repetition, ms (raw/ratio):");
    for (size_t i = 0; i < t_ckpt.size(); ++i) {
      ratios.push_back(t_base[i] / t_ckpt[i]);
      std::printf(" %.0f/%.0f/%.2fx", t_ckpt[i] * 1e3, t_base[i] * 1e3, ratios.back());
    }
    std::printf("; median ratio %.2fx, range %.2f-%.2fx\n", median(ratios), *std::min_element(ratios.begin(), ratios.end()),
                *std::max_element(ratios.begin(), ratios.end()));
  };
  auto cpu_line = [](const std::vector<double>& cpu_ckpt, const std::vector<double>& cpu_base) {
    std::printf("    process CPU per repetition, ms (raw):");
    for (size_t i = 0; i < cpu_ckpt.size(); ++i) std::printf(" %.0f (%.0f)", cpu_ckpt[i] * 1e3, cpu_base[i] * 1e3);
    std::printf("\n");
  };
  // Figures for bench/checkpoint_bench.sh, which sets them beside TensorFlow's.
  auto figure = [](const char* key, double seconds) { std::printf("@ %s %.6f\n", key, seconds); };
  if (section("raw")) {
  std::vector<double> t_raw_w, t_save, t_osave, t_raw_r, t_load, t_raw_r_cold, t_load_cold, cpu_raw_w, cpu_save, cpu_osave;
  auto graph = object_checkpoint(ctx, big, 1);  // the same tensors, shared
  for (int rep = 0; rep < reps; ++rep) {  // interleaved, so all see the same machine state
    // The raw write, the format-level save and the same values saved through the object graph, in
    // an order that rotates, so that none always follows the same one.
    for (int k = 0; k < 3; ++k) {
      switch ((rep + k) % 3) {
        case 0: t_raw_w.push_back(with_cpu(cpu_raw_w, [&] { return raw_write(raw_path, big); })); break;
        case 1: t_save.push_back(with_cpu(cpu_save, [&] { return ckpt_save(ckpt_path, big, false, &ctx.pool()); })); break;
        case 2: t_osave.push_back(with_cpu(cpu_osave, [&] { return object_save(*graph, object_path); })); break;
      }
    }
    const std::vector<Range> ranges = payload_ranges(ckpt_path);
    t_raw_r.push_back(raw_read(ckpt_path, ranges));
    t_load.push_back(ckpt_restore(ckpt_path, cpu, &ctx.pool()));
    drop_from_page_cache(ckpt_path);
    t_raw_r_cold.push_back(raw_read(ckpt_path, ranges));
    drop_from_page_cache(ckpt_path);
    t_load_cold.push_back(ckpt_restore(ckpt_path, cpu, &ctx.pool()));
  }
  check_restored(ckpt_path, big, cpu);
  std::printf("256 MiB float32 in %d tensors, %s (median of %d; ratio = checkpoint speed / raw speed)\n", n_tensors,
              dir.c_str(), reps);
  line("save (fsync)", median(t_save), median(t_raw_w));
  pairs(t_save, t_raw_w);
  cpu_line(cpu_save, cpu_raw_w);
  line("save, object graph (fsync)", median(t_osave), median(t_raw_w));
  pairs(t_osave, t_raw_w);
  cpu_line(cpu_osave, cpu_raw_w);
  line("restore, page cache hot", median(t_load), median(t_raw_r));
  line("restore, page cache cold", median(t_load_cold), median(t_raw_r_cold));
  std::printf("  file %.1f MiB for %.1f MiB of values\n", file_size(ckpt_path) / 1048576.0, mib);
  figure("raw/write_s", median(t_raw_w));
  figure("raw/read_s", median(t_raw_r));
  figure("cairn/save_s", median(t_save));
  figure("cairn/restore_s", median(t_load));
  }

  // ---- zstd: the same values, and pruned ones that compress well, at the default level and 3 ----
  if (section("zstd")) {
    std::vector<ckpt::SaveEntry> pruned;
    for (size_t i = 0; i < big.size(); ++i) pruned.emplace_back(big[i].key, pruned_tensor(cpu, big[i].tensor, 3));
    const int default_level = ckpt::WriteOptions{}.zstd_level;
    std::printf("zstd + byte shuffle (median of 3; CPU = process CPU time of one save, all threads)\n");
    for (const auto& [name, values] : {std::pair{"normal", &big}, std::pair{"pruned 3/4", &pruned}}) {
      for (int level : {default_level, 3}) {
        std::vector<double> t_zsave, t_zload, t_raw_w, t_raw_r, t_cpu;
        ckpt::WriteStats zs;
        for (int rep = 0; rep < 3; ++rep) {
          t_raw_w.push_back(raw_write(raw_path, *values));
          const double cpu0 = process_cpu_seconds();
          t_zsave.push_back(ckpt_save(zpath, *values, true, &ctx.pool(), &zs, level));
          t_cpu.push_back(process_cpu_seconds() - cpu0);
          t_raw_r.push_back(raw_read(raw_path, back_to_back(*values)));
          t_zload.push_back(ckpt_restore(zpath, cpu, &ctx.pool()));
        }
        check_restored(zpath, *values, cpu);
        std::printf(" %s values, level %d%s: file %.1f%% of the values (%zu of %zu entries compressed), save CPU %.0f ms\n",
                    name, level, level == default_level ? " (default)" : "",
                    100.0 * static_cast<double>(file_size(zpath)) / (mib * 1048576.0), zs.compressed_entries, zs.entries,
                    median(t_cpu) * 1e3);
        line("save (fsync)", median(t_zsave), median(t_raw_w));
        line("restore, page cache hot", median(t_zload), median(t_raw_r));
        if (values == &big && level == default_level) {
          figure("zstd/raw_write_s", median(t_raw_w));
          figure("zstd/save_s", median(t_zsave));
        }
      }
    }
  }

  // ---- 10,000 small tensors ----
  std::vector<ckpt::SaveEntry> small;
  for (int i = 0; i < 10000; ++i) {
    char key[64];
    std::snprintf(key, sizeof key, "block_%02d/unit_%04d/bias/.ATTRIBUTES/VARIABLE_VALUE", i / 1000, i % 1000);
    small.emplace_back(key, normal_tensor(cpu, 16, static_cast<uint64_t>(i) + 1000));
  }
  if (section("small")) {
  std::vector<double> t_ssave, t_sload, t_sopen;
  for (int rep = 0; rep < reps; ++rep) {
    t_ssave.push_back(ckpt_save(dir + "/small", small, false, &ctx.pool()));
    auto t0 = Clock::now();
    ckpt::Reader r = ckpt::Reader::open(dir + "/small");
    t_sopen.push_back(seconds_since(t0));
    t_sload.push_back(ckpt_restore(dir + "/small", cpu, &ctx.pool()));
  }
  check_restored(dir + "/small", small, cpu);
  std::printf("10,000 tensors of 16 float32\n");
  std::printf("  save (fsync)  %8.1f ms  %6.2f us/tensor\n", median(t_ssave) * 1e3, median(t_ssave) * 1e6 / 10000);
  std::printf("  open (index)  %8.1f ms  %6.2f us/tensor\n", median(t_sopen) * 1e3, median(t_sopen) * 1e6 / 10000);
  std::printf("  open + load   %8.1f ms  %6.2f us/tensor\n", median(t_sload) * 1e3, median(t_sload) * 1e6 / 10000);
  std::printf("  file %.2f MiB\n", file_size(dir + "/small") / 1048576.0);
  }
  if (section("object")) {
  // ---- the same through the object graph (tf.train.Checkpoint: walk, snapshot, match, assign) ----
  {
    std::vector<Ref<Variable>> vars;
    auto c = object_checkpoint(ctx, big, 1, &vars);
    std::vector<double> t_osave, t_oload, t_oload_held, t_raw_w2, t_raw_r2, t_fload, cpu_osave, cpu_raw_w2;
    long faults_held = 0, faults_reuse = 0;  // of the last repetition
    for (int rep = 0; rep < reps; ++rep) {
      t_raw_w2.push_back(with_cpu(cpu_raw_w2, [&] { return raw_write(raw_path, big); }));
      t_osave.push_back(with_cpu(cpu_osave, [&] { return object_save(*c, dir + "/object"); }));
      t_raw_r2.push_back(raw_read(dir + "/object", payload_ranges(dir + "/object")));
      t_oload_held.push_back(object_restore_held(*c, dir + "/object", vars));
      faults_held = g_restore_faults;
      t_oload.push_back(object_restore(*c, dir + "/object"));
      faults_reuse = g_restore_faults;
      t_fload.push_back(ckpt_restore(dir + "/object", cpu, &ctx.pool()));  // the format alone, same file
    }
    std::printf("Checkpoint over the object graph: 100 variables, 256 MiB float32\n");
    line("save (fsync)", median(t_osave), median(t_raw_w2));
    pairs(t_osave, t_raw_w2);
    cpu_line(cpu_osave, cpu_raw_w2);
    line("restore, page cache hot", median(t_oload), median(t_raw_r2));
    line("restore, old values held", median(t_oload_held), median(t_raw_r2));
    line("restore, format alone", median(t_fload), median(t_raw_r2));
    figure("object/format_restore_s", median(t_fload));
    figure("object/restore_held_s", median(t_oload_held));
    std::printf("  minor page faults per restore: %ld with reuse, %ld with the old values held\n", faults_reuse,
                faults_held);
    figure("object/raw_write_s", median(t_raw_w2));
    figure("object/raw_read_s", median(t_raw_r2));
    figure("object/save_s", median(t_osave));
    figure("object/restore_s", median(t_oload));
  }
  {
    auto c = object_checkpoint(ctx, small, 10);
    std::vector<double> t_osave, t_oload;
    for (int rep = 0; rep < reps; ++rep) {
      t_osave.push_back(object_save(*c, dir + "/object_small"));
      t_oload.push_back(object_restore(*c, dir + "/object_small"));
    }
    std::printf("Checkpoint over the object graph: 10,000 variables of 16 float32 in 10 groups\n");
    std::printf("  save (fsync)  %8.1f ms  %6.2f us/variable\n", median(t_osave) * 1e3, median(t_osave) * 1e6 / 10000);
    std::printf("  restore       %8.1f ms  %6.2f us/variable\n", median(t_oload) * 1e3, median(t_oload) * 1e6 / 10000);
  }
  }

  for (const char* f : {"/raw.bin", "/ckpt", "/ckpt_zstd", "/small", "/object", "/object_small"})
    ::unlink((dir + f).c_str());
  return 0;
}
