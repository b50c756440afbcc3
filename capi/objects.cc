// Tracked objects, variables, lists, dicts, module queries and object arrays in the C API.
#include <cstring>

#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"

using namespace cairn;
using cairn::capi::require;

namespace cairn::capi {

Object& require_kind(const cairn_object* h, ObjectKind kind, const char* fn, const char* what) {
  require(h, fn, what);
  Object& o = *h->obj;
  if (o.kind() != kind)
    raise(Code::InvalidArgument, "{}: {} is a {}, expected a {}", fn, what, object_kind_name(o.kind()),
          object_kind_name(kind));
  return o;
}

}  // namespace cairn::capi

namespace {

using capi::new_object;
using capi::require_kind;

Variable& require_variable(const cairn_object* h, const char* fn) {
  return static_cast<Variable&>(require_kind(h, ObjectKind::Variable, fn, "var"));
}

List& require_list(const cairn_object* h, const char* fn) {
  return static_cast<List&>(require_kind(h, ObjectKind::List, fn, "list"));
}

// Modules and their subclasses (layers, later).
const Module* as_module(const cairn_object* h) { return h ? dynamic_cast<const Module*>(h->obj.get()) : nullptr; }

const Module& require_module(const cairn_object* h, const char* fn, const char* what) {
  require(h, fn, what);
  const Module* m = as_module(h);
  if (!m) raise(Code::InvalidArgument, "{}: {} is a {}, expected a module", fn, what, object_kind_name(h->obj->kind()));
  return *m;
}

const Tensor& require_tensor(const cairn_tensor* t, const char* fn, const char* what) {
  return require(t, fn, what)->t;
}

cairn_object_array* to_array(std::vector<PathedObject> found) {
  auto* a = new cairn_object_array;
  try {
    a->items.reserve(found.size());
    a->paths.reserve(found.size());
    for (PathedObject& p : found) {
      a->paths.push_back(join_path(p.path));
      a->items.push_back(cairn_object{std::move(p.object)});
    }
  } catch (...) {
    delete a;
    throw;
  }
  return a;
}

cairn_status* make_module(cairn_context* ctx, const char* name, const cairn_object* parent_scope, cairn_object** out,
                          const char* fn) {
  CAIRN_API_BEGIN
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const Module* parent = parent_scope ? &require_module(parent_scope, fn, "parent_scope") : nullptr;
  *out = new_object(Module::create(*ctx->ctx, name ? name : "module", parent, fn));
  CAIRN_API_END_AS(fn)
}

template <class Make>
cairn_status* make_object(cairn_context* ctx, cairn_object** out, const char* fn, Make make) {
  CAIRN_API_BEGIN
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  *out = new_object(make(*ctx->ctx));
  CAIRN_API_END_AS(fn)
}

using QueryFn = std::vector<PathedObject> (*)(Object&);

cairn_status* query(cairn_object* root, cairn_object_array** out, const char* fn, QueryFn run,
                    const char* root_name = "root") {
  CAIRN_API_BEGIN
  require(out, fn, "out");
  *out = nullptr;
  require(root, fn, root_name);
  *out = to_array(run(*root->obj));
  CAIRN_API_END_AS(fn)
}

}  // namespace

