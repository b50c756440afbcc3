// Static inputs (TF's rule for Python scalars): their values are part of the cache key, the host
// function reads them while tracing, and the trace bakes them in.
#include <cstdlib>

#include "runtime/eager/ops.h"
#include "runtime/graph/export.h"
#include "runtime/graph/function.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using graph::Function;
using graph::FunctionOptions;
using Ts = std::vector<Tensor>;

Tensor f32s(std::vector<float> v) { return make<float>(v, Shape{static_cast<int64_t>(v.size())}); }
Tensor i32(int32_t v) { return make<int32_t>({v}, Shape{}); }

std::string tmp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST_CASE("a static input's value keys the cache and is readable while tracing") {
  Context& c = ctx();
  FunctionOptions options;
  options.static_inputs = {1};
  int traces = 0;
  // x * 2^n, with n read on the host: a Python-style loop unrolled at trace time.
  auto f = make_ref<Function>(
      c, "scale_by_power",
      [&](Context& cx, const Ts& in) {
        ++traces;
        const int32_t n = values<int32_t>(in[1])[0];
        Tensor y = in[0];
        for (int32_t k = 0; k < n; ++k) y = op::add(cx, y, y);
        return Ts{y};
      },
      options);
  CHECK(values<float>(f->call({f32s({1, 3}), i32(2)})[0]) == std::vector<float>{4, 12});
  CHECK(values<float>(f->call({f32s({5, 6}), i32(2)})[0]) == std::vector<float>{20, 24});
  CHECK(traces == 1);
  CHECK(values<float>(f->call({f32s({1, 3}), i32(3)})[0]) == std::vector<float>{8, 24});
  CHECK(traces == 2);
  CHECK(values<float>(f->call({f32s({1, 1}), i32(2)})[0]) == std::vector<float>{4, 4});  // cached again
  CHECK(traces == 2);
  CHECK(f->num_traces() == 2);
  // The value is baked in: the graph has no Input node for it.
  std::string dump = f->concretes()[0]->graph().dump();
  CHECK_MESSAGE(dump.find("Input[1]") == std::string::npos, dump);
  CHECK_THROWS_CODE(graph::export_function(*f, tmp_path("static.cairnfn")), Code::Unimplemented,
                    "static inputs");
}

TEST_CASE("static inputs are checked") {
  Context& c = ctx();
  auto body = [](Context&, const Ts& in) { return in; };
  FunctionOptions twice;
  twice.static_inputs = {0, 0};
  CHECK_THROWS_CODE(make_ref<Function>(c, "f", body, twice), Code::InvalidArgument, "listed twice");
  FunctionOptions negative;
  negative.static_inputs = {-1};
  CHECK_THROWS_CODE(make_ref<Function>(c, "f", body, negative), Code::InvalidArgument, "negative");
  FunctionOptions second;
  second.static_inputs = {1};
  auto f = make_ref<Function>(c, "f", body, second);
  CHECK_THROWS_CODE(f->call({i32(1)}), Code::InvalidArgument, "static input 1 is missing");
  std::vector<float> big(graph::kMaxStaticElements + 1, 0.0f);
  CHECK_THROWS_CODE(f->call({i32(1), f32s(big)}), Code::InvalidArgument, "at most 1024 elements");
}

}  // namespace
}  // namespace cairn::test
