// Issue 19: a run of eager ops recorded into the engine's own command buffer
// (cairn_vulkan_recording_capture), and the capture-time refusals of both recording paths (eager
// and compiled). The engine (engine_harness.h) records, submits and waits itself, with the
// validation layer and synchronisation validation on; any error fails the test.
// Checked: 100 frames of replays, each on new input values, equal the same eager ops run
// standalone bit for bit; after the first frame the device makes no Vulkan object or memory and
// submits nothing; the body's freed intermediates keep their memory while the recording lives; a
// host read, a value-dependent shape, a CPU fallback, a semaphore signal, a body's error and NULLs
// are refused, naming the function (and the op), leaving nothing behind, and a normal capture
// works after each.
#include "tests/gpu/engine_harness.h"

namespace {

using namespace engine_test;

// One op's result, or NULL with `*st` set (the body's style: C, statuses).
cairn_tensor* op(cairn_context* ctx, const char* name, std::vector<cairn_tensor*> in, cairn_status** st) {
  cairn_tensor* out = nullptr;
  if (!*st) *st = cairn_op_run(ctx, name, in.data(), in.size(), nullptr, 0, &out, 1);
  return out;
}

// The eager run the engine records: sigmoid(relu(x @ w + b)) * 0.5, with the 0.5 made from host
// data inside the body (a constant of the recording). Frees every intermediate it makes.
cairn_status* eager_mlp(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_status* st = nullptr;
  const float half = 0.5f;
  cairn_tensor* scale = nullptr;
  st = cairn_tensor_create(ctx, CAIRN_FLOAT32, nullptr, 0, &half, sizeof half, &scale);
  cairn_tensor* mm = op(ctx, "MatMul", {in[0], in[1]}, &st);
  cairn_tensor* biased = op(ctx, "Add", {mm, in[2]}, &st);
  cairn_tensor* relu = op(ctx, "Relu", {biased}, &st);
  cairn_tensor* sig = op(ctx, "Sigmoid", {relu}, &st);
  out[0] = op(ctx, "Mul", {sig, scale}, &st);
  for (cairn_tensor* t : {scale, mm, biased, relu, sig}) cairn_tensor_free(t);
  return st;
}

// The engine's frames running eager_mlp(x, w, b) into y.
struct EagerScene : EngineScene {
  explicit EagerScene(bool cpu_fallback = false) : EngineScene(/*with_layer=*/true, cpu_fallback) {}

