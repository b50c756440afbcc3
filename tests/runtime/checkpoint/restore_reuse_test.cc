// Restore through the object graph reads values into the buffers of values it replaced
// (SpareBuffers) instead of fresh memory. Reuse must never show: tensors read before the restore
// keep their values, mirrored components all get the restored value, and a damaged value leaves
// its variable as it was.
#include <fcntl.h>
#include <unistd.h>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/spare_buffers.h"
#include "runtime/track/mirroring.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

constexpr int64_t kBig = int64_t{1} << 18;  // 1 MiB of float32: read on the pool's threads
constexpr int64_t kMid = int64_t{1} << 16;  // 256 KiB: read by the calling thread

// `n` floats starting at `start`, a fresh buffer that only the returned tensor holds.
Tensor ramp(int64_t n, float start) {
  Tensor t = Tensor::allocate(ctx().cpu(), DType::Float32, Shape{n});
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = start + static_cast<float>(i);
  return t;
}

bool holds_ramp(const Tensor& t, float start) {
  for (int64_t i = 0; i < t.num_elements(); ++i)
    if (t.data<float>()[i] != start + static_cast<float>(i)) return false;
  return true;
}

std::string save_dir_file(const std::string& name) { return make_temp_dir() + "/" + name; }

TEST_CASE("a restore reads into replaced buffers, and tensors read before it keep their values") {
  Context& c = ctx();
  // Same element counts in other dtypes and shapes: a spare is reshaped, never reinterpreted.
  Ref<Variable> a = Variable::create(c, ramp(kBig, 0)), b = Variable::create(c, ramp(kBig, 1)),
                d = Variable::create(c, ramp(kBig, 2)), m = Variable::create(c, ramp(kMid, 3));
  Ref<Variable> square = Variable::create(c, ramp(kBig, 4).reshaped(Shape{512, 512}));
  Ref<Variable> ints = Variable::create(c, pattern_tensor(DType::Int32, Shape{kBig}, 0, 7));
  Ref<Variable> small = Variable::create(c, make<float>({1, 2, 3}, Shape{3}));
  Checkpoint ckpt(c, {{"a", a}, {"b", b}, {"d", d}, {"m", m}, {"square", square}, {"ints", ints}, {"small", small}});
  const std::string path = save_dir_file("ckpt");
  ckpt.write(path);
  const Tensor saved_ints = ints->read();

  for (int round = 0; round < 2; ++round) {  // the second round restores into restored buffers
    CAPTURE(round);
    a->assign(ramp(kBig, 100));
    b->assign(ramp(kBig, 101));
    d->assign(ramp(kBig, 102));
    m->assign(ramp(kMid, 103));
    square->assign(ramp(kBig, 104).reshaped(Shape{512, 512}));
    ints->assign(pattern_tensor(DType::Int32, Shape{kBig}, 0, 8));
    small->assign(make<float>({7, 8, 9}, Shape{3}));
    const Tensor held_a = a->read(), held_square = square->read();

    const uint64_t reused_before = SpareBuffers::reused_bytes();
    ckpt.restore(path)->assert_consumed();
    CHECK(SpareBuffers::reused_bytes() > reused_before);

    CHECK(holds_ramp(a->read(), 0));
    CHECK(holds_ramp(b->read(), 1));
    CHECK(holds_ramp(d->read(), 2));
    CHECK(holds_ramp(m->read(), 3));
    CHECK(holds_ramp(square->read(), 4));
    CHECK(square->read().shape() == Shape{512, 512});
    CHECK(same_tensor(ints->read(), saved_ints));
    CHECK(values<float>(small->read()) == std::vector<float>{1, 2, 3});
    // Held reads are never written: their buffers were not offered for reuse.
    CHECK(holds_ramp(held_a, 100));
    CHECK(holds_ramp(held_square, 104));
    CHECK(held_a.raw_data() != a->read().raw_data());
  }
}

TEST_CASE("mirrored components all get the restored value; a held component read keeps its own") {
  Context& c = ctx();
  Ref<Variable> x, y;
  {
    const std::vector<Device*> replicas{&c.cpu(), &c.cpu()};  // borrowed by the scope
    MirrorScope scope(replicas);
    x = Variable::create(c, ramp(kBig, 0));
    y = Variable::create(c, ramp(kBig, 1));
  }
  REQUIRE(x->num_components() == 2);
  Checkpoint ckpt(c, {{"x", x}, {"y", y}});
  const std::string path = save_dir_file("ckpt");
  ckpt.write(path);
  x->assign(ramp(kBig, 50));
  y->assign(ramp(kBig, 51));
  const Tensor held = y->component(1).read();
  ckpt.restore(path)->assert_consumed();
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(holds_ramp(x->component(r).read(), 0));
    CHECK(holds_ramp(y->component(r).read(), 1));
  }
  CHECK(holds_ramp(held, 51));
}

// Flips one byte in the middle of `key`'s payload.
void damage_payload(const std::string& path, const std::string& key) {
  const TensorInfo e = Reader::open(path).info(key);
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  const off_t at = static_cast<off_t>(e.offset + e.stored_size / 2);
  char byte = 0;
  REQUIRE(::pread(fd, &byte, 1, at) == 1);
  byte = static_cast<char>(byte ^ 0x40);
  REQUIRE(::pwrite(fd, &byte, 1, at) == 1);
  ::close(fd);
}

TEST_CASE("a damaged value read into a spare leaves its variable as it was") {
  Context& c = ctx();
  Ref<Variable> first = Variable::create(c, ramp(kBig, 0)), second = Variable::create(c, ramp(kBig, 1));
  Checkpoint ckpt(c, {{"first", first}, {"second", second}});
  const std::string path = save_dir_file("ckpt");
  ckpt.write(path);
  damage_payload(path, "second/.ATTRIBUTES/VARIABLE_VALUE");
  first->assign(ramp(kBig, 10));
  second->assign(ramp(kBig, 11));

  const uint64_t reused_before = SpareBuffers::reused_bytes();
  CHECK_THROWS_CODE(ckpt.restore(path), Code::DataLoss, "second/.ATTRIBUTES/VARIABLE_VALUE");
  // `second` was read into `first`'s replaced buffer, which the failure then dropped.
  CHECK(SpareBuffers::reused_bytes() > reused_before);
  // Values are restored one variable at a time (docs/checkpoints.md): `first` came before the damage.
  CHECK(holds_ramp(first->read(), 0));
  CHECK(holds_ramp(second->read(), 11));
}

TEST_CASE("Reader::load_into refuses a destination that does not fit") {
  const std::string path = save_dir_file("ckpt");
  write_checkpoint(path, ObjectGraph{}, {SaveEntry("v", ramp(16, 0))}, Metadata{}, WriteOptions{});
  Reader r = Reader::open(path);
  Tensor into = Tensor::allocate(ctx().cpu(), DType::Float32, Shape{16});
  r.load_into(r.info("v"), into);
  CHECK(holds_ramp(into, 0));
  CHECK_THROWS_CODE(r.load_into(r.info("v"), Tensor::allocate(ctx().cpu(), DType::Int32, Shape{16})),
                    Code::InvalidArgument, "Reader::load_into");
  CHECK_THROWS_CODE(r.load_into(r.info("v"), Tensor::allocate(ctx().cpu(), DType::Float32, Shape{4, 4})),
                    Code::InvalidArgument, "is float32[16], the destination is");
  CHECK_THROWS_CODE(r.load_into(r.info("v"), Tensor()), Code::InvalidArgument, "an empty tensor");
}

}  // namespace
}  // namespace cairn::test
