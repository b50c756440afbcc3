// MpiCollective under mpirun (tests/mpi/run.sh starts it on 2 and 4 ranks): all-reduce of every
// reducible dtype with every reduction, the same bits on every rank; broadcast, all-gather,
// barrier; the CollectiveAllReduce op over an MPI group; mismatched calls fail alike on every rank
// and leave the communicator usable; a rank that never arrives gives DeadlineExceeded within the
// timeout and breaks only its communicator. Every rank runs the cases in file order. The last case
// releases the world communicator, so Cairn's MPI_Finalize runs before exit.
//
// "a missing plugin" runs alone, without mpirun, with CAIRN_MPI_PLUGIN naming a file that is not
// there (run.sh).
#include <chrono>
#include <cmath>
#include <cstring>

#include "runtime/core/half.h"
#include "runtime/distribute/mpi_collective.h"
#include "runtime/eager/dispatch.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using distribute::MpiCollective;
using distribute::MpiOptions;
using distribute::Reduction;

Ref<MpiCollective>& world() {
  static Ref<MpiCollective> w;
  if (!w) {
    MpiOptions o;
    o.timeout = std::chrono::milliseconds(20000);
    w = MpiCollective::init_world({&ctx().cpu()}, o);
  }
  return w;
}

// `values` stored as `dtype` (host bytes).
std::vector<unsigned char> encode(DType dtype, const std::vector<double>& values) {
  std::vector<unsigned char> out(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    void* p = out.data() + i * dtype_size(dtype);
    const double v = values[i];
    switch (dtype) {
      case DType::Float16: *static_cast<float16*>(p) = float16(static_cast<float>(v)); break;
      case DType::BFloat16: *static_cast<bfloat16*>(p) = bfloat16(static_cast<float>(v)); break;
      case DType::Float32: *static_cast<float*>(p) = static_cast<float>(v); break;
      case DType::Float64: *static_cast<double*>(p) = v; break;
      case DType::Int32: *static_cast<int32_t*>(p) = static_cast<int32_t>(v); break;
      case DType::Int64: *static_cast<int64_t*>(p) = static_cast<int64_t>(v); break;
      default: FAIL("unexpected dtype");
    }
  }
  return out;
}

// What rank r contributes at element i: small integers, exact in every dtype.
double contribution(int r, int64_t i) { return (r + 1) + static_cast<double>(i % 7) - 3; }

// The expected reduction at element i across n ranks; mean as the implementation rounds it
// (integers truncate; 16-bit floats divide in float32).
double expected(Reduction red, int n, int64_t i, bool integer) {
  double sum = 0, lo = contribution(0, i), hi = lo;
  for (int r = 0; r < n; ++r) {
    sum += contribution(r, i);
    lo = std::min(lo, contribution(r, i));
    hi = std::max(hi, contribution(r, i));
  }
  switch (red) {
    case Reduction::Sum: return sum;
    case Reduction::Min: return lo;
    case Reduction::Max: return hi;
    case Reduction::Mean: return integer ? std::trunc(sum / n) : sum / n;
  }
  return 0;
}

// Whether every rank holds the same bytes as this one.
bool same_on_every_rank(const std::vector<unsigned char>& mine) {
  MpiCollective& w = *world();
  std::vector<unsigned char> all(mine.size() * static_cast<size_t>(w.size()));
  w.all_gather(w.rank(), DType::UInt8, static_cast<int64_t>(mine.size()), mine.data(), all.data());
  for (int r = 0; r < w.size(); ++r)
    if (std::memcmp(all.data() + static_cast<size_t>(r) * mine.size(), mine.data(), mine.size()) != 0) return false;
  return true;
}

TEST_CASE("all_reduce: every reducible dtype and reduction, the same bits on every rank") {
  MpiCollective& w = *world();
  const int n = w.size();
  const int64_t count = 1000;
  for (DType dtype : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64, DType::Int32, DType::Int64}) {
    for (Reduction red : {Reduction::Sum, Reduction::Mean, Reduction::Min, Reduction::Max}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(distribute::reduction_name(red));
      std::vector<double> in(count), want(count);
      const bool integer = dtype == DType::Int32 || dtype == DType::Int64;
      for (int64_t i = 0; i < count; ++i) {
        in[static_cast<size_t>(i)] = contribution(w.rank(), i);
        want[static_cast<size_t>(i)] = expected(red, n, i, integer);
      }
      const std::vector<unsigned char> input = encode(dtype, in);
      std::vector<unsigned char> output(input.size());
      w.all_reduce(w.rank(), dtype, count, input.data(), output.data(), red);
      CHECK(output == encode(dtype, want));
      CHECK(same_on_every_rank(output));
    }
  }
}

