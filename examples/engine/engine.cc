// A headless engine that runs a Cairn model every frame: it renders an animated, noisy scene
// (renderer.h), Cairn denoises the render on the engine's own device and queue, reading the
// engine's buffer in place (filter.h), and the engine composites raw | denoised and writes each
// frame as a PNG. Two ways to put the model in the frame (--sync):
//
// record (default): the frame is ONE engine command buffer, submitted once by the engine:
//   render + copy into the raw buffer -> Cairn's recorded model (cairn_vulkan_recording_record,
//   writing the engine's filtered buffer) -> composite; signals 4f+3, the host waits 4f+3.
// semaphores: per frame f the engine's timeline semaphore orders three submissions:
//   engine: render + copy into the raw buffer ........ signals 4f+1
//   Cairn:  waits 4f+1, runs the model ................ signals 4f+2
//   engine: composite (reads Cairn's result) waits 4f+2, signals 4f+3; the host waits 4f+3
// (--check then renders the frame again without noise, the clean image the model estimates, and
// signals 4f+4.)
//
// usage: engine --weights filter.safetensors [--frames N] [--size S] [--out DIR (created)]
//               [--sync record|semaphores] [--check]
//   --check: compares each frame's model output with the same model on Cairn's CPU device,
//            requires zero validation errors, decodable PNGs and composites that show the
//            model's output; prints one result line naming the sync path.
#include <png.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "filter.h"
#include "filter_model.h"
#include "renderer.h"

namespace {

// The largest |Vulkan - CPU| accepted: the two devices sum each 3x3x16 convolution in a different
// order (float32), three layers deep, on values in [0, 1].
constexpr double kTolerance = 1e-5;

using TensorPtr = std::unique_ptr<cairn_tensor, decltype(&cairn_tensor_free)>;

struct Args {
  std::string weights, out = "frames";
  int frames = 0;      // 0: 8, or 4 with --check
  uint32_t size = 0;   // 0: 256, or 64 with --check
  bool check = false;
  bool record = true;  // --sync record (default) or semaphores
};

const char *sync_name(const Args &args) { return args.record ? "record" : "semaphores"; }

bool parse(int argc, char **argv, Args &args) {
  for (int a = 1; a < argc; ++a) {
    const std::string flag = argv[a];
    const bool has_value = a + 1 < argc;
    if (flag == "--check") args.check = true;
    else if (flag == "--weights" && has_value) args.weights = argv[++a];
    else if (flag == "--out" && has_value) args.out = argv[++a];
    else if (flag == "--frames" && has_value) args.frames = std::atoi(argv[++a]);
    else if (flag == "--size" && has_value) args.size = uint32_t(std::atoi(argv[++a]));
    else if (flag == "--sync" && has_value) {
      const std::string sync = argv[++a];
      if (sync != "record" && sync != "semaphores") return false;
      args.record = sync == "record";
    } else return false;
  }
  if (args.frames == 0) args.frames = args.check ? 4 : 8;
  if (args.size == 0) args.size = args.check ? 64 : 256;
  return !args.weights.empty() && args.frames >= 1 && args.size >= 8 && args.size <= 4096;
}

std::string frame_path(const std::string &dir, int frame) {
  char name[32];
  std::snprintf(name, sizeof name, "/frame_%03d.png", frame);
  return dir + name;
}

void write_png(const std::string &path, const uint8_t *rgba, uint32_t width, uint32_t height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = PNG_FORMAT_RGBA;
  if (!png_image_write_to_file(&image, path.c_str(), 0, rgba, 0, nullptr))
    throw std::runtime_error("cannot write " + path + ": " + image.message);
}

// Decodes a PNG the engine wrote and checks it has the frame's size and pixels.
bool png_matches(const std::string &path, const uint8_t *rgba, uint32_t width, uint32_t height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return false;
  image.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> pixels(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, pixels.data(), 0, nullptr)) return false;
  return image.width == width && image.height == height && std::memcmp(pixels.data(), rgba, pixels.size()) == 0;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double max_difference(const std::vector<float> &a, const std::vector<float> &b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::fabs(a[i] - b[i])));
  return worst;
}

// What the frames gave; validation errors are counted after the engine is gone (its teardown is
// checked too: leaked objects of Cairn's or the engine's).
struct Outcome {
  std::vector<double> frame_ms;   // render to composite done, on the host
  std::vector<double> filter_ms;  // the host's cost of queueing the model: filter_frame's call, or record_frame's
  std::vector<double> gpu_render_ms, gpu_model_ms, gpu_composite_ms;  // Renderer::gpu_times
  double worst = 0;   // max |Vulkan - CPU| over the frames (--check)
  int decodable = 0;  // PNGs read back equal to the frame (--check)
  int composited = 0; // frames whose right half shows the model's output (--check)
  double noisy_error = 0, filtered_error = 0;  // mean squared error against the clean render (--check)
  bool validation = false;
};

