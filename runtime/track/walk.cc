#include "runtime/track/walk.h"

#include <algorithm>
#include <deque>
#include <unordered_set>

namespace cairn {

std::string join_path(const std::vector<std::string>& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i) out += '/';
    out += path[i];
  }
  return out;
}

std::vector<PathedObject> breadth_first(Object& root, std::vector<std::vector<Edge>>* edges_out) {
  std::vector<PathedObject> order;
  std::unordered_set<const Object*> visited{&root};
  order.push_back(PathedObject{{}, Ref<Object>::share(&root)});
  if (edges_out) edges_out->clear();
  // `order` doubles as the queue: entries from `next` on still have to be expanded.
  for (size_t next = 0; next < order.size(); ++next) {
    std::vector<Edge> edges = order[next].object->children();
    for (const Edge& e : edges) {
      if (!visited.insert(e.child.get()).second) continue;
      std::vector<std::string> path = order[next].path;
      path.push_back(e.name);
      order.push_back(PathedObject{std::move(path), e.child});
    }
    if (edges_out) edges_out->push_back(std::move(edges));
  }
  return order;
}

namespace {

bool is_container(ObjectKind k) { return k == ObjectKind::List || k == ObjectKind::Dict; }

// The children of a list in index order, of anything else sorted by name (Python's sorted() on
// str compares code points, which UTF-8 byte order preserves).
std::vector<Edge> sorted_children(const Object& o) {
  std::vector<Edge> edges = o.children();
  if (o.kind() != ObjectKind::List)
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.name < b.name; });
  return edges;
}

class Flattener {
 public:
  Flattener(const ObjectPredicate& predicate, bool with_path) : predicate_(predicate), with_path_(with_path) {}

  std::vector<PathedObject> run(Object& root) {
    seen_.insert(&root);
    if (is_container(root.kind())) expanding_.push_back(&root);
    std::vector<std::string> path;
    module(root, path, true);
    return std::move(out_);
  }

 private:
  // _flatten_module: direct leaves in attribute order, then recurse into the modules among them.
  void module(Object& m, std::vector<std::string>& path, bool recursive) {
    if (std::find(stack_.begin(), stack_.end(), &m) != stack_.end()) recursive = false;
    std::vector<PathedObject> submodules;
    for (Edge& attr : sorted_children(m)) {
      path.push_back(attr.name);
      leaves(attr.child, path, recursive, submodules);
      path.pop_back();
    }
    stack_.push_back(&m);
    for (PathedObject& sub : submodules) module(*sub.object, sub.path, recursive);
    stack_.pop_back();
  }

  // tf.nest.flatten_with_tuple_paths over one attribute value: containers expand, the rest are
  // leaves. A container already being expanded (a container cycle) is skipped.
  void leaves(const Ref<Object>& value, std::vector<std::string>& path, bool recursive,
              std::vector<PathedObject>& submodules) {
    if (is_container(value->kind())) {
      if (std::find(expanding_.begin(), expanding_.end(), value.get()) != expanding_.end()) return;
      expanding_.push_back(value.get());
      for (Edge& e : sorted_children(*value)) {
        path.push_back(e.name);
        leaves(e.child, path, recursive, submodules);
        path.pop_back();
      }
      expanding_.pop_back();
      return;
    }
    if (!with_path_ && !seen_.insert(value.get()).second) return;
    if (predicate_(*value)) out_.push_back(PathedObject{path, value});
    if (recursive && is_module_kind(value->kind())) submodules.push_back(PathedObject{path, value});
  }

  const ObjectPredicate& predicate_;
  const bool with_path_;
  std::unordered_set<const Object*> seen_;
  std::vector<const Object*> stack_;      // modules being recursed into
  std::vector<const Object*> expanding_;  // containers being expanded
  std::vector<PathedObject> out_;
};

}  // namespace

std::vector<PathedObject> module_flatten(Object& root, const ObjectPredicate& predicate, bool with_path) {
  return Flattener(predicate, with_path).run(root);
}

std::vector<PathedObject> module_variables(Object& root, bool trainable_only) {
  return module_flatten(
      root,
      [trainable_only](const Object& o) {
        return o.kind() == ObjectKind::Variable && (!trainable_only || static_cast<const Variable&>(o).trainable());
      },
      false);
}

std::vector<PathedObject> module_submodules(Object& root) {
  return module_flatten(root, [](const Object& o) { return is_module_kind(o.kind()); }, false);
}

}  // namespace cairn
