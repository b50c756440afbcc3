#include "runtime/eager/device_scope.h"

#include <memory>
#include <vector>

#include "runtime/core/error.h"

namespace cairn {

namespace {

Device& resolve(Context& ctx, std::string_view name) {
  try {
    return ctx.device(name);
  } catch (const Error& e) {
    raise(e.code(), "device scope: {}", e.message());
  }
}

// A scope entered through DeviceScope::enter: it keeps its context alive until exited, so its
// device stays valid and its context pointer is never reused by another context meanwhile.
struct OwnedScope {
  DeviceScope::Node node;
  Ref<Context> ctx;
};

// This thread's owned scopes, in entry order. Destroyed (scopes unlinked) when the thread ends.
struct OwnedScopes {
  std::vector<std::unique_ptr<OwnedScope>> scopes;
  ~OwnedScopes();
};

}  // namespace

DeviceScope::DeviceScope(Context& ctx, std::string_view name) : node_{&ctx, &resolve(ctx, name), nullptr} {
  push(node_);
}

DeviceScope::DeviceScope(Context& ctx, Device& device) : node_{&ctx, &device, nullptr} { push(node_); }

DeviceScope::~DeviceScope() { unlink(node_); }

Device* DeviceScope::find(const Context& ctx) {
  for (Node* n = innermost_; n; n = n->outer)
    if (n->ctx == &ctx) return n->device;
  return nullptr;
}

void DeviceScope::push(Node& node) {
  node.outer = innermost_;
  innermost_ = &node;
}

// Scopes of one context nest strictly, but scopes of different contexts (or a C scope left open
// inside a C++ one) may end out of order, so a node is unlinked wherever it is.
void DeviceScope::unlink(Node& node) {
  for (Node** p = &innermost_; *p; p = &(*p)->outer) {
    if (*p == &node) {
      *p = node.outer;
      return;
    }
  }
}

namespace {
OwnedScopes& owned_scopes() {
  static thread_local OwnedScopes owned;
  return owned;
}
}  // namespace

void DeviceScope::enter(Context& ctx, std::string_view name) {
  Device& device = resolve(ctx, name);
  auto scope = std::make_unique<OwnedScope>(OwnedScope{{&ctx, &device, nullptr}, Ref<Context>::share(&ctx)});
  OwnedScopes& owned = owned_scopes();
  owned.scopes.reserve(owned.scopes.size() + 1);  // may throw; nothing is pushed yet
  push(scope->node);
  owned.scopes.push_back(std::move(scope));
}

void DeviceScope::exit(Context& ctx, const char* fn) {
  auto& scopes = owned_scopes().scopes;
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    if ((*it)->node.ctx != &ctx) continue;
    unlink((*it)->node);
    scopes.erase(std::next(it).base());
    return;
  }
  raise(Code::FailedPrecondition,
        "{}: no device scope of this context is open on this thread (each exit must follow an enter on the same "
        "thread)",
        fn);
}

OwnedScopes::~OwnedScopes() {
  while (!scopes.empty()) {
    DeviceScope::exit(*scopes.back()->ctx, "thread exit");
  }
}

}  // namespace cairn
