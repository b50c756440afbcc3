// Issue 19: a compiled function recorded into the engine's own command buffer
// (cairn_vulkan_recording_*). The engine (engine_harness.h) records, submits and waits itself; the
// validation layer with synchronisation validation watches (all but the locking case, see there),
// and any error fails the test.
// Checked: results equal the standalone call bit for bit; after the first frame, recording twice
// per frame for 100 frames allocates nothing (the device's counts of Vulkan objects; and, on an
// engine without the validation layer, which allocates as it tracks commands, operator new on the
// recording thread); chunks (a frame budget) give the same bits; a replay loop
// never waits on a thread that holds Cairn's device; bad arguments are refused.
#include "tests/gpu/engine_harness.h"

#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>
#include <utility>

#include "capi/internal/handles.h"
#include "gpu/vulkan/vulkan_device.h"

namespace {
// C++ allocations made on a thread while it counts. Cairn is C++; the driver's own allocations (C,
// malloc), such as lavapipe's storage for recorded commands, are the driver's and not counted.
thread_local bool t_counting = false;
thread_local uint64_t t_allocations = 0;
}  // namespace

void* operator new(size_t n) {
  if (t_counting) ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

using namespace engine_test;

// What the engine's frames run: dense_relu(x, w, b) with x the engine's input range and y its
// output range (both wrapped), compiled once.
struct Scene : EngineScene {
  cairn_function* f = nullptr;

  explicit Scene(bool with_layer = true) : EngineScene(with_layer) {
    ok(cairn_function_create(ctx, "dense_relu", dense_relu, nullptr, nullptr, &f));
  }
  ~Scene() { cairn_function_free(f); }

  // The standalone path: the function called through Cairn's own submissions, on the input now.
  std::vector<char> standalone() {
    cairn_tensor* r = call1(f, {x, w, b});
    std::vector<char> out = bytes_of(r);
    cairn_tensor_free(r);
    return out;
  }
  cairn_vulkan_recording* record() {
    cairn_tensor* in[] = {x, w, b};
    cairn_vulkan_recording* rec = nullptr;
    ok(cairn_vulkan_recording_create(ctx, f, in, 3, &y, 1, &rec));
    REQUIRE(rec != nullptr);
    return rec;
  }
};

TEST_CASE("a compiled function recorded into the engine's command buffer: 100 frames, no allocation after the first") {
  g_engine_errors = 0;
  for (bool with_layer : {true, false}) {
    CAPTURE(with_layer);
    Scene s(with_layer);
    const std::vector<char> expected1 = s.standalone();
    t_allocations = 0;
    t_counting = true;
    cairn_vulkan_recording* rec = s.record();
    t_counting = false;
    CHECK(t_allocations > 0);  // the counter sees Cairn's allocations: capturing makes many
    CHECK(cairn_vulkan_recording_size(rec) >= 4);  // MatMul, Add, Relu, the copy into y
    FrameLoop frame(s.e);
    constexpr int kFrames = 100;
    std::vector<std::vector<char>> outputs;
    cairn::gpu::DeviceStats after_first{};
    uint64_t allocations = 0;
    for (int i = 1; i <= kFrames; ++i) {
      s.set_input(static_cast<float>(i));  // the engine's new input: the host writes before the submit
      frame.begin();
      t_allocations = 0;
      t_counting = i > 1;
      record_all(rec, frame.cb);
      record_all(rec, frame.cb);  // twice per frame: the second replay rewrites the same buffers
      t_counting = false;
      if (i > 1) allocations += t_allocations;
      frame.submit_and_wait();
      outputs.push_back(s.output());
      if (i == 1) after_first = s.stats();
    }
    if (!with_layer) CHECK(allocations == 0);
    CHECK(same_objects(after_first, s.stats()));
    // Each frame's output equals the standalone call on that frame's input, bit for bit.
    CHECK(outputs[0] == expected1);
    for (int i : {2, 50, kFrames}) {
      s.set_input(static_cast<float>(i));
      CAPTURE(i);
      CHECK(outputs[static_cast<size_t>(i - 1)] == s.standalone());
    }
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

TEST_CASE("a frame budget: one chunk of commands per frame gives the whole function's bits") {
  g_engine_errors = 0;
  {
    Scene s;
    s.set_input(3);
    const std::vector<char> expected = s.standalone();
    cairn_vulkan_recording* rec = s.record();
    const size_t size = cairn_vulkan_recording_size(rec);
    FrameLoop frame(s.e);
    for (size_t budget : {size_t{1}, size_t{2}, size_t{3}, size}) {
      CAPTURE(budget);
      s.clear_output();
      size_t first = 0, frames = 0;
      do {
        frame.begin();
        size_t next = 0;
        ok(cairn_vulkan_recording_record(rec, frame.cb, first, budget, &next));
        frame.submit_and_wait();
        first = next;
        ++frames;
      } while (first != 0 && frames <= size);
      CHECK(frames == (size + budget - 1) / budget);
      CHECK(s.output() == expected);
    }
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

TEST_CASE("replays never wait on a thread that holds Cairn's device") {
  g_engine_errors = 0;
  {
    // Without the validation layer: layer 1.3.239 times out in its own state tracking (10 s, then
    // UNASSIGNED-VkFence-state-timeout, "most likely a validation bug") when one thread waits on
    // work gated by a timeline semaphore that another thread signals from the host later
    // (KhronosGroup/Vulkan-ValidationLayers#5928, fixed by #8519). The replays recorded here are
    // the command stream the first test case validates.
    Scene s(/*with_layer=*/false);
    s.set_input(2);
    const std::vector<char> expected = s.standalone();
    cairn_tensor* doubled_before = run1(s.ctx, "Add", {s.w, s.w});
    const std::vector<char> eager_expected = bytes_of(doubled_before);
    cairn_tensor_free(doubled_before);
    cairn_vulkan_recording* rec = s.record();
    VkSemaphore gate = s.e.make_timeline();

    // Another thread records eager work that waits for the engine's gate, then waits for it: it
    // holds the device (inside cairn_context_synchronize) until the gate opens.
    std::atomic<bool> waiting{false}, finished{false};
    std::vector<char> eager_got;
    std::thread eager([&] {
      ok(cairn_vulkan_wait_semaphores(s.ctx, 1, std::vector<uint64_t>{bits(gate)}.data(),
                                      std::vector<uint64_t>{1}.data()));
      cairn_tensor* doubled = run1(s.ctx, "Add", {s.w, s.w});
      waiting = true;
      ok(cairn_context_synchronize(s.ctx));
      eager_got = bytes_of(doubled);
      cairn_tensor_free(doubled);
      finished = true;
    });
    while (!waiting) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // into the wait, holding the device

    // The render thread: 100 frames of two replays each, recorded while the other thread waits.
    FrameLoop frame(s.e);
    frame.begin();
    for (int i = 0; i < 100; ++i) {
      record_all(rec, frame.cb);
      record_all(rec, frame.cb);
    }
    CHECK_FALSE(finished.load());  // the replays did not wait for it
    s.e.host_signal(gate, 1);
    eager.join();
    CHECK(eager_got == eager_expected);
    frame.submit_and_wait();  // the queue is the engine's again once Cairn's thread is done
    CHECK(s.output() == expected);
    cairn_vulkan_recording_free(rec);
    s.e.destroy_semaphore(s.e.device, gate, nullptr);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// dense_relu that also stores its result in the variable `user_data`.
cairn_status* dense_relu_and_store(void* user_data, cairn_context* ctx, cairn_tensor* const* in, size_t n_in,
                                   cairn_tensor** out, size_t n_out) {
  if (cairn_status* st = dense_relu(nullptr, ctx, in, n_in, out, n_out)) return st;
  return cairn_variable_assign(static_cast<cairn_object*>(user_data), out[0]);
}

TEST_CASE("recordings refuse bad arguments, naming the function") {
  g_engine_errors = 0;
  {
    Scene s;
    cairn_vulkan_recording* rec = nullptr;
    cairn_tensor* in[] = {s.x, s.w, s.b};
    // An output of the wrong shape; an output that is an input.
    refused(cairn_vulkan_recording_create(s.ctx, s.f, in, 3, &s.x, 1, &rec), CAIRN_INVALID_ARGUMENT,
            "cairn_vulkan_recording_create: output 0 is input 0");
    cairn_tensor* wrong = host_tensor(s.ctx, std::vector<float>(kRows * kOut), {kOut, kRows});
    refused(cairn_vulkan_recording_create(s.ctx, s.f, in, 3, &wrong, 1, &rec), CAIRN_INVALID_ARGUMENT,
            "cairn_vulkan_recording_create: output 0 is float32[5,4]");
    cairn_tensor_free(wrong);
    // A tensor on another device (a CPU context's).
    cairn_context* cpu = nullptr;
    ok(cairn_context_create(nullptr, &cpu));
    cairn_tensor* on_cpu = host_tensor(cpu, std::vector<float>(kRows * kOut), {kRows, kOut});
    refused(cairn_vulkan_recording_create(s.ctx, s.f, in, 3, &on_cpu, 1, &rec), CAIRN_INVALID_ARGUMENT,
            "cairn_vulkan_recording_create: output 0 is on cpu");
    cairn_tensor_free(on_cpu);
    // A context of Cairn's own device: nothing to record into an engine's command buffer.
    refused(cairn_vulkan_recording_create(cpu, s.f, in, 3, &s.y, 1, &rec), CAIRN_FAILED_PRECONDITION,
            "cairn_vulkan_recording_create: the context is not in external mode");
    cairn_context_free(cpu);
    refused(cairn_vulkan_recording_create(s.ctx, nullptr, in, 3, &s.y, 1, &rec), CAIRN_INVALID_ARGUMENT, "fn");
    // A function with a side effect (a training step's variable write): a replay would repeat it.
    cairn_object* counter = nullptr;
    cairn_tensor* zeros = host_tensor(s.ctx, std::vector<float>(kRows * kOut), {kRows, kOut});
    ok(cairn_variable_create(s.ctx, zeros, nullptr, &counter));
    cairn_tensor_free(zeros);
    cairn_function* writes = nullptr;
    ok(cairn_function_create(s.ctx, "dense_relu_and_store", dense_relu_and_store, counter, nullptr, &writes));
    refused(cairn_vulkan_recording_create(s.ctx, writes, in, 3, &s.y, 1, &rec), CAIRN_FAILED_PRECONDITION,
            "cairn_vulkan_recording_create: function 'dense_relu_and_store' writes a variable");
    CHECK(rec == nullptr);
    cairn_function_free(writes);
    cairn_object_free(counter);
    CHECK(rec == nullptr);

    rec = s.record();
    FrameLoop frame(s.e);
    frame.begin();
    const size_t size = cairn_vulkan_recording_size(rec);
    refused(cairn_vulkan_recording_record(rec, nullptr, 0, 1, nullptr), CAIRN_INVALID_ARGUMENT, "command_buffer");
    refused(cairn_vulkan_recording_record(rec, frame.cb, 0, 0, nullptr), CAIRN_INVALID_ARGUMENT, "max_commands is 0");
    refused(cairn_vulkan_recording_record(rec, frame.cb, size + 1, 1, nullptr), CAIRN_OUT_OF_RANGE,
            "cairn_vulkan_recording_record: first is");
    refused(cairn_vulkan_recording_record(nullptr, frame.cb, 0, 1, nullptr), CAIRN_INVALID_ARGUMENT, "rec");
    CHECK(cairn_vulkan_recording_size(nullptr) == 0);
    frame.submit_and_wait();  // an empty command buffer
    cairn_vulkan_recording_free(rec);
    cairn_vulkan_recording_free(nullptr);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// ---- frame budgets of whole nodes (cairn_vulkan_recording_chunk) ----

struct NodeInfo {
  std::string op;
  size_t first = 0, commands = 0;
  uint64_t gpu_ns = 0;
};

std::vector<NodeInfo> nodes_of(const cairn_vulkan_recording* rec) {
  std::vector<NodeInfo> nodes(cairn_vulkan_recording_node_count(rec));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const char* op = nullptr;
    ok(cairn_vulkan_recording_node(rec, i, &op, &nodes[i].first, &nodes[i].commands, &nodes[i].gpu_ns));
    nodes[i].op = op;
  }
  return nodes;
}

// The names of the graph nodes a profiled standalone call replays ("MatMul_3", ...).
std::vector<std::string> profiled_nodes(Scene& s) {
  ok(cairn_profiler_start(nullptr));
  s.standalone();
  cairn_profile* p = nullptr;
  ok(cairn_profiler_stop(&p));
  size_t n = 0;
  ok(cairn_profile_event_count(p, &n));
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    const char *name = nullptr, *category = nullptr;
    ok(cairn_profile_event(p, i, &name, &category, nullptr, nullptr, nullptr));
    if (std::string(category) == "graph") names.push_back(name);
  }
  cairn_profile_free(p);
  return names;
}

// Records `rec` one chunk per frame under the budget, checking that every chunk starts and ends on
// a node boundary and that chunking allocates nothing; returns the chunks' node ranges.
std::vector<std::pair<size_t, size_t>> run_chunked(Scene& s, FrameLoop& frame, const cairn_vulkan_recording* rec,
                                                   cairn_vulkan_budget kind, uint64_t budget) {
  const std::vector<NodeInfo> nodes = nodes_of(rec);
  const size_t size = cairn_vulkan_recording_size(rec);
  std::vector<std::pair<size_t, size_t>> chunks;  // [first node, end node)
  size_t first = 0, node = 0;
  do {
    size_t commands = 0;
    frame.begin();
    t_allocations = 0;
    t_counting = true;
    const bool chunked = cairn_vulkan_recording_chunk(rec, kind, budget, first, &commands) == nullptr;
    t_counting = false;
    REQUIRE(chunked);
    CHECK(t_allocations == 0);
    REQUIRE(node < nodes.size());
    CHECK(nodes[node].first == first);  // a chunk starts where a node starts ...
    const size_t begin = node;
    size_t covered = 0;
    while (node < nodes.size() && covered < commands) covered += nodes[node++].commands;
    CHECK(covered == commands);  // ... and ends where one ends
    chunks.emplace_back(begin, node);
    size_t next = 0;
    ok(cairn_vulkan_recording_record(rec, frame.cb, first, commands, &next));
    frame.submit_and_wait();
    first = next;
  } while (first != 0 && chunks.size() <= size);
  CHECK(node == nodes.size());  // every command once
  return chunks;
}

TEST_CASE("a recording knows its graph nodes: the function's nodes in order, then the copies out") {
  g_engine_errors = 0;
  {
    Scene s;
    const std::vector<std::string> graph_nodes = profiled_nodes(s);
    REQUIRE(!graph_nodes.empty());
    cairn_vulkan_recording* rec = s.record();
    const std::vector<NodeInfo> nodes = nodes_of(rec);
    REQUIRE(nodes.size() == graph_nodes.size() + 1);
    size_t next = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      CAPTURE(i);
      CHECK(nodes[i].op == (i < graph_nodes.size() ? graph_nodes[i] : "(outside the graph's nodes)"));
      CHECK(nodes[i].first == next);
      CHECK(nodes[i].commands > 0);
      CHECK(nodes[i].gpu_ns == 0);  // not measured
      next += nodes[i].commands;
    }
    CHECK(next == cairn_vulkan_recording_size(rec));
    CHECK(nodes[0].op.rfind("MatMul_", 0) == 0);
    CHECK(cairn_vulkan_recording_node_count(nullptr) == 0);
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

TEST_CASE("frame budgets of nodes and of measured time: whole nodes per chunk, the whole function's bits") {
  g_engine_errors = 0;
  {
    Scene s;
    s.set_input(3);
    const std::vector<char> expected = s.standalone();
    cairn_vulkan_recording* rec = s.record();
    const size_t num_nodes = cairn_vulkan_recording_node_count(rec);
    FrameLoop frame(s.e);
    cairn::gpu::DeviceStats after_first{};
    for (uint64_t budget : {1, 2, 3}) {
      CAPTURE(budget);
      s.clear_output();
      const auto chunks = run_chunked(s, frame, rec, CAIRN_VULKAN_BUDGET_NODES, budget);
      if (budget == 1) after_first = s.stats();
      CHECK(chunks.size() == (num_nodes + budget - 1) / budget);
      for (const auto& [begin, end] : chunks) CHECK(end - begin <= budget);
      CHECK(s.output() == expected);
    }

    ok(cairn_vulkan_recording_measure(rec, 5));
    CHECK(s.output() == expected);  // measuring ran the function
    const std::vector<NodeInfo> nodes = nodes_of(rec);
    uint64_t largest = 0;
    size_t largest_node = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      CAPTURE(nodes[i].op);
      CHECK(nodes[i].gpu_ns > 0);
      if (nodes[i].gpu_ns > largest) largest = nodes[i].gpu_ns, largest_node = i;
    }
    // A budget that fits the largest node: chunks within it. One smaller: that node alone.
    for (uint64_t budget_us : {(largest + 999) / 1000, (largest - 1) / 1000}) {
      CAPTURE(budget_us);
      if (budget_us == 0) continue;  // the largest node under a microsecond: no smaller budget
      s.clear_output();
      const auto chunks = run_chunked(s, frame, rec, CAIRN_VULKAN_BUDGET_MICROSECONDS, budget_us);
      for (const auto& [begin, end] : chunks) {
        uint64_t sum = 0;
        for (size_t i = begin; i < end; ++i) sum += nodes[i].gpu_ns;
        CHECK((sum <= budget_us * 1000 || end - begin == 1));
        if (begin <= largest_node && largest_node < end && largest > budget_us * 1000) CHECK(end - begin == 1);
      }
      CHECK(s.output() == expected);
    }
    CHECK(largest > 1000);  // lavapipe: every node takes microseconds, so the smaller budget ran
    CHECK(same_objects(after_first, s.stats()));  // replays and chunking made nothing
    cairn_vulkan_recording_free(rec);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

// (Relu(x), Neg(x)): two outputs, so the copies out are one node of two commands.
cairn_status* relu_and_neg(void*, cairn_context* ctx, cairn_tensor* const* in, size_t, cairn_tensor** out, size_t) {
  if (cairn_status* st = cairn_op_run(ctx, "Relu", in, 1, nullptr, 0, &out[0], 1)) return st;
  return cairn_op_run(ctx, "Neg", in, 1, nullptr, 0, &out[1], 1);
}

TEST_CASE("frame budgets refuse bad arguments, naming the function") {
  g_engine_errors = 0;
  {
    Scene s;
    cairn_function* two = nullptr;
    ok(cairn_function_create(s.ctx, "relu_and_neg", relu_and_neg, nullptr, nullptr, &two));
    cairn_tensor* outs[] = {host_tensor(s.ctx, std::vector<float>(kRows * kCols), {kRows, kCols}),
                            host_tensor(s.ctx, std::vector<float>(kRows * kCols), {kRows, kCols})};
    cairn_vulkan_recording* rec = nullptr;
    ok(cairn_vulkan_recording_create(s.ctx, two, &s.x, 1, outs, 2, &rec));
    const std::vector<NodeInfo> nodes = nodes_of(rec);
    REQUIRE(!nodes.empty());
    const NodeInfo& out = nodes.back();
    CHECK(out.commands == 2);
    size_t n = 0;
    const char* chunk = "cairn_vulkan_recording_chunk";
    refused(cairn_vulkan_recording_chunk(nullptr, CAIRN_VULKAN_BUDGET_NODES, 1, 0, &n), CAIRN_INVALID_ARGUMENT, "rec");
    refused(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 1, 0, nullptr), CAIRN_INVALID_ARGUMENT,
            "commands");
    refused(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 0, 0, &n), CAIRN_INVALID_ARGUMENT,
            std::string(chunk) + ": the budget is 0");
    refused(cairn_vulkan_recording_chunk(rec, static_cast<cairn_vulkan_budget>(7), 1, 0, &n), CAIRN_INVALID_ARGUMENT,
            std::string(chunk) + ": unknown budget kind 7");
    refused(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_MICROSECONDS, 100, 0, &n),
            CAIRN_FAILED_PRECONDITION, std::string(chunk) + ": a budget of microseconds needs the nodes' GPU times");
    refused(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 1, out.first + 1, &n), CAIRN_INVALID_ARGUMENT,
            std::string(chunk) + ": command " + std::to_string(out.first + 1) + " is inside node (outside the graph's nodes)");
    refused(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, 1, cairn_vulkan_recording_size(rec), &n),
            CAIRN_OUT_OF_RANGE, std::string(chunk) + ": first is");
    refused(cairn_vulkan_recording_node(rec, nodes.size(), nullptr, nullptr, nullptr, nullptr), CAIRN_OUT_OF_RANGE,
            "cairn_vulkan_recording_node: index is");
    refused(cairn_vulkan_recording_node(nullptr, 0, nullptr, nullptr, nullptr, nullptr), CAIRN_INVALID_ARGUMENT, "rec");
    refused(cairn_vulkan_recording_measure(rec, 0), CAIRN_INVALID_ARGUMENT, "cairn_vulkan_recording_measure: runs is 0");
    refused(cairn_vulkan_recording_measure(nullptr, 1), CAIRN_INVALID_ARGUMENT, "rec");
    // The budget covers the whole recording: one chunk, every command.
    ok(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_NODES, SIZE_MAX, 0, &n));
    CHECK(n == cairn_vulkan_recording_size(rec));
    ok(cairn_vulkan_recording_measure(rec, 1));
    ok(cairn_vulkan_recording_chunk(rec, CAIRN_VULKAN_BUDGET_MICROSECONDS, UINT64_MAX, 0, &n));
    CHECK(n == cairn_vulkan_recording_size(rec));
    cairn_vulkan_recording_free(rec);
    for (cairn_tensor* t : outs) cairn_tensor_free(t);
    cairn_function_free(two);
  }
  CHECK(g_engine_errors.load() == 0);
  CHECK(cairn::gpu::validation_error_count() == 0);
}

}  // namespace
