// Versions, status and memory helpers of the C API.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "capi/internal/handles.h"
#include "runtime/core/version.h"

namespace cairn::capi {

namespace {
// Handed out when memory runs out while reporting an error; cairn_status_free ignores it.
cairn_status out_of_memory_status{CAIRN_RESOURCE_EXHAUSTED, "out of memory"};
}  // namespace

cairn_status* make_status(cairn_code code, std::string message) {
  try {
    return new cairn_status{code, std::move(message)};
  } catch (...) {
    return &out_of_memory_status;
  }
}

char* malloc_string(const std::string& bytes, const char* fn) {
  char* out = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (!out) raise(Code::ResourceExhausted, "{}: out of memory", fn);
  std::memcpy(out, bytes.data(), bytes.size());
  out[bytes.size()] = '\0';
  return out;
}

namespace {
// A status for `message`, prefixed "fn: " unless it names fn already (fn NULL: as is). Never
// throws: it runs inside a catch block, and without memory the answer is "out of memory".
cairn_status* named_status(cairn_code code, const char* fn, const char* lead, std::string_view text = {}) noexcept {
  try {
    std::string message = std::string(lead).append(text);
    if (!fn || message.find(fn) != std::string::npos) return new cairn_status{code, std::move(message)};
    return new cairn_status{code, std::string(fn) + ": " + message};
  } catch (...) {
    return &out_of_memory_status;
  }
}
}  // namespace

cairn_status* status_from_exception(const char* fn) {
  try {
    throw;
  } catch (const Error& e) {
    return named_status(static_cast<cairn_code>(e.code()), fn, "", e.message());
  } catch (const std::bad_alloc&) {
    return named_status(CAIRN_RESOURCE_EXHAUSTED, fn, "out of memory");
  } catch (const std::exception& e) {
    return named_status(CAIRN_INTERNAL, fn, "internal error: ", e.what());
  } catch (...) {
    return named_status(CAIRN_INTERNAL, fn, "internal error: unknown exception");
  }
}

void raise_user_status(cairn_status* st, std::string_view prefix) {
  const Code code = st->code == CAIRN_OK ? Code::Unknown : static_cast<Code>(st->code);
  std::string message = std::string(prefix) + st->message;
  cairn_status_free(st);
  throw Error(code, std::move(message));
}

}  // namespace cairn::capi

namespace {
#define CAIRN_STRINGIFY2(x) #x
#define CAIRN_STRINGIFY(x) CAIRN_STRINGIFY2(x)
constexpr const char kHeaderVersion[] = CAIRN_STRINGIFY(CAIRN_VERSION_MAJOR) "." CAIRN_STRINGIFY(
    CAIRN_VERSION_MINOR) "." CAIRN_STRINGIFY(CAIRN_VERSION_PATCH);
constexpr bool same_string(const char* a, const char* b) { return *a == *b && (*a == 0 || same_string(a + 1, b + 1)); }
// The runtime records its version in checkpoints; it must be the one the header announces.
static_assert(same_string(kHeaderVersion, cairn::kVersionString), "runtime/core/version.h disagrees with cairn.h");
static_assert(CAIRN_VERSION_MAJOR == CAIRN_ABI_VERSION, "the major version is the ABI version");
}  // namespace

extern "C" {

uint32_t cairn_abi_version(void) { return CAIRN_ABI_VERSION; }

const char* cairn_version(void) { return cairn::kVersionString; }

cairn_code cairn_status_code(const cairn_status* s) { return s ? s->code : CAIRN_OK; }

const char* cairn_status_message(const cairn_status* s) { return s ? s->message.c_str() : ""; }

void cairn_status_free(cairn_status* s) {
  if (s != &cairn::capi::out_of_memory_status) delete s;
}

cairn_status* cairn_status_create(cairn_code code, const char* message) {
  if (code == CAIRN_OK) return nullptr;
  if (code < CAIRN_CANCELLED || code > CAIRN_DATA_LOSS) code = CAIRN_UNKNOWN;
  return cairn::capi::make_status(code, message ? message : "");
}

void cairn_free(void* p) { std::free(p); }

size_t cairn_dtype_size(cairn_dtype dtype) { return cairn::dtype_size(static_cast<cairn::DType>(dtype)); }

const char* cairn_dtype_name(cairn_dtype dtype) { return cairn::dtype_name(static_cast<cairn::DType>(dtype)); }

}  // extern "C"