TEST_CASE("all_reduce in place, and of values whose sum rounds: identical bits on every rank") {
  MpiCollective& w = *world();
  std::vector<float> v(4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.1f * static_cast<float>(w.rank() + 1) * static_cast<float>(i % 13);
  w.all_reduce(w.rank(), DType::Float32, static_cast<int64_t>(v.size()), v.data(), v.data(), Reduction::Sum);
  std::vector<unsigned char> bytes(v.size() * sizeof(float));
  std::memcpy(bytes.data(), v.data(), bytes.size());
  CHECK(same_on_every_rank(bytes));
  float want = 0;
  for (int r = 0; r < w.size(); ++r) want += 0.1f * static_cast<float>(r + 1) * 5;
  CHECK(v[5] == doctest::Approx(want));
}

TEST_CASE("broadcast from every root, all_gather and barrier") {
  MpiCollective& w = *world();
  const int n = w.size();
  for (int root = 0; root < n; ++root) {
    std::vector<int32_t> d = {w.rank(), w.rank() * 10, -w.rank()};
    w.broadcast(w.rank(), root, DType::Int32, 3, d.data());
    CHECK(d == std::vector<int32_t>{root, root * 10, -root});
  }
  std::vector<double> mine = {w.rank() + 0.5, -1.0 * w.rank()}, all(static_cast<size_t>(2 * n));
  w.all_gather(w.rank(), DType::Float64, 2, mine.data(), all.data());
  for (int r = 0; r < n; ++r) {
    CHECK(all[static_cast<size_t>(2 * r)] == r + 0.5);
    CHECK(all[static_cast<size_t>(2 * r + 1)] == -1.0 * r);
  }
  w.barrier(w.rank());
  w.all_reduce(w.rank(), DType::Float32, 0, nullptr, nullptr, Reduction::Sum);  // empty: a no-op, still matched
}

TEST_CASE("the CollectiveAllReduce op runs over an MPI group (host memory, in place of LocalCollective)") {
  MpiCollective& w = *world();
  const int64_t key = distribute::register_collective(world());
  Tensor x = make<float>({1.0f * w.rank(), 2.0f}, Shape{2});
  Tensor y = run_op(ctx(), "CollectiveAllReduce", {x},
                    {attr_int("group_key", key), attr_int("group_size", w.size()), attr_string("reduction", "max")})[0];
  CHECK(values<float>(y) == std::vector<float>{1.0f * (w.size() - 1), 2.0f});
  distribute::unregister_collective(key);
}

TEST_CASE("ranks that disagree on size, dtype or kind all get InvalidArgument, and the communicator goes on") {
  MpiCollective& w = *world();
  const int64_t count = w.rank() == 0 ? 3 : 4;
  std::vector<float> v(4, 1.0f);
  CHECK_THROWS_CODE(w.all_reduce(w.rank(), DType::Float32, count, v.data(), v.data(), Reduction::Sum),
                    Code::InvalidArgument, "element count from 3 to 4");
  if (w.rank() == 0) CHECK_THROWS_CODE(w.barrier(0), Code::InvalidArgument, "kind from all-reduce to barrier");
  else CHECK_THROWS_CODE(w.all_reduce(w.rank(), DType::Float32, 1, v.data(), v.data(), Reduction::Sum),
                         Code::InvalidArgument, "this rank called all-reduce of 1 elements of float32 (sum)");
  CHECK_THROWS_CODE(w.all_reduce(w.rank(), DType::String, 1, v.data(), v.data(), Reduction::Sum),
                    Code::InvalidArgument, "cannot reduce dtype string");
  CHECK_THROWS_CODE(w.barrier(w.rank() + 1), Code::InvalidArgument, "this process is rank");
  v.assign(4, 1.0f);
  w.all_reduce(w.rank(), DType::Float32, 4, v.data(), v.data(), Reduction::Sum);
  CHECK(v[3] == static_cast<float>(w.size()));
}

TEST_CASE("a rank that never arrives: DeadlineExceeded within the timeout, then that communicator refuses calls") {
  MpiOptions o;
  o.timeout = std::chrono::milliseconds(300);
  o.name = "late";
  Ref<MpiCollective> late = MpiCollective::init_world({&ctx().cpu()}, o);
  const int absent = late->size() - 1;
  if (late->rank() != absent) {
    float v = 1;
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_CODE(late->all_reduce(late->rank(), DType::Float32, 1, &v, &v, Reduction::Sum),
                      Code::DeadlineExceeded,
                      fmt::format("late: all-reduce #0 on rank {} of {}: timed out after 300 ms", late->rank(),
                                  late->size()));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(3));
    CHECK_THROWS_CODE(late->barrier(late->rank()), Code::FailedPrecondition,
                      "late: barrier #1 on rank");
    CHECK_THROWS_CODE(late->barrier(late->rank()), Code::FailedPrecondition, "all-reduce #0 timed out");
  }
  // The world communicator is unaffected.
  world()->barrier(world()->rank());
}

TEST_CASE("a missing plugin gives Unavailable naming where it looked" * doctest::skip(!std::getenv("CAIRN_MPI_TEST_MISSING"))) {
  CHECK_THROWS_CODE(MpiCollective::init_world({&ctx().cpu()}), Code::Unavailable, "cannot load the MPI plugin; tried ");
  CHECK_THROWS_CODE(MpiCollective::init_world({&ctx().cpu()}), Code::Unavailable,
                    std::string(std::getenv("CAIRN_MPI_PLUGIN")) + " (");
}

TEST_CASE("last: the world communicator is released and Cairn's MPI_Init is finalized") {
  if (std::getenv("CAIRN_MPI_TEST_MISSING")) return;
  world()->barrier(world()->rank());
  world() = nullptr;
}

}  // namespace
}  // namespace cairn::test
