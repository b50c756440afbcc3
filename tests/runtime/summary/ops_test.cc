// The summary ops: eager calls write at once; inside a traced function they are stateful graph
// nodes that survive the graph passes and write on every replay, with the step read at run time.
#include "runtime/eager/ops.h"
#include "runtime/graph/function.h"
#include "runtime/summary/writer.h"
#include "runtime/track/variable.h"
#include "tests/runtime/summary/event_reader.h"
#include "tests/util/test_util.h"

#include <filesystem>

namespace cairn::test {
namespace {

using namespace cairn::summary;
namespace fs = std::filesystem;

std::vector<DecodedEvent> summaries(SummaryWriter& w) {
  w.flush();
  std::vector<DecodedEvent> events = read_events(w.path());
  events.erase(events.begin());  // file_version
  return events;
}

TEST_CASE("an eager summary op writes at once; writer 0 is the default writer when the op runs") {
  auto w = SummaryWriter::create(fresh_dir("ops_eager"));
  run_op(ctx(), "WriteScalarSummary", {scalar<double>(0.5)},
         {attr_int("writer", w->id()), attr_string("tag", "loss"), attr_int("step", 3)});
  // No default writer: nothing is written and nothing fails (tf.summary without a writer).
  set_default_writer(nullptr);
  run_op(ctx(), "WriteScalarSummary", {scalar<float>(1)}, {attr_string("tag", "loss"), attr_int("step", 4)});
  set_default_writer(w);
  run_op(ctx(), "WriteHistogramSummary", {make<float>({1, 2, 3}, Shape{3})},
         {attr_string("tag", "h"), attr_int("step", 5), attr_int("buckets", 2)});
  set_default_writer(nullptr);
  std::vector<DecodedEvent> e = summaries(*w);
  REQUIRE(e.size() == 2);
  CHECK(e[0].step == 3);
  CHECK(scalar_of(e[0].values.at(0)) == 0.5f);
  CHECK(e[1].step == 5);
  CHECK(e[1].values.at(0).plugin_name == "histograms");
  CHECK(e[1].values.at(0).shape == std::vector<int64_t>{2, 3});
  CHECK_THROWS_CODE(run_op(ctx(), "WriteScalarSummary", {make<float>({1, 2}, Shape{2})},
                           {attr_int("writer", w->id()), attr_string("tag", "loss"), attr_int("step", 1)}),
                    Code::InvalidArgument, "scalar 'loss'");
  // Op statuses name the op (the op fuzzer found these did not); the value check's own words follow.
  CHECK_THROWS_CODE(run_op(ctx(), "WriteScalarSummary", {make<float>({1, 2}, Shape{2})},
                           {attr_string("tag", "loss"), attr_int("step", 1)}),
                    Code::InvalidArgument, "WriteScalarSummary: scalar 'loss': expected a rank-0 tensor");
  set_default_writer(w);
  CHECK_THROWS_CODE(run_op(ctx(), "WriteHistogramSummary", {make<float>({1, NAN}, Shape{2})},
                           {attr_string("tag", "h"), attr_int("step", 1)}),
                    Code::InvalidArgument, "WriteHistogramSummary: histogram 'h': the data holds a NaN");
  set_default_writer(nullptr);
}

TEST_CASE("a traced training step writes its loss on every replay, at the step set before each call") {
  Context& c = ctx();
  auto w = SummaryWriter::create(fresh_dir("ops_traced"));
  const int64_t id = w->id();
  Ref<Variable> v = Variable::create(c, make<float>({0, 0}, Shape{2}), {.name = "v"});
  int traces = 0;
  auto step = make_ref<graph::Function>(c, "train_step", [&](Context& cx, const std::vector<Tensor>& in) {
    ++traces;
    Tensor diff = op::sub(cx, in[0], v->read());
    Tensor loss = op::all_mean(cx, op::square(cx, diff));
    run_op(cx, "WriteScalarSummary", {loss}, {attr_int("writer", id), attr_string("tag", "loss")});
    run_op(cx, "WriteHistogramSummary", {v->read()}, {attr_int("writer", id), attr_string("tag", "v")});
    // A summary of a value known at trace time: constant folding must not run it once and drop it.
    run_op(cx, "WriteScalarSummary", {op::add(cx, scalar<float>(1), scalar<float>(2))},
           {attr_int("writer", id), attr_string("tag", "three"), attr_int("step", 99)});
    v->assign_add(op::mul(cx, diff, scalar<float>(0.5f)));
    return std::vector<Tensor>{loss};
  });
  Tensor target = make<float>({2, 4}, Shape{2});
  std::vector<float> losses;
  const int n = 6;
  for (int i = 0; i < n; ++i) {
    set_default_step(100 + i);
    losses.push_back(values<float>(step->call({target})[0])[0]);
  }
  set_default_step(kDefaultStep);
  CHECK(traces == 1);
  CHECK(step->concretes()[0]->graph().dump().find("WriteScalarSummary") != std::string::npos);
  std::vector<DecodedEvent> e = summaries(*w);
  REQUIRE(e.size() == 3 * n);
  for (int i = 0; i < n; ++i) {
    const DecodedEvent& loss = e[3 * i];
    CHECK(loss.values.at(0).tag == "loss");
    CHECK(loss.step == 100 + i);
    CHECK(scalar_of(loss.values[0]) == losses[i]);
    CHECK(e[3 * i + 1].values.at(0).tag == "v");
    CHECK(e[3 * i + 1].step == 100 + i);
    CHECK(e[3 * i + 2].values.at(0).tag == "three");
    CHECK(e[3 * i + 2].step == 99);
    CHECK(scalar_of(e[3 * i + 2].values[0]) == 3.0f);
  }
  CHECK(losses.front() == 10.0f);
  CHECK(losses.back() < losses.front());

  // A replay after the writer is gone reports it, naming the op and the tag.
  w.reset();
  CHECK_THROWS_CODE(step->call({target}), Code::FailedPrecondition, "WriteScalarSummary 'loss': summary writer");
}

TEST_CASE("a traced summary without a step and without a default step fails at replay, naming the tag") {
  Context& c = ctx();
  auto w = SummaryWriter::create(fresh_dir("ops_nostep"));
  const int64_t id = w->id();
  auto f = make_ref<graph::Function>(c, "f", [&](Context& cx, const std::vector<Tensor>& in) {
    run_op(cx, "WriteScalarSummary", {in[0]}, {attr_int("writer", id), attr_string("tag", "acc")});
    return std::vector<Tensor>{op::identity(cx, in[0])};
  });
  set_default_step(kDefaultStep);
  CHECK_THROWS_CODE(f->call({scalar<float>(1)}), Code::InvalidArgument, "scalar 'acc': no step given");
}

}  // namespace
}  // namespace cairn::test
