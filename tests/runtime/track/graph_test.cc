// The object graph: edges, order, replacement, deletion, untracked references, containers,
// cycles, sharing, the breadth-first walk and edge observers.
#include "runtime/track/track.h"
#include "tests/util/test_util.h"

namespace cairn {
namespace {

using test::ctx;

Ref<Variable> var(int32_t v, const std::string& name = "Variable") {
  VariableOptions o;
  o.name = name;
  return Variable::create(ctx(), test::scalar<int32_t>(v), o);
}

std::vector<std::string> names(const std::vector<Edge>& edges) {
  std::vector<std::string> out;
  for (const Edge& e : edges) out.push_back(e.name);
  return out;
}

std::vector<std::string> paths(const std::vector<PathedObject>& walk) {
  std::vector<std::string> out;
  for (const PathedObject& p : walk) out.push_back(join_path(p.path));
  return out;
}

using Names = std::vector<std::string>;

TEST_CASE("object kinds keep cairn_object_kind's values") {
  CHECK(static_cast<int>(ObjectKind::Trackable) == 1);
  CHECK(static_cast<int>(ObjectKind::Variable) == 2);
  CHECK(static_cast<int>(ObjectKind::List) == 3);
  CHECK(static_cast<int>(ObjectKind::Dict) == 4);
  CHECK(static_cast<int>(ObjectKind::Module) == 5);
  CHECK(static_cast<int>(ObjectKind::Optimizer) == 6);
  CHECK(static_cast<int>(ObjectKind::Layer) == 7);
  CHECK(std::string(object_kind_name(ObjectKind::Dict)) == "dict");
  CHECK(Trackable::create(ctx())->kind() == ObjectKind::Trackable);
  CHECK(Module::create(ctx(), "m")->kind() == ObjectKind::Module);
  CHECK(List::create(ctx())->kind() == ObjectKind::List);
  CHECK(Dict::create(ctx())->kind() == ObjectKind::Dict);
  CHECK(var(1)->kind() == ObjectKind::Variable);
  CHECK(is_module_kind(ObjectKind::Module));
  CHECK(is_module_kind(ObjectKind::Layer));
  CHECK_FALSE(is_module_kind(ObjectKind::Trackable));
}

TEST_CASE("objects keep their context alive") {
  auto* c = new Context(ContextOptions{});
  Ref<Context> owner = Ref<Context>::adopt(c);
  Ref<Trackable> t = Trackable::create(*c);
  CHECK(c->ref_count() == 2);
  owner = nullptr;  // the caller's reference goes; the object still holds one
  CHECK(&t->context() == c);
  CHECK(c->ref_count() == 1);
}

TEST_CASE("edges keep creation order and a replaced edge keeps its position") {
  Ref<Trackable> root = Trackable::create(ctx());
  auto a = var(1), b = var(2), c = var(3), d = var(4);
  root->set("zeta", a);
  root->set("alpha", b);
  root->set("mid", c);
  CHECK(names(root->children()) == Names{"zeta", "alpha", "mid"});
  root->set("alpha", d);  // re-assignment keeps the slot
  CHECK(names(root->children()) == Names{"zeta", "alpha", "mid"});
  CHECK(root->get_child("alpha").get() == d.get());
  CHECK(root->children()[1].child.get() == d.get());
  CHECK(root->num_children() == 3);
  CHECK(b->ref_count() == 1);  // the replaced child was released
}

TEST_CASE("deleting an edge removes it from every walk") {
  Ref<Trackable> root = Trackable::create(ctx());
  auto a = var(1), b = var(2), c = var(3);
  root->set("a", a);
  root->set("b", b);
  root->set("c", c);
  root->remove("b");
  CHECK(names(root->children()) == Names{"a", "c"});
  CHECK_FALSE(root->get_child("b"));
  CHECK(paths(breadth_first(*root)) == Names{"", "a", "c"});
  CHECK(module_variables(*root, false).size() == 2);
  CHECK_THROWS_CODE(root->remove("b", "cairn_object_delete"), Code::NotFound,
                    "cairn_object_delete: no child named \"b\"");
  root->set("b", b);  // re-created edges go to the end
  CHECK(names(root->children()) == Names{"a", "c", "b"});
}

TEST_CASE("untracked references are held alive but never walked") {
  Ref<Trackable> root = Trackable::create(ctx());
  Ref<Variable> hidden = var(0);
  root->set("v", var(1000));
  root->set_untracked("untracked", hidden);
  CHECK(hidden->ref_count() == 2);
  CHECK(names(root->children()) == Names{"v"});
  CHECK(paths(breadth_first(*root)) == Names{"", "v"});
  CHECK(module_variables(*root, false).size() == 1);
  CHECK_FALSE(root->get_child("untracked"));
  CHECK(root->get("untracked").get() == hidden.get());  // generic get sees both
  CHECK(names(root->untracked()) == Names{"untracked"});

  SUBCASE("a tracked set replaces an untracked reference of the same name") {
    root->set("untracked", hidden);
    CHECK(names(root->children()) == Names{"v", "untracked"});
    CHECK(root->untracked().empty());
    CHECK(hidden->ref_count() == 2);
  }
  SUBCASE("an untracked set replaces a tracked edge of the same name") {
    root->set_untracked("v", hidden);
    CHECK(root->children().empty());
    CHECK(names(root->untracked()) == Names{"untracked", "v"});
  }
  SUBCASE("delete removes an untracked reference") {
    root->remove("untracked");
    CHECK(hidden->ref_count() == 1);
    CHECK_THROWS_CODE(root->get("untracked", "cairn_object_get"), Code::NotFound, "cairn_object_get: no child named");
  }
}

TEST_CASE("edge names are checked") {
  Ref<Trackable> root = Trackable::create(ctx());
  auto v = var(1);
  CHECK_THROWS_CODE(root->set("", v, "cairn_object_set"), Code::InvalidArgument, "cairn_object_set: edge name is empty");
  CHECK_THROWS_CODE(root->set("a/b", v, "cairn_object_set"), Code::InvalidArgument, "\"a/b\" contains '/'");
  CHECK_THROWS_CODE(root->set(".ATTRIBUTES", v), Code::InvalidArgument, "reserved");
  CHECK_THROWS_CODE(root->set("x", nullptr), Code::InvalidArgument, "child is null");
  CHECK_THROWS_CODE(root->get("nope", "cairn_object_get"), Code::NotFound,
                    "cairn_object_get: no child named \"nope\" in trackable");
  root->set_untracked("a/b", v);  // untracked names never reach a checkpoint key
  CHECK(root->get("a/b").get() == v.get());
  CHECK_THROWS_CODE(root->set_untracked("", v), Code::InvalidArgument, "name is empty");
  CHECK(root->children().empty());
}

TEST_CASE("variables have no edges") {
  auto v = var(1, "v");
  CHECK(v->children().empty());
  CHECK_FALSE(v->get_child("x"));
  CHECK_THROWS_CODE(v->set("x", var(2), "cairn_object_set"), Code::InvalidArgument,
                    "cairn_object_set: a variable has no edges");
  CHECK_THROWS_CODE(v->set_untracked("x", var(2)), Code::InvalidArgument, "a variable has no untracked references");
  CHECK_THROWS_CODE(v->get("x", "cairn_object_get"), Code::NotFound, "no child named \"x\" in variable 'v:0'");
  CHECK_THROWS_CODE(v->remove("x"), Code::NotFound, "no child named");
}

TEST_CASE("lists: append, index names, set, remove") {
  Ref<List> list = List::create(ctx());
  auto a = var(1), b = var(2), c = var(3);
  list->append(a);
  list->append(b);
  CHECK(list->size() == 2);
  CHECK(names(list->children()) == Names{"0", "1"});
  CHECK(list->at(1).get() == b.get());
  CHECK(list->get("0").get() == a.get());
  CHECK(list->get_child("1").get() == b.get());
  CHECK_FALSE(list->get_child("2"));
  CHECK_FALSE(list->get_child("01"));
  CHECK_FALSE(list->non_append_mutation());

  CHECK_THROWS_CODE(list->at(2, "cairn_list_get"), Code::OutOfRange,
                    "cairn_list_get: index 2 is out of range for a list of size 2");
  CHECK_THROWS_CODE(list->get("5", "cairn_object_get"), Code::OutOfRange, "index 5 is out of range");
  CHECK_THROWS_CODE(list->get("x", "cairn_object_get"), Code::NotFound, "cairn_object_get: no child named \"x\" in list");
  CHECK_THROWS_CODE(list->get("-1"), Code::NotFound, "no child named \"-1\"");
  CHECK_THROWS_CODE(list->get("01"), Code::NotFound, "no child named \"01\"");
  CHECK_THROWS_CODE(list->set_untracked("0", c), Code::InvalidArgument, "a list has no untracked references");
  CHECK_THROWS_CODE(list->append(nullptr), Code::InvalidArgument, "item is null");
  CHECK_THROWS_CODE(list->set("2", c), Code::OutOfRange, "index 2 is out of range");

  list->set("1", c);
  CHECK(list->at(1).get() == c.get());
  CHECK(list->non_append_mutation());
  list->remove("0");
  CHECK(list->size() == 1);
  CHECK(list->at(0).get() == c.get());
  CHECK(names(list->children()) == Names{"0"});
  CHECK_THROWS_CODE(list->remove_at(1), Code::OutOfRange, "index 1 is out of range for a list of size 1");
  CHECK(List::parse_index("0") == size_t{0});
  CHECK(List::parse_index("123") == size_t{123});
  CHECK_FALSE(List::parse_index(""));
  CHECK_FALSE(List::parse_index("1a"));
  CHECK_FALSE(List::parse_index("99999999999999999999"));
}

TEST_CASE("dicts: keys in insertion order, replace in place, delete") {
  Ref<Dict> dict = Dict::create(ctx());
  auto a = var(1), b = var(2), c = var(3);
  dict->set("b", a);
  dict->set("a", b);
  dict->set("b", c);
  CHECK(names(dict->children()) == Names{"b", "a"});
  CHECK(dict->get("b").get() == c.get());
  CHECK(dict->size() == 2);
  dict->remove("b");
  CHECK(names(dict->children()) == Names{"a"});
  CHECK_THROWS_CODE(dict->get("b", "cairn_object_get"), Code::NotFound, "cairn_object_get: no child named \"b\" in dict");
  CHECK_THROWS_CODE(dict->remove("b"), Code::NotFound, "no child named");
  CHECK_THROWS_CODE(dict->set("", a), Code::InvalidArgument, "edge name is empty");
  CHECK_THROWS_CODE(dict->set("x/y", a), Code::InvalidArgument, "contains '/'");
  CHECK_THROWS_CODE(dict->set_untracked("k", a), Code::InvalidArgument, "a dict has no untracked references");
}

TEST_CASE("breadth-first walk: edge order, first path wins, cycles end") {
  // tr3.br_list = [br1, br2]; tr3.br_dict = {br1, br2, br3} (S4/S5).
  Ref<Trackable> tr3 = Trackable::create(ctx());
  Ref<Trackable> br[3] = {Trackable::create(ctx()), Trackable::create(ctx()), Trackable::create(ctx())};
  for (auto& b : br) b->set("v", var(5));
  Ref<List> list = List::create(ctx());
  list->append(br[0]);
  list->append(br[1]);
  Ref<Dict> dict = Dict::create(ctx());
  dict->set("br1", br[0]);
  dict->set("br2", br[1]);
  dict->set("br3", br[2]);
  tr3->set("br_list", list);
  tr3->set("br_dict", dict);

  std::vector<PathedObject> walk = breadth_first(*tr3);
  CHECK(paths(walk) == Names{"", "br_list", "br_dict", "br_list/0", "br_list/1", "br_dict/br3", "br_list/0/v",
                             "br_list/1/v", "br_dict/br3/v"});
  CHECK(walk[0].object.get() == tr3.get());
  CHECK(walk[3].object.get() == br[0].get());

  // A cycle back to the root and a self-edge: each object still appears once.
  br[2]->set("up", tr3);
  tr3->set("self", tr3);
  walk = breadth_first(*tr3);
  CHECK(walk.size() == 9);
  CHECK(paths(walk).back() == "br_dict/br3/v");
  // Break the cycles so the objects can go.
  br[2]->remove("up");
  tr3->remove("self");
  walk.clear();
  CHECK(tr3->ref_count() == 1);
}

TEST_CASE("breadth-first walk is breadth-first, not depth-first") {
  Ref<Trackable> root = Trackable::create(ctx());
  Ref<Trackable> a = Trackable::create(ctx()), b = Trackable::create(ctx());
  auto shared = var(1);
  a->set("deep", Trackable::create(ctx()));
  a->get_child("deep")->set("x", shared);
  root->set("a", a);
  root->set("b", b);
  b->set("x", shared);  // shallower path, created later, still found first by depth
  auto walk = breadth_first(*root);
  CHECK(paths(walk) == Names{"", "a", "b", "a/deep", "b/x"});
}

struct Recorder : EdgeObserver {
  std::vector<std::string> seen;
  void on_edge_created(Object& parent, const std::string& name, Object& child) override {
    seen.push_back(std::string(object_kind_name(parent.kind())) + ":" + name + ":" + object_kind_name(child.kind()));
  }
};

TEST_CASE("edge observers fire on set, list append/set and dict insert, after the lock") {
  auto rec = std::make_shared<Recorder>();
  Ref<Trackable> root = Trackable::create(ctx());
  Ref<List> list = List::create(ctx());
  Ref<Dict> dict = Dict::create(ctx());
  root->add_edge_observer(rec);
  list->add_edge_observer(rec);
  dict->add_edge_observer(rec);
  CHECK(root->num_edge_observers() == 1);

  root->set("l", list);
  root->set("l", list);  // a re-set is an edge creation too
  root->set_untracked("u", var(1));  // untracked: no notification
  list->append(var(1));
  list->set_at(0, var(2));
  dict->set("k", var(3));
  root->remove("l");  // deletion: no notification
  CHECK(rec->seen == Names{"trackable:l:list", "trackable:l:list", "list:0:variable", "list:0:variable",
                           "dict:k:variable"});

  // Observers are held weakly: once the owner drops them they are pruned.
  rec.reset();
  root->set("x", var(4));
  CHECK(root->num_edge_observers() == 0);
}

// What deferred restore does: inside the callback, read the graph, write to it, add observers.
struct Reentrant : EdgeObserver {
  std::shared_ptr<Recorder> nested = std::make_shared<Recorder>();
  int calls = 0;
  void on_edge_created(Object& parent, const std::string& name, Object& child) override {
    ++calls;
    CHECK(parent.get_child(name).get() == &child);  // the edge is visible, the lock is free
    if (child.kind() == ObjectKind::Variable) static_cast<Variable&>(child).assign(test::scalar<int32_t>(42));
    if (child.kind() == ObjectKind::List) child.add_edge_observer(nested);
    if (name == "first") parent.set("second", var(7));
  }
};

TEST_CASE("observers may write the graph and register more observers") {
  auto obs = std::make_shared<Reentrant>();
  Ref<Trackable> root = Trackable::create(ctx());
  root->add_edge_observer(obs);
  Ref<Variable> v = var(0);
  root->set("first", v);
  CHECK(obs->calls == 2);  // "first", then "second" set from inside the callback
  CHECK(test::values<int32_t>(v->read()) == std::vector<int32_t>{42});
  CHECK(test::values<int32_t>(static_cast<Variable&>(*root->get_child("second")).read()) ==
        std::vector<int32_t>{42});
  Ref<List> list = List::create(ctx());
  root->set("list", list);
  list->append(var(0));
  CHECK(obs->nested->seen == Names{"list:0:variable"});
}

struct Thrower : EdgeObserver {
  void on_edge_created(Object&, const std::string&, Object&) override { raise(Code::InvalidArgument, "restore failed"); }
};

TEST_CASE("an observer's error reaches the caller, the edge stays and the other observers run") {
  auto thrower = std::make_shared<Thrower>();
  auto rec = std::make_shared<Recorder>();
  Ref<Trackable> root = Trackable::create(ctx());
  root->add_edge_observer(thrower);
  root->add_edge_observer(rec);
  CHECK_THROWS_CODE(root->set("v", var(1)), Code::InvalidArgument, "restore failed");
  CHECK(root->get_child("v"));
  CHECK(rec->seen == Names{"trackable:v:variable"});
}

}  // namespace
}  // namespace cairn
