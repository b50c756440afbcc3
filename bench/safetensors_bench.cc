// Loading 256 MiB of float32 from one safetensors file (8 tensors of 32 MiB) with Cairn, against
// raw mmap of the same file. bench/safetensors_bench.sh runs it beside the Python package and prints
// the ratios (issue 15 target: Cairn >= 1x the package).
//
//   bazel run -c opt //bench:safetensors_bench -- [FILE] [MiB]   (FILE defaults to /tmp/cairn-st-bench.safetensors)
//
// The file is written once by Cairn's writer (the same bytes the package writes) and read once
// before timing, so every case reads from the page cache. Cases, best of 9:
//   load        : open + every tensor ready to use (Cairn: File::open + load; raw: open + mmap)
//   load+touch  : the same, then one float read per 4 KiB page of every tensor (the page faults
//                 a zero-copy load defers)
//   load+sum    : the same, then every float summed (a pass over all the data)
// Cairn runs zero-copy (the default) and with zero_copy = false (a private copy, as the package
// makes). "cairn_module" loads the file by name into a module's variables (layers/<k>/weight,
// separator "."), as cairn_object_load_weights does: what an embedder calls. Prints "@ key
// seconds" lines for the script; it is not a test.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/checkpoint/module_weights.h"
#include "runtime/core/allocator.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/eager/context.h"
#include "runtime/io/safetensors.h"
#include "runtime/track/containers.h"
#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"
#include "runtime/track/walk.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kTensors = 8;
constexpr size_t kPage = 4096;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class F>
double best_of(int runs, F&& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) best = std::min(best, f());
  return best;
}

// What a consumer does with the data after loading it.
enum class Use { None, Touch, Sum };

volatile double g_sink;  // keeps the reads from being optimised away

void use(const float* p, size_t n, Use how) {
  if (how == Use::Touch) {
    double s = 0;
    for (size_t i = 0; i < n; i += kPage / sizeof(float)) s += p[i];
    g_sink = g_sink + s;
  } else if (how == Use::Sum) {
    float acc[8] = {};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (int k = 0; k < 8; ++k) acc[k] += p[i + k];
    double s = 0;
    for (; i < n; ++i) s += p[i];
    for (float a : acc) s += a;
    g_sink = g_sink + s;
  }
}

double raw_mmap(const std::string& path, Use how) {
  auto t0 = Clock::now();
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) std::exit(1);
  off_t size = ::lseek(fd, 0, SEEK_END);
  void* base = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) std::exit(1);
  // The header is a few hundred bytes; the data after it is all float32, as in the tensors.
  uint64_t n;
  std::memcpy(&n, base, 8);
  const auto* data = reinterpret_cast<const float*>(static_cast<const char*>(base) + 8 + n);
  use(data, (static_cast<size_t>(size) - 8 - n) / sizeof(float), how);
  ::munmap(base, static_cast<size_t>(size));
  return seconds_since(t0);
}

double cairn_load(const std::string& path, Device& cpu, bool zero_copy, Use how) {
  auto t0 = Clock::now();
  safetensors::ReadOptions o;
  o.zero_copy = zero_copy;
  auto file = safetensors::File::open(path, o);
  std::vector<Tensor> tensors;
  for (const safetensors::TensorEntry& e : file->tensors()) tensors.push_back(file->load(e.name, cpu));
  for (const Tensor& t : tensors) use(t.data<float>(), static_cast<size_t>(t.num_elements()), how);
  tensors.clear();
  file.reset();
  return seconds_since(t0);
}

// A module whose variables layers/<k>/weight have the file's shapes (zeros until loaded).
Ref<Module> module_like(Context& ctx, const safetensors::File& file) {
  Ref<Module> root = Module::create(ctx, "model");
  Ref<List> layers = List::create(ctx);
  root->set("layers", layers);
  for (const safetensors::TensorEntry& e : file.tensors()) {
    Ref<Module> layer = Module::create(ctx, "layer");
    layer->set("weight", Variable::create(ctx, Tensor::allocate(ctx.cpu(), DType::Float32, e.shape)));
    layers->append(layer);
  }
  return root;
}

double cairn_module_load(const std::string& path, Module& model, Use how) {
  auto t0 = Clock::now();
  ckpt::ModuleWeightsOptions o;
  o.separator = ".";
  ckpt::load_module_weights(model, path, o);
  for (PathedObject& p : breadth_first(model))
    if (auto* v = dynamic_cast<Variable*>(p.object.get())) {
      Tensor t = v->read();
      use(t.data<float>(), static_cast<size_t>(t.num_elements()), how);
    }
  return seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "/tmp/cairn-st-bench.safetensors";
  const size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  Ref<CpuDevice> cpu = make_ref<CpuDevice>(default_allocator());

  {
    std::vector<std::pair<std::string, Tensor>> tensors;
    const int64_t per = static_cast<int64_t>(mib << 20) / kTensors / 4;
    for (int k = 0; k < kTensors; ++k) {
      Tensor t = Tensor::allocate(*cpu, DType::Float32, Shape{per / 1024, 1024});
      float* p = t.mutable_data<float>();
      for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = static_cast<float>((i * 7 + k) % 1000) * 0.001f;
      tensors.emplace_back("layers." + std::to_string(k) + ".weight", std::move(t));
    }
    safetensors::write_file(path, tensors);
  }
  raw_mmap(path, Use::Sum);  // into the page cache
  Ref<Context> ctx = make_ref<Context>(ContextOptions{});
  Ref<Module> model = module_like(*ctx, *safetensors::File::open(path));

  std::printf("# %zu MiB of float32 in %d tensors, %s, best of 9, page cache warm\n", mib, kTensors, path.c_str());
  const struct {
    const char* name;
    Use how;
  } uses[] = {{"load", Use::None}, {"load+touch", Use::Touch}, {"load+sum", Use::Sum}};
  for (const auto& u : uses) {
    const double raw = best_of(9, [&] { return raw_mmap(path, u.how); });
    const double zc = best_of(9, [&] { return cairn_load(path, *cpu, true, u.how); });
    const double copy = best_of(9, [&] { return cairn_load(path, *cpu, false, u.how); });
    const double module = best_of(9, [&] { return cairn_module_load(path, *model, u.how); });
    std::printf("@ raw_mmap/%s %.6f\n@ cairn/%s %.6f\n@ cairn_copy/%s %.6f\n@ cairn_module/%s %.6f\n", u.name, raw,
                u.name, zc, u.name, copy, u.name, module);
  }
  return 0;
}