  // The standalone path: the same eager ops submitted by Cairn, on the input now.
  std::vector<char> standalone() {
    cairn_tensor* in[] = {x, w, b};
    cairn_tensor* r = nullptr;
    ok(eager_mlp(nullptr, ctx, in, 3, &r, 1));
    std::vector<char> out = bytes_of(r);
    cairn_tensor_free(r);
    return out;
  }
  cairn_status* capture(cairn_function_fn body, void* user, cairn_vulkan_recording** rec) {
    cairn_tensor* in[] = {x, w, b};
    return cairn_vulkan_recording_capture(ctx, body, user, in, 3, &y, 1, rec);
  }
  // Replays `rec` in one frame on input `scale`; the output.
  std::vector<char> replay(const cairn_vulkan_recording* rec, FrameLoop& frame, float scale) {
    set_input(scale);  // the engine's new input: the host writes before the submit
    frame.begin();
    record_all(rec, frame.cb);
    frame.submit_and_wait();
    return output();
  }
  // A normal capture works (after a refusal): its replay equals the standalone run.
  void check_capture_works() {
    cairn_vulkan_recording* rec = nullptr;
    ok(capture(eager_mlp, nullptr, &rec));
    REQUIRE(rec != nullptr);
    FrameLoop frame(e);
    const std::vector<char> got = replay(rec, frame, 7);
    CHECK(got == standalone());
    cairn_vulkan_recording_free(rec);
  }
};

TEST_CASE("an eager run recorded into the engine's command buffer: 100 frames equal the eager ops, no new objects") {
  g_engine_errors = 0;
  {
    EagerScene s;
    const std::vector<char> expected1 = s.standalone();
    cairn_vulkan_recording* rec = nullptr;
    ok(s.capture(eager_mlp, nullptr, &rec));
    REQUIRE(rec != nullptr);
    // The constant's upload, MatMul, Add, Relu, Sigmoid, Mul, the copy into y (a mapped constant
    // is written at once and records nothing).
    CHECK(cairn_vulkan_recording_size(rec) >= 6);
    // Later Cairn work, which frees and allocates buffers of the intermediates' sizes, must not
    // get the memory the recording holds.
    s.set_input(-4);
    const std::vector<char> other = s.standalone();
    FrameLoop frame(s.e);
    constexpr int kFrames = 100;
    std::vector<std::vector<char>> outputs;
    cairn::gpu::DeviceStats after_first{};
    for (int i = 1; i <= kFrames; ++i) {
      outputs.push_back(s.replay(rec, frame, static_cast<float>(i)));
      if (i == 1) after_first = s.stats();
    }
    CHECK(same_objects(after_first, s.stats()));
    CHECK(outputs[0] == expected1);
    CHECK(outputs[0] != other);
    for (int i : {2, 3, 50, kFrames}) {
      CAPTURE(i);
      s.set_input(static_cast<float>(i));
      CHECK(outputs[static_cast<size_t>(i - 1)] == s.standalone());
    }
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// A frame budget's unit in an eager recording: each eager op is one node, named by its op.
TEST_CASE("an eager recording's nodes are its ops; one node per frame gives the same bits") {
  g_engine_errors = 0;
  {
    EagerScene s;
    cairn_vulkan_recording* rec = nullptr;
    ok(s.capture(eager_mlp, nullptr, &rec));
    REQUIRE(rec != nullptr);
    std::vector<std::string> ops;
    size_t next = 0;
    for (size_t i = 0; i < cairn_vulkan_recording_node_count(rec); ++i) {
      const char* op = nullptr;
      size_t first = 0, commands = 0;
      ok(cairn_vulkan_recording_node(rec, i, &op, &first, &commands, nullptr));
      CHECK(first == next);  // in order, every command once
      CHECK(commands > 0);
      next = first + commands;
      if (std::string(op) != "(outside the graph's nodes)") ops.push_back(op);
    }
    CHECK(next == cairn_vulkan_recording_size(rec));
    CHECK(ops == std::vector<std::string>{"MatMul", "Add", "Relu", "Sigmoid", "Mul"});

    s.set_input(3);
    const std::vector<char> expected = s.standalone();
    FrameLoop frame(s.e);
    size_t first = 0, frames = 0;
    do {
      size_t commands = 0;
      ok(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 1, first, &commands));
      frame.begin();
      ok(cairn_vulkan_recording_record(rec, frame.cb, first, commands, &first));
      frame.submit_and_wait();
      ++frames;
    } while (first != 0);
    CHECK(frames == cairn_vulkan_recording_node_count(rec));
    CHECK(s.output() == expected);
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// Bodies that need the host in the middle, or fail.
cairn_status* reads_on_host(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_status* st = nullptr;
  out[0] = op(ctx, "Relu", {in[0]}, &st);  // a result whose values exist only after a replay
  float first[kRows * kCols];
  if (!st) st = cairn_tensor_read(out[0], first, sizeof first);
  return st;
}

// A C body that ignores the read's error (frees its status) and returns success.
cairn_status* ignores_refusal(void* user, cairn_context* ctx, cairn_tensor* const* in, size_t n_in, cairn_tensor** out,
                              size_t n_out) {
  cairn_status_free(reads_on_host(user, ctx, in, n_in, out, n_out));
  cairn_tensor_free(out[0]);
  return eager_mlp(user, ctx, in, n_in, out, n_out);
}

// Where's output shape (how many elements are non-zero) depends on the values.
cairn_status* value_shape(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_status* st = nullptr;
  cairn_tensor* where = op(ctx, "Where", {in[0]}, &st);
  cairn_tensor_free(where);
  return st ? st : eager_mlp(nullptr, ctx, in, 3, out, 1);
}

// Neg of a float64 tensor (`user`): no Vulkan kernel for float64, so a CPU fallback when allowed.
cairn_status* falls_back(void* user, cairn_context* ctx, cairn_tensor* const*, size_t, cairn_tensor** out, size_t) {
  return cairn_op_run(ctx, "Neg", static_cast<cairn_tensor**>(user), 1, nullptr, 0, &out[0], 1);
}

cairn_status* fails(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  cairn_status* st = nullptr;
  out[0] = op(ctx, "Relu", {in[0]}, &st);  // set before the error: Cairn frees it
  return cairn_status_create(CAIRN_DATA_LOSS, "the engine's model is gone");
}

// A body that signals the engine's timeline semaphore (`user`): a submission of Cairn's own.
cairn_status* signals(void* user, cairn_context* ctx, cairn_tensor* const* in, size_t n_in, cairn_tensor** out,
                      size_t n_out) {
  if (cairn_status* st = eager_mlp(nullptr, ctx, in, n_in, out, n_out)) return st;
  return cairn_vulkan_signal_semaphore(ctx, *static_cast<uint64_t*>(user), 1);
}

cairn_status* leaves_output_unset(void*, cairn_context*, cairn_tensor* const*, size_t, cairn_tensor**, size_t) {
  return nullptr;
}

// Expects `st` refused with `code`, naming each of `fragments`, no recording, nothing held.
void refused_cleanly(EagerScene& s, cairn_status* st, cairn_vulkan_recording* rec, cairn_code code,
                     std::vector<std::string> fragments, uint64_t live_before) {
  REQUIRE(st != nullptr);
  std::string message = cairn_status_message(st);
  CAPTURE(message);
  CHECK(cairn_status_code(st) == code);
  for (const std::string& f : fragments) CHECK(message.find(f) != std::string::npos);
  cairn_status_free(st);
  CHECK(rec == nullptr);
  CHECK(s.stats().live_bytes == live_before);  // the refused capture's buffers are back
  s.check_capture_works();
}

TEST_CASE("an eager recording refuses host work, a body's error and NULLs; a capture works after each") {
  g_engine_errors = 0;
  {
    EagerScene s(/*cpu_fallback=*/true);
    cairn_vulkan_recording* rec = nullptr;
    const uint64_t live = s.stats().live_bytes;
    refused_cleanly(s, s.capture(reads_on_host, nullptr, &rec), rec, CAIRN_FAILED_PRECONDITION,
                    {"cairn_vulkan_recording_capture", "reading a tensor's values on the host"}, live);
    refused_cleanly(s, s.capture(ignores_refusal, nullptr, &rec), rec, CAIRN_FAILED_PRECONDITION,
                    {"cairn_vulkan_recording_capture", "reading a tensor's values on the host"}, live);
    refused_cleanly(s, s.capture(value_shape, nullptr, &rec), rec, CAIRN_FAILED_PRECONDITION,
                    {"cairn_vulkan_recording_capture", "Where"}, live);

    const double values[] = {1.5, -2.5};
    const int64_t shape[] = {2};
    cairn_tensor* f64 = nullptr;
    ok(cairn_tensor_create(s.ctx, CAIRN_FLOAT64, shape, 1, values, sizeof values, &f64));
    const uint64_t live64 = s.stats().live_bytes;
    uint64_t fallbacks = 0;
    ok(cairn_vulkan_fallback_count(s.ctx, nullptr, &fallbacks));
    refused_cleanly(s, s.capture(falls_back, &f64, &rec), rec, CAIRN_FAILED_PRECONDITION,
                    {"cairn_vulkan_recording_capture", "Neg", "CPU fallback"}, live64);
    uint64_t fallbacks_after = 0;
    ok(cairn_vulkan_fallback_count(s.ctx, nullptr, &fallbacks_after));
    CHECK(fallbacks_after == fallbacks);  // refused before it ran on the CPU
    cairn_tensor_free(f64);

    VkSemaphore timeline = s.e.make_timeline();
    uint64_t timeline_bits = bits(timeline);
    refused_cleanly(s, s.capture(signals, &timeline_bits, &rec), rec, CAIRN_FAILED_PRECONDITION,
                    {"cairn_vulkan_recording_capture", "timeline semaphore signal"}, live);
    CHECK(s.e.counter(timeline) == 0);
    s.e.destroy_semaphore(s.e.device, timeline, nullptr);
    refused_cleanly(s, s.capture(fails, nullptr, &rec), rec, CAIRN_DATA_LOSS,
                    {"cairn_vulkan_recording_capture", "the engine's model is gone"}, live);
    refused_cleanly(s, s.capture(leaves_output_unset, nullptr, &rec), rec, CAIRN_INVALID_ARGUMENT,
                    {"cairn_vulkan_recording_capture: the body left output 0 unset"}, live);

    cairn_tensor* in[] = {s.x, s.w, s.b};
    refused_cleanly(s, cairn_vulkan_recording_capture(nullptr, eager_mlp, nullptr, in, 3, &s.y, 1, &rec), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: ctx is NULL"}, live);
    refused_cleanly(s, cairn_vulkan_recording_capture(s.ctx, nullptr, nullptr, in, 3, &s.y, 1, &rec), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: body is NULL"}, live);
    refused_cleanly(s, cairn_vulkan_recording_capture(s.ctx, eager_mlp, nullptr, nullptr, 3, &s.y, 1, &rec), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: inputs is NULL"}, live);
    refused_cleanly(s, cairn_vulkan_recording_capture(s.ctx, eager_mlp, nullptr, in, 3, nullptr, 1, &rec), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: outputs is NULL"}, live);
    refused_cleanly(s, cairn_vulkan_recording_capture(s.ctx, eager_mlp, nullptr, in, 3, &s.y, 1, nullptr), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: out is NULL"}, live);
    refused_cleanly(s, cairn_vulkan_recording_capture(s.ctx, eager_mlp, nullptr, in, 3, &s.x, 1, &rec), rec,
                    CAIRN_INVALID_ARGUMENT, {"cairn_vulkan_recording_capture: output 0 is input 0"}, live);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// The compiled path's capture-time refusals: functions whose graph needs the host in the middle.
// cond_by_input: a cond on input 3 (a bool on the device), whose value the graph reads on the host
// to pick a branch. (A value-dependent output shape, such as Where's, cannot be traced at all.)
cairn_status* cond_by_input(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  return cairn_cond(ctx, in[3], in, 3, eager_mlp, eager_mlp, nullptr, out, 1);
}

// fallback_neg: eager_mlp and Neg of input 3 (float64: no Vulkan kernel, a CPU fallback).
cairn_status* fallback_neg(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  if (cairn_status* st = eager_mlp(nullptr, ctx, in, 3, out, 1)) return st;
  return cairn_op_run(ctx, "Neg", &in[3], 1, nullptr, 0, &out[1], 1);
}

TEST_CASE("a compiled function that needs the host is refused at capture, naming it; the device stays usable") {
  g_engine_errors = 0;
  {
    EagerScene s(/*cpu_fallback=*/true);
    const double values[] = {1.5, -2.5};
    const int64_t pair[] = {2};
    cairn_tensor *f64 = nullptr, *f64_out = nullptr, *pred = nullptr;
    ok(cairn_tensor_create(s.ctx, CAIRN_FLOAT64, pair, 1, values, sizeof values, &f64));
    ok(cairn_tensor_create(s.ctx, CAIRN_FLOAT64, pair, 1, values, sizeof values, &f64_out));
    const bool yes = true;
    ok(cairn_tensor_create(s.ctx, CAIRN_BOOL, nullptr, 0, &yes, sizeof yes, &pred));
    const uint64_t live = s.stats().live_bytes;
    struct Case {
      const char* name;
      cairn_function_fn body;
      cairn_tensor* input3;
      size_t n_outputs;
      const char* why;
    };
    for (const Case& c : {Case{"cond_by_input", cond_by_input, pred, 1, "on the host"},
                          Case{"fallback_neg", fallback_neg, f64, 2, "CPU fallback"}}) {
      CAPTURE(c.name);
      cairn_function* f = nullptr;
      ok(cairn_function_create(s.ctx, c.name, c.body, nullptr, nullptr, &f));
      cairn_tensor* in[] = {s.x, s.w, s.b, c.input3};
      cairn_tensor* out[] = {s.y, f64_out};
      cairn_vulkan_recording* rec = nullptr;
      cairn_status* st = cairn_vulkan_recording_create(s.ctx, f, in, 4, out, c.n_outputs, &rec);
      REQUIRE(st != nullptr);
      std::string message = cairn_status_message(st);
      CAPTURE(message);
      CHECK(cairn_status_code(st) == CAIRN_FAILED_PRECONDITION);
      CHECK(message.find("cairn_vulkan_recording_create") != std::string::npos);
      CHECK(message.find(c.name) != std::string::npos);
      CHECK(message.find(c.why) != std::string::npos);
      cairn_status_free(st);
      CHECK(rec == nullptr);
      cairn_function_free(f);
      CHECK(s.stats().live_bytes == live);
      s.check_capture_works();
    }
    for (cairn_tensor* t : {f64, f64_out, pred}) cairn_tensor_free(t);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

}  // namespace
