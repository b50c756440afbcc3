// Versions, status and memory helpers of the C API.
#include <cstdlib>
#include <cstring>

#include "capi/internal/handles.h"
#include "runtime/core/version.h"

namespace cairn::capi {

cairn_status* make_status(cairn_code code, std::string message) {
  try {
    return new cairn_status{code, std::move(message)};
  } catch (...) {
    // Out of memory while reporting an error: a static status would be freed by the caller, so
    // fall back to a minimal allocation that cannot throw.
    void* p = std::malloc(sizeof(cairn_status));
    if (!p) std::abort();
    return new (p) cairn_status{CAIRN_RESOURCE_EXHAUSTED, std::string()};
  }
}

char* malloc_string(const std::string& bytes, const char* fn) {
  char* out = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (!out) raise(Code::ResourceExhausted, "{}: out of memory", fn);
  std::memcpy(out, bytes.data(), bytes.size());
  out[bytes.size()] = '\0';
  return out;
}

cairn_status* status_from_exception() {
  try {
    throw;
  } catch (const Error& e) {
    return make_status(static_cast<cairn_code>(e.code()), e.message());
  } catch (const std::bad_alloc&) {
    return make_status(CAIRN_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return make_status(CAIRN_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return make_status(CAIRN_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace cairn::capi

extern "C" {

uint32_t cairn_abi_version(void) { return CAIRN_ABI_VERSION; }

const char* cairn_version(void) { return cairn::kVersionString; }

cairn_code cairn_status_code(const cairn_status* s) { return s ? s->code : CAIRN_OK; }

const char* cairn_status_message(const cairn_status* s) { return s ? s->message.c_str() : ""; }

void cairn_status_free(cairn_status* s) { delete s; }

cairn_status* cairn_status_create(cairn_code code, const char* message) {
  if (code == CAIRN_OK) return nullptr;
  if (code < CAIRN_CANCELLED || code > CAIRN_DATA_LOSS) code = CAIRN_UNKNOWN;
  return cairn::capi::make_status(code, message ? message : "");
}

void cairn_free(void* p) { std::free(p); }

size_t cairn_dtype_size(cairn_dtype dtype) { return cairn::dtype_size(static_cast<cairn::DType>(dtype)); }

const char* cairn_dtype_name(cairn_dtype dtype) { return cairn::dtype_name(static_cast<cairn::DType>(dtype)); }

}  // extern "C"