// Whether the composited frame's right half is the model's output `filtered` as RGBA8 (within one
// step of rounding): the engine's shader read Cairn's buffer at the right offset.
bool composite_shows(const Renderer &engine, const std::vector<float> &filtered, uint32_t size) {
  const uint8_t *frame = engine.frame_pixels();
  for (uint32_t y = 0; y < size; ++y)
    for (uint32_t x = 0; x < size; ++x)
      for (uint32_t c = 0; c < FILTER_OUT_CHANNELS; ++c) {
        const float v = std::min(1.0f, std::max(0.0f, filtered[(size_t(y) * size + x) * FILTER_OUT_CHANNELS + c]));
        const int shown = frame[(size_t(y) * 2 * size + size + x) * 4 + c];
        if (std::abs(shown - int(std::lround(v * 255))) > 1) return false;
      }
  return true;
}

// Renders `frame` again without noise (signalling `value`) and adds the mean squared errors of the
// noisy render (still in the raw buffer's copy `noisy`) and of the model's output against it.
void add_errors_against_clean(Renderer &engine, uint32_t frame, uint64_t value, const std::vector<float> &filtered,
                              Outcome &outcome) {
  const size_t pixels = filtered.size() / FILTER_OUT_CHANNELS;
  std::vector<float> noisy(engine.raw_pixels(), engine.raw_pixels() + pixels * FILTER_IN_CHANNELS);
  engine.render(frame, 0.0f, value);
  engine.wait(value);
  const float *clean = engine.raw_pixels();
  double noisy_sum = 0, filtered_sum = 0;
  for (size_t p = 0; p < pixels; ++p)
    for (size_t c = 0; c < FILTER_OUT_CHANNELS; ++c) {
      const double want = clean[p * FILTER_IN_CHANNELS + c];
      noisy_sum += std::pow(noisy[p * FILTER_IN_CHANNELS + c] - want, 2);
      filtered_sum += std::pow(filtered[p * FILTER_OUT_CHANNELS + c] - want, 2);
    }
  outcome.noisy_error += noisy_sum / double(pixels * FILTER_OUT_CHANNELS);
  outcome.filtered_error += filtered_sum / double(pixels * FILTER_OUT_CHANNELS);
}

