// Variables: names and scopes, reads, assignment with dtype/shape checks, updates through ops.
#include "runtime/track/track.h"
#include "tests/util/test_util.h"

namespace cairn {
namespace {

using test::ctx;

VariableOptions named(const std::string& name, const Module* scope = nullptr, bool trainable = true) {
  VariableOptions o;
  o.name = name;
  o.scope = scope;
  o.trainable = trainable;
  return o;
}

TEST_CASE("variable names: default, explicit, module scope, nested scope") {
  CHECK(Variable::create(ctx(), test::scalar<float>(1))->name() == "Variable:0");
  CHECK(Variable::create(ctx(), test::scalar<float>(1), named("v"))->name() == "v:0");
  Ref<Module> m1 = Module::create(ctx(), "m1");
  CHECK(m1->name() == "m1");
  CHECK(m1->scope() == "m1");
  CHECK(m1->describe() == "module 'm1'");
  CHECK(Variable::create(ctx(), test::scalar<float>(1), named("m_v", m1.get()))->name() == "m1/m_v:0");
  Ref<Module> inner = Module::create(ctx(), "m2", m1.get());
  CHECK(inner->name() == "m2");
  CHECK(inner->scope() == "m1/m2");
  CHECK(Variable::create(ctx(), test::scalar<float>(1), named("w", inner.get()))->name() == "m1/m2/w:0");
  CHECK(Module::create(ctx())->name() == "module");

  CHECK_THROWS_CODE(Variable::create(ctx(), test::scalar<float>(1), named(""), "cairn_variable_create"),
                    Code::InvalidArgument, "cairn_variable_create: variable name is empty");
  CHECK_THROWS_CODE(Variable::create(ctx(), test::scalar<float>(1), named("a:0")), Code::InvalidArgument,
                    "contains ':'");
  CHECK_THROWS_CODE(Module::create(ctx(), "", nullptr, "cairn_module_create"), Code::InvalidArgument,
                    "cairn_module_create: module name is empty");
  CHECK_THROWS_CODE(Module::create(ctx(), "a/b"), Code::InvalidArgument, "contains '/' or ':'");
}

TEST_CASE("a variable takes dtype, shape, device and trainable from its creation") {
  Ref<Variable> v = Variable::create(ctx(), test::make<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3}), named("w", nullptr, false));
  CHECK(v->dtype() == DType::Float32);
  CHECK(v->shape() == Shape{2, 3});
  CHECK(&v->device() == &ctx().cpu());
  CHECK_FALSE(v->trainable());
  CHECK(v->describe() == "variable 'w:0'");
  CHECK(test::values<float>(v->read()) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(Variable::create(ctx(), test::scalar<int64_t>(1))->trainable());

  CHECK_THROWS_CODE(Variable::create(ctx(), Tensor(), {}, "cairn_variable_create"), Code::InvalidArgument,
                    "cairn_variable_create: the initial value is an empty tensor");
}

TEST_CASE("assign replaces the value; a snapshot read earlier does not change") {
  Ref<Variable> v = Variable::create(ctx(), test::make<float>({1, 2}, Shape{2}), named("v"));
  Tensor before = v->read();
  v->assign(test::make<float>({5, 6}, Shape{2}));
  CHECK(test::values<float>(before) == std::vector<float>{1, 2});
  CHECK(test::values<float>(v->read()) == std::vector<float>{5, 6});

  CHECK_THROWS_CODE(v->assign(test::make<float>({1, 2, 3}, Shape{3}), "cairn_variable_assign"), Code::InvalidArgument,
                    "cairn_variable_assign: shape [3] does not match variable 'v:0' of shape [2]");
  CHECK_THROWS_CODE(v->assign(test::make<int32_t>({1, 2}, Shape{2}), "cairn_variable_assign"), Code::InvalidArgument,
                    "cairn_variable_assign: dtype int32 does not match variable 'v:0' of dtype float32");
  CHECK_THROWS_CODE(v->assign(test::make<float>({1, 2}, Shape{1, 2})), Code::InvalidArgument,
                    "shape [1,2] does not match");
  CHECK_THROWS_CODE(v->assign(Tensor()), Code::InvalidArgument, "the value is an empty tensor");
  CHECK(test::values<float>(v->read()) == std::vector<float>{5, 6});  // failed assigns change nothing
}

TEST_CASE("assign_add and assign_sub run Add and Sub, for every numeric dtype") {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::Int8, DType::Int16,
                   DType::UInt8, DType::Float16, DType::BFloat16, DType::Complex64}) {
    CAPTURE(dtype_name(dt));
    Ref<Variable> v = Variable::create(ctx(), test::make_as(dt, {1, 2, 3}, Shape{3}));
    v->assign_add(test::make_as(dt, {10, 20, 30}, Shape{3}));
    test::check_close(test::as_doubles(v->read()), {11, 22, 33});
    v->assign_sub(test::make_as(dt, {1, 1, 1}, Shape{3}));
    test::check_close(test::as_doubles(v->read()), {10, 21, 32});
    CHECK(v->read().dtype() == dt);
  }
}

TEST_CASE("assign_add checks dtype and shape exactly (no broadcasting) and names the caller") {
  Ref<Variable> v = Variable::create(ctx(), test::make<int32_t>({1, 2}, Shape{2}), named("v"));
  CHECK_THROWS_CODE(v->assign_add(test::scalar<int32_t>(1), "cairn_variable_assign_add"), Code::InvalidArgument,
                    "cairn_variable_assign_add: shape [] does not match variable 'v:0' of shape [2]");
  CHECK_THROWS_CODE(v->assign_sub(test::make<float>({1, 2}, Shape{2}), "cairn_variable_assign_sub"),
                    Code::InvalidArgument, "cairn_variable_assign_sub: dtype float32 does not match");
  Ref<Variable> flag = Variable::create(ctx(), test::make<bool>({true}, Shape{1}), named("flag"));
  // Add has no bool kernel: the op's error comes back prefixed with the caller.
  bool threw = false;
  try {
    flag->assign_add(test::make<bool>({true}, Shape{1}), "cairn_variable_assign_add");
  } catch (const Error& e) {
    threw = true;
    CHECK(e.message().rfind("cairn_variable_assign_add: Add:", 0) == 0);
  }
  CHECK(threw);
  CHECK(test::values<int32_t>(v->read()) == std::vector<int32_t>{1, 2});
}

TEST_CASE("tensor_on_device shares a tensor already on the device") {
  Tensor t = test::make<float>({1}, Shape{1});
  Tensor same = tensor_on_device(t, ctx().cpu());
  CHECK(same.buffer() == t.buffer());
}

}  // namespace
}  // namespace cairn
