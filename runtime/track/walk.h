// Walks over the object graph.
//
// breadth_first: the checkpoint order. Tracked edges in their order, breadth-first from the root;
// each object once, with the first path that reaches it. Cycles end the walk on that branch.
//
// module_*: tf.Module's queries (module.py, _flatten_module), over tracked edges only:
//  - an object's attributes are its tracked edges sorted by name (a list root: index order);
//  - an attribute holding a list or dict is expanded the way tf.nest flattens it (lists in index
//    order, dicts in sorted key order, nested containers recursively); containers themselves are
//    never results;
//  - each object's direct leaves come first, then the walk recurses into the modules among them
//    (modules and layers only: a plain trackable is a leaf whose edges are not followed);
//  - without paths every object is reported once (the first time it is met; the root never);
//  - with paths every path to an object is reported, and a module already on the recursion stack
//    (a cycle) has its direct leaves reported but is not recursed into again.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "runtime/track/object.h"
#include "runtime/track/variable.h"

namespace cairn {

struct PathedObject {
  std::vector<std::string> path;  // edge names from the root; empty for the root itself
  Ref<Object> object;
};

// "a/b/c"; "" for the root. Tracked edge names cannot hold '/', so this is unambiguous.
std::string join_path(const std::vector<std::string>& path);

// Every object reachable from `root` (root first) in checkpoint order with its first path.
// With `edges`, also the tracked edges each object had when the walk read them (edges[i] belongs
// to result i), so a caller needs no second, possibly different, snapshot.
std::vector<PathedObject> breadth_first(Object& root, std::vector<std::vector<Edge>>* edges = nullptr);

using ObjectPredicate = std::function<bool(const Object&)>;

// tf.Module._flatten(predicate, with_path). Without `with_path` each result's path is the one it
// was first found by.
std::vector<PathedObject> module_flatten(Object& root, const ObjectPredicate& predicate, bool with_path);

// tf.Module.variables / trainable_variables: own variables sorted by attribute name first, then
// those of submodules, depth-first; no duplicates.
std::vector<PathedObject> module_variables(Object& root, bool trainable_only);
// tf.Module.submodules: every module reachable from `root` (root excluded), no duplicates.
std::vector<PathedObject> module_submodules(Object& root);

}  // namespace cairn