// --sync record: the engine's callback between its copy and its composite, timing Cairn's part
// of the command buffer's recording on the host.
struct RecordedModel {
  const Filter *filter;
  double ms;
  static void record(void *self, VkCommandBuffer cb) {
    auto *model = static_cast<RecordedModel *>(self);
    const auto t0 = std::chrono::steady_clock::now();
    model->filter->record_frame(cb);
    model->ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
};

// --sync semaphores: the engine submits the render (signals 4f+1); Cairn waits for it, submits the
// model and signals 4f+2; the engine's composite waits for that and signals 4f+3. Returns the
// model's result tensor, which the composite reads.
cairn_tensor *filter_with_semaphores(Renderer &engine, Filter &filter, uint32_t frame, uint64_t base,
                                     Outcome &outcome) {
  engine.render(frame, FILTER_NOISE_AMPLITUDE, base + 1);
  const auto t0 = std::chrono::steady_clock::now();
  TensorPtr filtered(filter.filter_frame(engine.timeline(), base + 1, base + 2), cairn_tensor_free);
  outcome.filter_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  uint64_t buffer = 0, offset = 0, bytes = 0;
  cairn_check(cairn_vulkan_tensor_buffer(filtered.get(), &buffer, &offset, &bytes), "cairn_vulkan_tensor_buffer");
  engine.composite(reinterpret_cast<VkBuffer>(buffer), offset, bytes, base + 2, base + 3);
  return filtered.release();
}

Outcome render_frames(const Args &args) {
  const uint32_t size = args.size;
  const size_t outputs = size_t(size) * size * FILTER_OUT_CHANNELS;
  Outcome outcome;
  Renderer engine(size, size);
  outcome.validation = engine.validation();
  Filter filter(args.weights, engine, size, size);
  std::unique_ptr<Filter> reference;
  if (args.check) reference = std::make_unique<Filter>(args.weights);
  std::printf("engine: Cairn %s on %s (external mode on the engine's device, --sync %s), %ux%u, validation %s\n",
              cairn_version(), cairn_context_device(filter.context()), sync_name(args), size, size,
              engine.validation() ? "on (with synchronisation validation)" : "not installed");

  if (args.record) filter.prepare_recording(engine.filtered_buffer(), engine.filtered_bytes());

  std::vector<float> got(outputs), want(outputs);
  for (int f = 0; f < args.frames; ++f) {
    const uint64_t base = 4 * uint64_t(f);
    const auto t0 = std::chrono::steady_clock::now();
    // Freed on every path (an exception too): a tensor left alive keeps Cairn's objects on the
    // engine's device, which the validation layer reports when the engine destroys the device.
    TensorPtr filtered(nullptr, cairn_tensor_free);
    if (args.record) {
      RecordedModel model{&filter, 0};
      engine.render_frame(uint32_t(f), FILTER_NOISE_AMPLITUDE, &RecordedModel::record, &model, base + 3);
      outcome.filter_ms.push_back(model.ms);
    } else {
      filtered.reset(filter_with_semaphores(engine, filter, uint32_t(f), base, outcome));
    }
    engine.wait(base + 3);  // after this the composite's reads of the model's output are done
    outcome.frame_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    Renderer::GpuTimes gpu;
    if (engine.gpu_times(gpu)) {
      outcome.gpu_render_ms.push_back(gpu.render_ms);
      outcome.gpu_model_ms.push_back(gpu.until_composite_ms);
      outcome.gpu_composite_ms.push_back(gpu.composite_ms);
    }

    const std::string path = frame_path(args.out, f);
    write_png(path, engine.frame_pixels(), 2 * size, size);
    if (args.check) {
      if (args.record)
        got.assign(engine.filtered_pixels(), engine.filtered_pixels() + outputs);
      else
        cairn_check(cairn_tensor_read(filtered.get(), got.data(), outputs * sizeof(float)), "cairn_tensor_read");
      reference->run_on_host(engine.raw_pixels(), size, size, want.data());
      outcome.worst = std::max(outcome.worst, max_difference(got, want));
      outcome.decodable += png_matches(path, engine.frame_pixels(), 2 * size, size);
      outcome.composited += composite_shows(engine, got, size);
      add_errors_against_clean(engine, uint32_t(f), base + 4, got, outcome);
    }
  }
  return outcome;
}

// Where a frame's time went, as medians: the host's view and the GPU's timestamps.
std::string timing(const Outcome &o) {
  char text[256];
  std::snprintf(text, sizeof text,
                "frame time median %.1f ms (model queueing call %.2f ms; GPU: render %.1f ms, model %.1f ms, "
                "composite %.1f ms)",
                median_of(o.frame_ms), median_of(o.filter_ms), median_of(o.gpu_render_ms), median_of(o.gpu_model_ms),
                median_of(o.gpu_composite_ms));
  return text;
}

int run(const Args &args) {
  std::error_code error;
  std::filesystem::create_directories(args.out, error);
  if (error) throw std::runtime_error("cannot create " + args.out + ": " + error.message());
  Outcome outcome = render_frames(args);
  const int errors = Renderer::validation_errors();
  if (!args.check) {
    std::printf("engine: %d frames %ux%u written to %s/frame_*.png, sync %s, %s, validation errors %d\n",
                args.frames, 2 * args.size, args.size, args.out.c_str(), sync_name(args), timing(outcome).c_str(),
                errors);
    return errors == 0 ? 0 : 1;
  }
  const bool ok = outcome.worst <= kTolerance && errors == 0 && outcome.decodable == args.frames &&
                  outcome.composited == args.frames;
  std::printf("engine check: %d frames %ux%u %s: sync %s, max |vulkan - cpu| = %.2e (tolerance %.0e), "
              "validation errors %d%s, PNGs decoded %d/%d, composites showing the output %d/%d, MSE vs clean render noisy %.4f -> denoised %.4f, %s\n",
              args.frames, args.size, args.size, ok ? "OK" : "FAILED", sync_name(args), outcome.worst, kTolerance, errors,
              outcome.validation ? "" : " (layer not installed)", outcome.decodable, args.frames, outcome.composited, args.frames,
              outcome.noisy_error / args.frames, outcome.filtered_error / args.frames, timing(outcome).c_str());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
  Args args;
  if (!parse(argc, argv, args)) {
    std::fprintf(stderr, "usage: engine --weights filter.safetensors [--frames N] [--size S] [--out DIR] [--sync record|semaphores] [--check]\n");
    return 2;
  }
  try {
    return run(args);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "engine: %s\n", e.what());
    return 1;
  }
}
