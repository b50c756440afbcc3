// Trackable (TensorFlow's AutoTrackable: attributes become named edges) and Module (a trackable
// with a name scope, tf.Module).
#pragma once

#include <string>
#include <string_view>

#include "runtime/track/object.h"

namespace cairn {

class Trackable : public Object {
 public:
  static Ref<Trackable> create(Context& ctx);
  explicit Trackable(Context& ctx) : Trackable(ObjectKind::Trackable, ctx) {}

  std::vector<Edge> children() const override;
  size_t num_children() const override;
  Ref<Object> get_child(std::string_view name) const override;

  Ref<Object> get(std::string_view name, std::string_view fn = "Trackable::get") const override;
  void set(std::string_view name, Ref<Object> child, std::string_view fn = "Trackable::set") override;
  void set_untracked(std::string_view name, Ref<Object> child,
                     std::string_view fn = "Trackable::set_untracked") override;
  void remove(std::string_view name, std::string_view fn = "Trackable::remove") override;

  // A snapshot of the untracked references in the order they were set.
  std::vector<Edge> untracked() const;

 protected:
  // For subclasses of other kinds (modules, later optimizers and layers).
  Trackable(ObjectKind kind, Context& ctx) : Object(kind, ctx) {}

 private:
  NamedEdges tracked_;
  NamedEdges untracked_;
};

class Module : public Trackable {
 public:
  // `parent_scope` (optional) nests the name scope: a module "m2" created in the scope of "m1"
  // has scope "m1/m2", so its variables are named "m1/m2/<name>:0".
  static Ref<Module> create(Context& ctx, std::string_view name = "module", const Module* parent_scope = nullptr,
                            std::string_view fn = "Module::create");
  Module(Context& ctx, std::string_view name, const Module* parent_scope, std::string_view fn);

  const std::string& name() const { return name_; }        // "m2"
  const std::string& scope() const { return scope_; }      // "m1/m2"
  std::string describe() const override;

 protected:
  // For module kinds other than ObjectKind::Module (layers).
  Module(ObjectKind kind, Context& ctx, std::string_view name, const Module* parent_scope, std::string_view fn);

 private:
  std::string name_;
  std::string scope_;
};

}  // namespace cairn
