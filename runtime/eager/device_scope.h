// Device scopes (tf.device): while a scope lives on a thread, that thread's ops without inputs and
// the variables it creates are placed on the scope's device; with soft placement on, ops with
// inputs run there too and their inputs are copied (counted: Context::auto_copies). See
// docs/placement.md.
//
// Scopes are per thread and per context: a scope on one thread never affects another thread, and
// a scope of one context never affects another context's ops. They nest; the innermost scope of a
// context wins.
#pragma once

#include <string_view>

#include "runtime/eager/context.h"

namespace cairn {

class DeviceScope {
 public:
  // Resolves `name` with ctx.device(name); an unknown name is NotFound, a missing backend
  // Unavailable, both naming "device scope".
  DeviceScope(Context& ctx, std::string_view name);
  // A scope on a device already resolved (slot variables follow their variable this way).
  DeviceScope(Context& ctx, Device& device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  // The device of the innermost scope of `ctx` on this thread, or null. Dispatch calls it for every
  // op without inputs: with no scope on the thread it is one thread-local pointer test.
  static Device* current(const Context& ctx) { return innermost_ ? find(ctx) : nullptr; }

  // Scopes without an owning C++ object (the C API's enter/exit pairs): `enter` pushes a scope
  // that holds a reference on `ctx`; `exit` removes the innermost scope of `ctx` that `enter`
  // pushed on this thread, FailedPrecondition naming `fn` when there is none. Scopes still
  // entered when their thread ends are removed then.
  static void enter(Context& ctx, std::string_view name);
  static void exit(Context& ctx, const char* fn);

  // A scope's link in this thread's list (innermost first). Public for the C API's owned scopes.
  struct Node {
    const Context* ctx;
    Device* device;
    Node* outer;
  };

 private:
  static Device* find(const Context& ctx);
  static void push(Node& node);
  static void unlink(Node& node);

  Node node_;
  static inline thread_local Node* innermost_ = nullptr;
};

// Where an op without inputs runs: the innermost scope's device, else the context's default.
inline Device& scoped_device(Context& ctx) {
  Device* d = DeviceScope::current(ctx);
  return d ? *d : ctx.default_device();
}

}  // namespace cairn
