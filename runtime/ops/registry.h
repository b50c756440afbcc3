// The process-wide op registry. Schemas register with CAIRN_REGISTER_OP, kernels with
// CAIRN_REGISTER_KERNEL, both from static initializers; link their libraries with alwayslink.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ops/op_def.h"

namespace cairn {

class OpRegistry {
 public:
  static OpRegistry& global();

  // The schema for `name` (aliases included), or nullptr.
  const OpDef* find(std::string_view name) const;
  // Like find, but throws NotFound "unknown op 'X'" when missing.
  const OpDef& get(std::string_view name) const;
  // All schemas, sorted by name (aliases not repeated).
  std::vector<const OpDef*> list() const;
  // The registry as JSON: [{"name","summary","inputs":[{name,type_attr|dtype,variadic,number_attr}],
  // "outputs":[...],"attrs":[{name,kind,default?,allowed_dtypes?,allowed_values?,inferred}]}].
  std::string to_json() const;

  void add(OpDef def);
  void add_alias(const std::string& alias, const std::string& target);
  void add_kernel(const std::string& op, DeviceKind device, KernelFn fn);
  void set_gradient(const std::string& op, GradientFn fn);
  void set_not_differentiable(const std::string& op);

 private:
  OpRegistry() = default;
  // Applies `fn` to the schema of `op` now, or when it registers (static initializers of different
  // libraries run in any order).
  void update(const std::string& op, std::function<void(OpDef&)> fn);
  struct Impl;
  Impl& impl() const;
};

// Fluent schema builder. Example:
//   CAIRN_REGISTER_OP(OpBuilder("Add").input("x", "T").input("y", "T").output("z", "T")
//                         .type_attr("T", dtypes::kNumber).shape(shapes::broadcast));
class OpBuilder {
 public:
  explicit OpBuilder(std::string name);
  OpBuilder& summary(std::string text);
  OpBuilder& input(std::string name, std::string type_attr);
  OpBuilder& input(std::string name, DType fixed);
  OpBuilder& variadic_input(std::string name, std::string type_attr);
  OpBuilder& output(std::string name, std::string type_attr);
  OpBuilder& output(std::string name, DType fixed);
  OpBuilder& variadic_output(std::string name, std::string type_attr, std::string number_attr);
  // A dtype attribute inferred from the inputs that use it.
  OpBuilder& type_attr(std::string name, DTypeSet allowed);
  // A dtype attribute the caller sets (e.g. Cast's DstT); with a default unless `required`.
  OpBuilder& dtype_attr(std::string name, DTypeSet allowed, DType default_value);
  OpBuilder& dtype_attr_required(std::string name, DTypeSet allowed);
  OpBuilder& int_attr(std::string name, int64_t default_value, int64_t min_value = INT64_MIN);
  OpBuilder& int_attr_required(std::string name, int64_t min_value = INT64_MIN);
  OpBuilder& bool_attr(std::string name, bool default_value);
  OpBuilder& float_attr(std::string name, double default_value);
  OpBuilder& float_attr_required(std::string name);
  OpBuilder& ints_attr(std::string name, std::vector<int64_t> default_value);
  OpBuilder& ints_attr_required(std::string name);
  OpBuilder& floats_attr(std::string name, std::vector<double> default_value);
  OpBuilder& string_attr(std::string name, std::string default_value, std::vector<std::string> allowed = {});
  OpBuilder& string_attr_required(std::string name, std::vector<std::string> allowed = {});
  OpBuilder& shape(ShapeFn fn);
  OpBuilder& dynamic_output_shape();
  OpBuilder& random();
  OpBuilder& stateful();
  OpBuilder& alias(std::string name);

  OpDef def;
  std::vector<std::string> aliases;

 private:
  AttrDef& add_attr(std::string name, AttrKind kind);
};

struct OpRegistration {
  OpRegistration(OpBuilder builder);
};
struct KernelRegistration {
  KernelRegistration(const char* op, DeviceKind device, KernelFn fn);
};

#define CAIRN_CONCAT_INNER(a, b) a##b
#define CAIRN_CONCAT(a, b) CAIRN_CONCAT_INNER(a, b)
#define CAIRN_REGISTER_OP(builder) \
  static const ::cairn::OpRegistration CAIRN_CONCAT(cairn_op_registration_, __COUNTER__)(builder)
#define CAIRN_REGISTER_KERNEL(op, device, fn) \
  static const ::cairn::KernelRegistration CAIRN_CONCAT(cairn_kernel_registration_, __COUNTER__)(op, device, fn)

}  // namespace cairn
