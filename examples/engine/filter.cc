// The denoiser in Cairn (see filter.h).
#include "filter.h"

#include <cstdint>
#include <stdexcept>

#include "filter_model.h"
#include "renderer.h"

void cairn_check(cairn_status *s, const std::string &what) {
  if (!s) return;
  std::string message = what + ": " + cairn_status_message(s);
  cairn_status_free(s);
  throw std::runtime_error(message);
}

namespace {

// The compiled function's body: the model's forward pass (traced once, replayed every frame).
cairn_status *forward(void *model, cairn_context *, cairn_tensor *const *in, size_t, cairn_tensor **out, size_t) {
  return cairn_layer_call(static_cast<cairn_object *>(model), in[0], CAIRN_FALSE, &out[0]);
}

}  // namespace

Filter::Filter(const std::string &weights) {
  try {
    cairn_check(cairn_context_create(nullptr, &ctx_), "cairn_context_create");
    load_model(weights);
  } catch (...) {
    release();
    throw;
  }
}

Filter::Filter(const std::string &weights, const Renderer &engine, uint32_t width, uint32_t height)
    : device_(engine.device()), width_(width), height_(height) {
  cairn_vulkan_options vo = CAIRN_VULKAN_OPTIONS_INIT;
  vo.instance = engine.instance();
  vo.physical_device = engine.physical_device();
  vo.device = engine.device();
  vo.queue_family = engine.queue_family();
  vo.queue = engine.queue();
  const int64_t shape[4] = {1, height, width, FILTER_IN_CHANNELS};
  try {
    cairn_check(cairn_context_create_vulkan(nullptr, &vo, &ctx_), "cairn_context_create_vulkan");
    cairn_check(cairn_vulkan_use_engine_features(ctx_, engine.features()), "cairn_vulkan_use_engine_features");
    load_model(weights);
    cairn_check(cairn_vulkan_tensor_wrap(ctx_, engine.device(), reinterpret_cast<uint64_t>(engine.raw_buffer()), 0,
                                         engine.raw_bytes(), CAIRN_FLOAT32, shape, 4, &input_),
                "cairn_vulkan_tensor_wrap");
  } catch (...) {
    release();  // Cairn's objects on the engine's device go before the engine destroys it
    throw;
  }
}

Filter::~Filter() { release(); }

// Frees what was made, waiting for Cairn's queued work first.
// The recording goes first: the engine waited for the last frame that recorded it.
void Filter::release() {
  cairn_vulkan_recording_free(recording_);
  cairn_tensor_free(output_);
  cairn_tensor_free(input_);
  cairn_function_free(function_);
  cairn_object_free(model_);
  if (ctx_) cairn_status_free(cairn_context_synchronize(ctx_));
  cairn_context_free(ctx_);
  recording_ = nullptr;
  output_ = nullptr;
  input_ = nullptr;
  function_ = nullptr;
  model_ = nullptr;
  ctx_ = nullptr;
}

void Filter::load_model(const std::string &weights) {
  cairn_check(filter_model_create(ctx_, &model_), "filter_model_create");
  size_t loaded = 0;
  cairn_check(cairn_object_load_weights(model_, weights.c_str(), nullptr, &loaded),
              "cairn_object_load_weights(" + weights + ")");
  cairn_check(cairn_function_create(ctx_, "denoise", forward, model_, nullptr, &function_), "cairn_function_create");
}

cairn_tensor *Filter::call(cairn_tensor *x) {
  cairn_tensor *y = nullptr;
  cairn_check(cairn_function_call(function_, &x, 1, &y, 1), "cairn_function_call(denoise)");
  return y;
}

cairn_tensor *Filter::filter_frame(VkSemaphore timeline, uint64_t ready, uint64_t done) {
  const uint64_t semaphore = reinterpret_cast<uint64_t>(timeline);
  cairn_check(cairn_vulkan_wait_semaphores(ctx_, 1, &semaphore, &ready), "cairn_vulkan_wait_semaphores");
  cairn_tensor *y = call(input_);
  cairn_status *s = cairn_vulkan_signal_semaphore(ctx_, semaphore, done);
  if (s) cairn_tensor_free(y);
  cairn_check(s, "cairn_vulkan_signal_semaphore");
  return y;
}

void Filter::prepare_recording(VkBuffer output, uint64_t bytes) {
  if (recording_) throw std::runtime_error("Filter::prepare_recording: already prepared");
  const int64_t shape[4] = {1, height_, width_, FILTER_OUT_CHANNELS};
  cairn_check(cairn_vulkan_tensor_wrap(ctx_, device_, reinterpret_cast<uint64_t>(output), 0, bytes, CAIRN_FLOAT32,
                                       shape, 4, &output_),
              "cairn_vulkan_tensor_wrap(filtered)");
  cairn_check(cairn_vulkan_recording_create(ctx_, function_, &input_, 1, &output_, 1, &recording_),
              "cairn_vulkan_recording_create(denoise)");
}

void Filter::record_frame(VkCommandBuffer cb) const {
  if (!recording_) throw std::runtime_error("Filter::record_frame: prepare_recording was not called");
  cairn_check(cairn_vulkan_recording_record(recording_, cb, 0, SIZE_MAX, nullptr), "cairn_vulkan_recording_record");
}

void Filter::run_on_host(const float *input, uint32_t width, uint32_t height, float *output) {
  const int64_t shape[4] = {1, height, width, FILTER_IN_CHANNELS};
  const size_t pixels = size_t(width) * height;
  cairn_tensor *x = nullptr;
  cairn_check(cairn_tensor_create(ctx_, CAIRN_FLOAT32, shape, 4, input, pixels * FILTER_IN_CHANNELS * sizeof(float), &x),
              "cairn_tensor_create");
  cairn_tensor *y = nullptr;
  try {
    y = call(x);
  } catch (...) {
    cairn_tensor_free(x);
    throw;
  }
  cairn_status *s = cairn_tensor_read(y, output, pixels * FILTER_OUT_CHANNELS * sizeof(float));
  cairn_tensor_free(x);
  cairn_tensor_free(y);
  cairn_check(s, "cairn_tensor_read");
}
