// Training throughput of the digits MLP (64 -> 64 relu -> 10, Adam, batch 32): examples per second
// over whole epochs, and where a step's time goes (forward + loss under the tape, the gradient,
// the optimizer update). Synthetic data of the digits' shape, so it needs no files.
//
//   bazel run -c opt //bench:train_bench                 # CPU
//   bazel run -c opt //bench:train_bench -- vulkan       # Vulkan (lavapipe here), CPU fallback on
//   bazel run -c opt //bench:train_bench -- cpu unfused  # Adam as elementwise ops, not ApplyAdam
// On Vulkan it also prints the dispatches a step records.
#include <chrono>
#include <cstdio>
#include <string>

#include "gpu/vulkan/vulkan_device.h"
#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "runtime/nn/layer.h"
#include "runtime/nn/losses.h"
#include "runtime/optim/optimizer.h"

using namespace cairn;
using Clock = std::chrono::steady_clock;

namespace {
constexpr int64_t kSamples = 1438, kFeatures = 64, kClasses = 10, kBatch = 32, kEpochs = 5;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

Tensor host_data(Context& ctx, Device& device, bool labels) {
  Tensor t = labels ? Tensor::allocate(ctx.cpu(), DType::Int32, Shape{kSamples})
                    : Tensor::allocate(ctx.cpu(), DType::Float32, Shape{kSamples, kFeatures});
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (labels) t.mutable_data<int32_t>()[i] = static_cast<int32_t>((i * 7) % kClasses);
    else t.mutable_data<float>()[i] = static_cast<float>((i * 37) % 17) / 16.0f;
  }
  return tensor_on_device(t, device);
}

struct Timing {
  double forward = 0, gradient = 0, apply = 0;
  int64_t steps = 0;
};

void train_epoch(Context& ctx, nn::Layer& model, optim::Optimizer& opt, const Tensor& x, const Tensor& y, Timing& t) {
  std::vector<Ref<Variable>> weights = model.trainable_weights();
  for (int64_t b = 0; b < kSamples; b += kBatch) {
    int64_t n = std::min(kBatch, kSamples - b);
    std::vector<int64_t> begin{b, 0}, size{n, kFeatures}, begin1{b}, size1{n};
    Tensor xb = run_op(ctx, "Slice", {x}, {attr_ints("begin", begin), attr_ints("size", size)})[0];
    Tensor yb = run_op(ctx, "Slice", {y}, {attr_ints("begin", begin1), attr_ints("size", size1)})[0];
    auto t0 = Clock::now();
    GradientTape tape(ctx);
    Tensor loss = nn::sparse_categorical_crossentropy(ctx, yb, model(xb, true), true);
    auto t1 = Clock::now();
    std::vector<Tensor> grads = tape.gradient(loss, weights);
    auto t2 = Clock::now();
    opt.apply_gradients(grads, weights);
    t.forward += std::chrono::duration<double>(t1 - t0).count();
    t.gradient += std::chrono::duration<double>(t2 - t1).count();
    t.apply += seconds_since(t2);
    ++t.steps;
  }
  opt.iterations().read();  // waits for nothing on the CPU; a device read would flush the batch
}
}  // namespace

int main(int argc, char** argv) {
  std::string device = argc > 1 ? argv[1] : "cpu";
  ContextOptions o;
  o.device = device;
  o.seed = 1;
  o.gpu.cpu_fallback = true;
  Ref<Context> ctx = make_ref<Context>(o);
  Device& dev = ctx->default_device();
  Tensor x = host_data(*ctx, dev, false), y = host_data(*ctx, dev, true);

  Ref<nn::Sequential> model = nn::Sequential::create(*ctx, "mlp");
  model->add(nn::dense(*ctx, {.units = 64, .activation = nn::Activation::Relu}));
  model->add(nn::dense(*ctx, {.units = kClasses}));
  optim::OptimizerOptions oo;
  oo.kind = optim::Kind::Adam;
  oo.learning_rate = 0.005;
  Ref<optim::Optimizer> opt = optim::Optimizer::create(*ctx, oo);
  const bool unfused = argc > 2 && std::string(argv[2]) == "unfused";
  opt->set_fused(!unfused);

  std::vector<int64_t> first{0, 0}, one_row{1, kFeatures};
  (*model)(run_op(*ctx, "Slice", {x}, {attr_ints("begin", first), attr_ints("size", one_row)})[0]);  // builds
  Timing warm;
  train_epoch(*ctx, *model, *opt, x, y, warm);  // creates the slots, warms caches
  auto* vk = dynamic_cast<gpu::VulkanDevice*>(&dev);
  const uint64_t dispatches = vk ? vk->stats().dispatches : 0;
  Timing t;
  auto start = Clock::now();
  for (int e = 0; e < kEpochs; ++e) train_epoch(*ctx, *model, *opt, x, y, t);
  dev.synchronize();
  double total = seconds_since(start);
  std::printf("digits MLP 64-64-10, Adam%s, batch %lld, on %s: %.0f examples/s (%d epochs of %lld in %.3f s)\n",
              unfused ? " (unfused)" : "", static_cast<long long>(kBatch), dev.name().c_str(), kEpochs * kSamples / total, static_cast<int>(kEpochs),
              static_cast<long long>(kSamples), total);
  double per = 1e6 / static_cast<double>(t.steps);
  std::printf("per step: %.1f us = forward+loss %.1f + gradient %.1f + apply %.1f (+ batching)\n", total * per,
              t.forward * per, t.gradient * per, t.apply * per);
  if (vk)
    std::printf("Vulkan dispatches per step: %.1f (optimizer %s)\n",
                static_cast<double>(vk->stats().dispatches - dispatches) / static_cast<double>(t.steps),
                unfused ? "unfused" : "fused");
  return 0;
}
