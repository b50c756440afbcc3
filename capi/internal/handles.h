// The structs behind the C API's opaque handles, and the begin/end macros that wrap every entry
// point so no C++ exception crosses the boundary.
#pragma once

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "cairn/cairn.h"
#include "runtime/core/error.h"
#include "runtime/eager/context.h"
#include "runtime/tensor/tensor.h"

struct cairn_status {
  cairn_code code;
  std::string message;
};

struct cairn_context {
  cairn::Ref<cairn::Context> ctx;
};

struct cairn_tensor {
  cairn::Tensor t;
};

namespace cairn::capi {

cairn_status* make_status(cairn_code code, std::string message);
cairn_status* status_from_exception();  // call only inside a catch block

// Throws InvalidArgument "<fn>: <what> is NULL" when p is NULL.
template <class T>
T* require(T* p, const char* fn, const char* what) {
  if (p == nullptr) raise(Code::InvalidArgument, "{}: {} is NULL", fn, what);
  return p;
}

// The bits of a C enum field (cairn_dtype, cairn_attr_kind, ...) the caller filled in: C may store
// any int there, and loading one that is no enumerator as the enum type is undefined in C++
// (UBSan traps), so entry points read the int and check it before converting.
template <class E>
int32_t enum_bits(const E& field) {
  static_assert(sizeof(E) == sizeof(int32_t), "C API enums are 32 bits wide (their _FORCE32 sentinel)");
  int32_t v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// cairn_context_options (NULL: defaults) as the runtime's options; errors name `fn`. Shared by
// cairn_context_create and cairn_context_create_vulkan.
ContextOptions context_options(const cairn_context_options* opts, const char* fn);

// `bytes` in a new malloc'd buffer with a NUL after them, for the caller to free with cairn_free.
// Throws ResourceExhausted naming `fn` when out of memory.
char* malloc_string(const std::string& bytes, const char* fn);

// New handle owning `t`; the caller hands it to the user.
inline cairn_tensor* new_tensor(Tensor t) { return new cairn_tensor{std::move(t)}; }

}  // namespace cairn::capi

// Every fallible entry point: CAIRN_API_BEGIN ... CAIRN_API_END. Inside, throw cairn::Error (via
// cairn::raise) for failures; the macros turn it and every other exception into a cairn_status.
#define CAIRN_API_BEGIN try {
#define CAIRN_API_END                                  \
  }                                                    \
  catch (...) {                                        \
    return ::cairn::capi::status_from_exception();     \
  }                                                    \
  return nullptr;
