// Device scopes and soft placement in the C API (cairn.h, "Device placement").
#include "capi/internal/handles.h"
#include "runtime/eager/device_scope.h"

using namespace cairn;
using cairn::capi::require;

extern "C" {

cairn_status* cairn_device_scope_enter(cairn_context* ctx, const char* device) {
  CAIRN_API_BEGIN
  require(ctx, __func__, "ctx");
  require(device, __func__, "device");
  DeviceScope::enter(*ctx->ctx, device);
  CAIRN_API_END
}

cairn_status* cairn_device_scope_exit(cairn_context* ctx) {
  CAIRN_API_BEGIN
  require(ctx, __func__, "ctx");
  DeviceScope::exit(*ctx->ctx, __func__);
  CAIRN_API_END
}

cairn_status* cairn_device_scope_current(const cairn_context* ctx, const char** name) {
  CAIRN_API_BEGIN
  require(name, __func__, "name");
  *name = nullptr;
  require(ctx, __func__, "ctx");
  if (Device* d = DeviceScope::current(*ctx->ctx)) *name = d->name().c_str();
  CAIRN_API_END
}

cairn_status* cairn_context_set_soft_placement(cairn_context* ctx, cairn_bool on) {
  CAIRN_API_BEGIN
  require(ctx, __func__, "ctx");
  if (on != CAIRN_FALSE && on != CAIRN_TRUE) raise(Code::InvalidArgument, "{}: on must be 0 or 1, got {}", __func__, on);
  ctx->ctx->set_soft_placement(on == CAIRN_TRUE);
  CAIRN_API_END
}

cairn_status* cairn_context_soft_placement(const cairn_context* ctx, cairn_bool* out) {
  CAIRN_API_BEGIN
  require(out, __func__, "out");
  require(ctx, __func__, "ctx");
  *out = ctx->ctx->soft_placement() ? CAIRN_TRUE : CAIRN_FALSE;
  CAIRN_API_END
}

cairn_status* cairn_context_auto_copies(const cairn_context* ctx, uint64_t* out) {
  CAIRN_API_BEGIN
  require(out, __func__, "out");
  require(ctx, __func__, "ctx");
  *out = ctx->ctx->auto_copies();
  CAIRN_API_END
}

}  // extern "C"