extern "C" {

// ---- constructors ----

cairn_status* cairn_trackable_create(cairn_context* ctx, cairn_object** out) {
  return make_object(ctx, out, "cairn_trackable_create", [](Context& c) { return Ref<Object>(Trackable::create(c)); });
}

cairn_status* cairn_module_create(cairn_context* ctx, const char* name, cairn_object** out) {
  return make_module(ctx, name, nullptr, out, "cairn_module_create");
}

cairn_status* cairn_module_create_in_scope(cairn_context* ctx, const char* name, const cairn_object* parent_scope,
                                           cairn_object** out) {
  return make_module(ctx, name, parent_scope, out, "cairn_module_create_in_scope");
}

cairn_status* cairn_list_create(cairn_context* ctx, cairn_object** out) {
  return make_object(ctx, out, "cairn_list_create", [](Context& c) { return Ref<Object>(List::create(c)); });
}

cairn_status* cairn_dict_create(cairn_context* ctx, cairn_object** out) {
  return make_object(ctx, out, "cairn_dict_create", [](Context& c) { return Ref<Object>(Dict::create(c)); });
}

cairn_status* cairn_variable_create(cairn_context* ctx, const cairn_tensor* initial, const cairn_variable_options* user_opts,
                                    cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_variable_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  const Tensor& init = require_tensor(initial, fn, "initial");
  // A symbolic tensor (an input or op result inside a function trace) has no value: the variable
  // could never be read.
  if (init.device() && init.device()->kind() == DeviceKind::Symbolic)
    raise(Code::InvalidArgument,
          "{}: initial is a symbolic {}{} tensor of a function trace, which has no value; create the variable "
          "outside the function, or from an eager tensor",
          fn, dtype_name(init.dtype()), init.shape().str());
  const cairn_variable_options opts = capi::read_options(user_opts, fn);
  VariableOptions o;
  if (opts.name) o.name = opts.name;
  if (opts.trainable != CAIRN_FALSE && opts.trainable != CAIRN_TRUE)
    raise(Code::InvalidArgument, "{}: trainable must be 0 or 1, got {}", fn, opts.trainable);
  o.trainable = opts.trainable == CAIRN_TRUE;
  if (opts.scope) o.scope = &require_module(opts.scope, fn, "scope");
  *out = new_object(Variable::create(*ctx->ctx, init, o, fn));
  CAIRN_API_END
}

// ---- variables ----

cairn_status* cairn_variable_read(cairn_object* var, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_variable_read";
  require(out, fn, "out");
  *out = nullptr;
  *out = capi::new_tensor(require_variable(var, fn).read());
  CAIRN_API_END
}

cairn_status* cairn_variable_assign(cairn_object* var, const cairn_tensor* value) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_variable_assign";
  Variable& v = require_variable(var, fn);
  v.assign(require_tensor(value, fn, "value"), fn);
  CAIRN_API_END
}

cairn_status* cairn_variable_assign_add(cairn_object* var, const cairn_tensor* delta) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_variable_assign_add";
  Variable& v = require_variable(var, fn);
  v.assign_add(require_tensor(delta, fn, "delta"), fn);
  CAIRN_API_END
}

cairn_status* cairn_variable_assign_sub(cairn_object* var, const cairn_tensor* delta) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_variable_assign_sub";
  Variable& v = require_variable(var, fn);
  v.assign_sub(require_tensor(delta, fn, "delta"), fn);
  CAIRN_API_END
}

const char* cairn_variable_name(const cairn_object* var) {
  if (!var || var->obj->kind() != ObjectKind::Variable) return nullptr;
  return static_cast<const Variable&>(*var->obj).name().c_str();
}

cairn_bool cairn_variable_trainable(const cairn_object* var) {
  if (!var || var->obj->kind() != ObjectKind::Variable) return CAIRN_FALSE;
  return static_cast<const Variable&>(*var->obj).trainable() ? CAIRN_TRUE : CAIRN_FALSE;
}

cairn_dtype cairn_variable_dtype(const cairn_object* var) {
  if (!var || var->obj->kind() != ObjectKind::Variable) return CAIRN_INVALID_DTYPE;
  return static_cast<cairn_dtype>(static_cast<const Variable&>(*var->obj).dtype());
}

// ---- modules ----

const char* cairn_module_name(const cairn_object* module) {
  const Module* m = as_module(module);
  return m ? m->name().c_str() : nullptr;
}

const char* cairn_module_scope(const cairn_object* module) {
  const Module* m = as_module(module);
  return m ? m->scope().c_str() : nullptr;
}

// ---- lists ----

cairn_status* cairn_list_append(cairn_object* list, cairn_object* item) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_list_append";
  List& l = require_list(list, fn);
  require(item, fn, "item");
  l.append(item->obj, fn);
  CAIRN_API_END
}

size_t cairn_list_size(const cairn_object* list) {
  if (!list || list->obj->kind() != ObjectKind::List) return 0;
  return static_cast<const List&>(*list->obj).size();
}

cairn_status* cairn_list_get(cairn_object* list, size_t index, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_list_get";
  require(out, fn, "out");
  *out = nullptr;
  *out = new_object(require_list(list, fn).at(index, fn));
  CAIRN_API_END
}

