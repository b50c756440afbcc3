#include "runtime/core/object_kind.h"
#include "tests/golden/checkpoint_v1_contents.h"

#include "runtime/core/convert.h"

namespace cairn::golden {
namespace {

template <class T>
Tensor make(Device& cpu, const Shape& shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(cpu, DTypeOf<T>::value, shape);
  for (size_t i = 0; i < values.size(); ++i) t.mutable_data<T>()[i] = values[i];
  return t;
}

// n values from f(i), converted to T.
template <class T, class F>
std::vector<T> ramp(size_t n, F f) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = convert<T>(f(static_cast<double>(i)));
  return v;
}

}  // namespace

std::vector<ckpt::SaveEntry> checkpoint_v1_entries(Device& cpu) {
  std::vector<ckpt::SaveEntry> e;
  e.emplace_back("net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                 make<float>(cpu, Shape{4, 64}, ramp<float>(256, [](double i) { return i * 0.5 - 8.0; })));
  e.emplace_back("net/dense/bias/.ATTRIBUTES/VARIABLE_VALUE", make<float>(cpu, Shape{4}, {0.1f, -0.2f, 0.3f, -0.4f}));
  e.emplace_back("net/dense/kernel/.OPTIMIZER_SLOT/opt/m",
                 make<float16>(cpu, Shape{4, 64}, ramp<float16>(256, [](double i) { return static_cast<int>(i) % 8 * 0.125; })));
  e.emplace_back("save_counter/.ATTRIBUTES/VARIABLE_VALUE", make<int64_t>(cpu, Shape{}, {7}));
  e.emplace_back("dtypes/float64", make<double>(cpu, Shape{3}, {1.5, -2.25, 1e300}));
  e.emplace_back("dtypes/int32", make<int32_t>(cpu, Shape{2, 2}, {1, -2, 3, -4}));
  e.emplace_back("dtypes/int32_ramp", make<int32_t>(cpu, Shape{256}, ramp<int32_t>(256, [](double i) { return i; })));
  e.emplace_back("dtypes/uint8", make<uint8_t>(cpu, Shape{5}, {0, 1, 127, 128, 255}));
  e.emplace_back("dtypes/int16", make<int16_t>(cpu, Shape{3}, {-32768, 0, 32767}));
  e.emplace_back("dtypes/int8", make<int8_t>(cpu, Shape{4}, {-128, -1, 0, 127}));
  e.emplace_back("dtypes/complex64", make<complex64>(cpu, Shape{2}, {complex64(1, -1), complex64(0.5f, 2)}));
  e.emplace_back("dtypes/bool", make<bool>(cpu, Shape{3}, {true, false, true}));
  e.emplace_back("dtypes/bfloat16", make<bfloat16>(cpu, Shape{2}, {bfloat16(1.0f), bfloat16(-3.5f)}));
  e.emplace_back("dtypes/int64_empty", make<int64_t>(cpu, Shape{2, 0}, {}));
  e.push_back(ckpt::SaveEntry::string_scalar("notes", "golden checkpoint v1"));
  return e;
}

ckpt::ObjectGraph checkpoint_v1_graph() {
  using cairn::ObjectKind;
  auto k = [](ObjectKind kind) { return static_cast<uint32_t>(kind); };
  ckpt::ObjectGraph g;
  g.nodes.resize(8);
  g.nodes[0].kind = k(ObjectKind::Trackable);
  g.nodes[0].children = {{"net", 1}, {"opt", 5}, {"save_counter", 7}};
  g.nodes[1].kind = k(ObjectKind::Module);
  g.nodes[1].children = {{"dense", 2}};
  g.nodes[2].kind = k(ObjectKind::Layer);
  g.nodes[2].children = {{"kernel", 3}, {"bias", 4}};
  g.nodes[3].kind = k(ObjectKind::Variable);
  g.nodes[3].attributes = {{"VARIABLE_VALUE", "net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE"}};
  g.nodes[4].kind = k(ObjectKind::Variable);
  g.nodes[4].attributes = {{"VARIABLE_VALUE", "net/dense/bias/.ATTRIBUTES/VARIABLE_VALUE"}};
  g.nodes[5].kind = k(ObjectKind::Optimizer);
  g.nodes[5].slots = {{5, 3, "m", 6}};
  g.nodes[6].kind = k(ObjectKind::Variable);
  g.nodes[6].attributes = {{"VARIABLE_VALUE", "net/dense/kernel/.OPTIMIZER_SLOT/opt/m"}};
  g.nodes[7].kind = k(ObjectKind::Variable);
  g.nodes[7].attributes = {{"VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}};
  return g;
}

ckpt::Metadata checkpoint_v1_metadata() {
  ckpt::Metadata m;
  m.save_counter = 7;
  m.library_version = "0.1.0";
  m.user = {{"generator", "tests/golden/make_golden_checkpoint"}};
  return m;
}

ckpt::WriteOptions checkpoint_v1_options() {
  ckpt::WriteOptions o;
  o.compress = true;
  o.zstd_level = 3;  // the level the committed file was written with (the default then)
  return o;
}

}  // namespace cairn::golden
