// Module queries against tf.Module's semantics (module.py, _flatten_module): attributes sorted by
// name, direct leaves before recursing into submodules, containers expanded like tf.nest, no
// duplicates without paths, every path with paths, cycles cut at the recursion stack.
#include "runtime/track/track.h"
#include "tests/util/test_util.h"

namespace cairn {
namespace {

using test::ctx;
using Names = std::vector<std::string>;

Ref<Variable> var(const std::string& name, const Module* scope = nullptr, bool trainable = true) {
  VariableOptions o;
  o.name = name;
  o.scope = scope;
  o.trainable = trainable;
  return Variable::create(ctx(), test::scalar<float>(0), o);
}

Names var_names(const std::vector<PathedObject>& found) {
  Names out;
  for (const auto& p : found) out.push_back(static_cast<const Variable&>(*p.object).name());
  return out;
}

Names module_names(const std::vector<PathedObject>& found) {
  Names out;
  for (const auto& p : found) out.push_back(static_cast<const Module&>(*p.object).name());
  return out;
}

Names paths(const std::vector<PathedObject>& found) {
  Names out;
  for (const auto& p : found) out.push_back(join_path(p.path));
  return out;
}

const ObjectPredicate kAll = [](const Object&) { return true; };

TEST_CASE("S6: variables and submodules of nested modules") {
  Ref<Module> m1 = Module::create(ctx(), "m1"), m2 = Module::create(ctx(), "m2"), m3 = Module::create(ctx(), "m3");
  m1->set("v", var("m_v", m1.get()));
  m2->set("v", var("m_v", m2.get()));
  m3->set("v", var("m_v", m3.get()));
  m1->set("sub", m2);
  m2->set("sub", m3);
  auto vars = module_variables(*m1, false);
  CHECK(var_names(vars) == Names{"m1/m_v:0", "m2/m_v:0", "m3/m_v:0"});
  CHECK(paths(vars) == Names{"v", "sub/v", "sub/sub/v"});
  CHECK(module_names(module_submodules(*m1)) == Names{"m2", "m3"});
  CHECK(module_names(module_submodules(*m3)).empty());
}

TEST_CASE("own variables come first, sorted by attribute name, then submodules'") {
  Ref<Module> root = Module::create(ctx(), "root"), child = Module::create(ctx(), "child");
  root->set("z_var", var("z"));
  root->set("child", child);
  child->set("a_var", var("ca"));
  root->set("a_var", var("a"));
  CHECK(var_names(module_variables(*root, false)) == Names{"a:0", "z:0", "ca:0"});
}

TEST_CASE("submodules: each module's direct submodules before any deeper ones") {
  // root.a = A, root.b = B, A.x = C, C.z = E, B.y = D.  _flatten_module yields A, B (root's
  // leaves), then recurses A: C, then C: E, then B: D.
  Ref<Module> root = Module::create(ctx(), "root");
  Ref<Module> A = Module::create(ctx(), "A"), B = Module::create(ctx(), "B"), C = Module::create(ctx(), "C"),
              D = Module::create(ctx(), "D"), E = Module::create(ctx(), "E");
  root->set("b", B);
  root->set("a", A);
  A->set("x", C);
  C->set("z", E);
  B->set("y", D);
  CHECK(module_names(module_submodules(*root)) == Names{"A", "B", "C", "E", "D"});
  CHECK(paths(module_submodules(*root)) == Names{"a", "b", "a/x", "a/x/z", "b/y"});
}

TEST_CASE("a shared variable is reported once, at its first path") {
  Ref<Module> root = Module::create(ctx(), "root"), m = Module::create(ctx(), "m"), n = Module::create(ctx(), "n");
  Ref<Variable> shared = var("shared");
  m->set("w", shared);
  n->set("w", shared);
  root->set("m", m);
  root->set("n", n);
  root->set("direct", shared);
  auto vars = module_variables(*root, false);
  CHECK(var_names(vars) == Names{"shared:0"});
  CHECK(paths(vars) == Names{"direct"});
}

TEST_CASE("trainable_only filters; plain trackables are leaves whose edges are not followed") {
  Ref<Module> root = Module::create(ctx(), "root");
  root->set("frozen", var("frozen", nullptr, false));
  root->set("w", var("w"));
  Ref<Trackable> plain = Trackable::create(ctx());
  plain->set("hidden", var("hidden"));
  root->set("plain", plain);
  CHECK(var_names(module_variables(*root, false)) == Names{"frozen:0", "w:0"});
  CHECK(var_names(module_variables(*root, true)) == Names{"w:0"});
  auto all = module_flatten(*root, kAll, false);
  CHECK(paths(all) == Names{"frozen", "plain", "w"});
  // A trackable root is walked like a module (its own attributes), but nested trackables are not.
  CHECK(var_names(module_variables(*plain, false)) == Names{"hidden:0"});
}

TEST_CASE("lists and dicts expand like tf.nest: list order, sorted dict keys, never reported") {
  Ref<Module> root = Module::create(ctx(), "root"), ma = Module::create(ctx(), "ma"), mb = Module::create(ctx(), "mb");
  ma->set("k", var("ka"));
  mb->set("k", var("kb"));
  Ref<List> layers = List::create(ctx());
  layers->append(mb);
  layers->append(ma);
  Ref<Dict> d = Dict::create(ctx());
  d->set("b", var("db"));
  d->set("a", var("da"));
  Ref<List> nested = List::create(ctx());
  nested->append(var("n0"));
  d->set("c", nested);
  root->set("layers", layers);
  root->set("d", d);
  auto vars = module_variables(*root, false);
  CHECK(var_names(vars) == Names{"da:0", "db:0", "n0:0", "kb:0", "ka:0"});
  CHECK(paths(vars) == Names{"d/a", "d/b", "d/c/0", "layers/0/k", "layers/1/k"});
  CHECK(module_names(module_submodules(*root)) == Names{"mb", "ma"});
  for (const auto& p : module_flatten(*root, kAll, true)) {
    CHECK(p.object->kind() != ObjectKind::List);
    CHECK(p.object->kind() != ObjectKind::Dict);
  }
}

TEST_CASE("a list's elements keep index order past 9") {
  Ref<List> list = List::create(ctx());
  Names want;
  for (int i = 0; i < 12; ++i) {
    list->append(var("e" + std::to_string(i)));
    want.push_back("e" + std::to_string(i) + ":0");
  }
  Ref<Module> root = Module::create(ctx(), "root");
  root->set("l", list);
  CHECK(var_names(module_variables(*root, false)) == want);
  CHECK(var_names(module_variables(*list, false)) == want);  // a list root works too
}

TEST_CASE("flatten with paths reports every path to a shared object") {
  Ref<Module> root = Module::create(ctx(), "root"), m = Module::create(ctx(), "m");
  m->set("v", var("v"));
  root->set("b", m);
  root->set("a", m);
  CHECK(paths(module_flatten(*root, kAll, true)) == Names{"a", "b", "a/v", "b/v"});
  CHECK(paths(module_flatten(*root, kAll, false)) == Names{"a", "a/v"});
}

TEST_CASE("cycles: with paths the walk stops at a module already on the recursion stack") {
  Ref<Module> m1 = Module::create(ctx(), "m1"), m2 = Module::create(ctx(), "m2");
  m1->set("a", m2);
  m2->set("b", m1);
  CHECK(paths(module_flatten(*m1, kAll, true)) == Names{"a", "a/b", "a/b/a"});
  CHECK(module_names(module_submodules(*m1)) == Names{"m2"});  // the root itself is never reported

  m1->set("self", m1);
  CHECK(paths(module_flatten(*m1, kAll, true)) == Names{"a", "self", "a/b", "a/b/a", "a/b/self", "self/a", "self/self"});
  m1->remove("self");
  m2->remove("b");

  // A list holding itself is expanded once.
  Ref<List> l = List::create(ctx());
  l->append(l);
  l->append(var("in_list"));
  Ref<Module> root = Module::create(ctx(), "root");
  root->set("l", l);
  CHECK(paths(module_flatten(*root, kAll, true)) == Names{"l/1"});
  CHECK(paths(module_flatten(*l, kAll, true)) == Names{"1"});
  l->remove_at(0);
}

}  // namespace
}  // namespace cairn