cairn_status* cairn_list_set(cairn_object* list, size_t index, cairn_object* item) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_list_set";
  List& l = require_list(list, fn);
  require(item, fn, "item");
  l.set_at(index, item->obj, fn);
  CAIRN_API_END
}

// ---- generic edges ----

cairn_status* cairn_object_set(cairn_object* parent, const char* name, cairn_object* child) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_set";
  require(parent, fn, "parent");
  require(name, fn, "name");
  require(child, fn, "child");
  parent->obj->set(name, child->obj, fn);
  CAIRN_API_END
}

cairn_status* cairn_object_set_untracked(cairn_object* parent, const char* name, cairn_object* child) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_set_untracked";
  require(parent, fn, "parent");
  require(name, fn, "name");
  require(child, fn, "child");
  parent->obj->set_untracked(name, child->obj, fn);
  CAIRN_API_END
}

cairn_status* cairn_object_get(cairn_object* parent, const char* name, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_get";
  require(out, fn, "out");
  *out = nullptr;
  require(parent, fn, "parent");
  require(name, fn, "name");
  *out = new_object(parent->obj->get(name, fn));
  CAIRN_API_END
}

cairn_status* cairn_object_delete(cairn_object* parent, const char* name) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_delete";
  require(parent, fn, "parent");
  require(name, fn, "name");
  parent->obj->remove(name, fn);
  CAIRN_API_END
}

cairn_object_kind cairn_object_kind_of(const cairn_object* obj) {
  return obj ? static_cast<cairn_object_kind>(obj->obj->kind()) : CAIRN_OBJECT_INVALID;
}

cairn_bool cairn_object_same(const cairn_object* a, const cairn_object* b) {
  return a && b && a->obj.get() == b->obj.get() ? CAIRN_TRUE : CAIRN_FALSE;
}

size_t cairn_object_child_count(const cairn_object* obj) { return obj ? obj->obj->num_children() : 0; }

cairn_status* cairn_object_share(const cairn_object* obj, cairn_object** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_share";
  require(out, fn, "out");
  *out = nullptr;
  require(obj, fn, "obj");
  *out = new_object(obj->obj);
  CAIRN_API_END
}

void cairn_object_free(cairn_object* obj) { delete obj; }

// ---- queries and arrays ----

cairn_status* cairn_object_children(cairn_object* obj, cairn_object_array** out) {
  return query(obj, out, "cairn_object_children", [](Object& o) {
    std::vector<PathedObject> found;
    for (Edge& e : o.children()) found.push_back(PathedObject{{std::move(e.name)}, std::move(e.child)});
    return found;
  }, "obj");
}

cairn_status* cairn_object_variables(cairn_object* root, int trainable_only, cairn_object_array** out) {
  if (trainable_only)
    return query(root, out, "cairn_object_variables", [](Object& o) { return module_variables(o, true); });
  return query(root, out, "cairn_object_variables", [](Object& o) { return module_variables(o, false); });
}

cairn_status* cairn_object_submodules(cairn_object* root, cairn_object_array** out) {
  return query(root, out, "cairn_object_submodules", [](Object& o) { return module_submodules(o); });
}

cairn_status* cairn_object_flatten(cairn_object* root, cairn_object_array** out) {
  return query(root, out, "cairn_object_flatten",
               [](Object& o) { return module_flatten(o, [](const Object&) { return true; }, true); });
}

cairn_status* cairn_object_walk(cairn_object* root, cairn_object_array** out) {
  return query(root, out, "cairn_object_walk", [](Object& o) { return breadth_first(o); });
}

size_t cairn_object_array_size(const cairn_object_array* a) { return a ? a->items.size() : 0; }

cairn_object* cairn_object_array_get(const cairn_object_array* a, size_t i) {
  if (!a || i >= a->items.size()) return nullptr;
  return const_cast<cairn_object*>(&a->items[i]);
}

const char* cairn_object_array_path(const cairn_object_array* a, size_t i) {
  if (!a || i >= a->paths.size()) return nullptr;
  return a->paths[i].c_str();
}

void cairn_object_array_free(cairn_object_array* a) { delete a; }

}  // extern "C"
