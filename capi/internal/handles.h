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

  // Every eager op makes a handle and its caller frees it: handles come from a per-thread free
  // list (runtime/core/free_list.h) rather than malloc and free, ~150 of an op's instructions
  // (bench/callgrind_dispatch.sh). Defined in context.cc.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size) noexcept;
};

namespace cairn::capi {

// A string handed to callers that stays valid for the process's life (device names and the
// like): one copy of each distinct value, never freed.
const char* interned(const std::string& value);


cairn_status* make_status(cairn_code code, std::string message);
// The exception being handled as a status (call only inside a catch block). `fn`, the C
// function, prefixes the message ("fn: ...") unless the message names it already; NULL: as is.
cairn_status* status_from_exception(const char* fn);
// Frees `st`, a status a caller's callback returned, and throws it as an Error with the same code
// (UNKNOWN for a status that claims OK), its message after `prefix`.
[[noreturn]] void raise_user_status(cairn_status* st, std::string_view prefix = {});

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
inline cairn_tensor* new_tensor(Tensor&& t) { return new cairn_tensor{std::move(t)}; }
inline cairn_tensor* new_tensor(const Tensor& t) { return new cairn_tensor{t}; }

}  // namespace cairn::capi

// Every fallible entry point: CAIRN_API_BEGIN ... CAIRN_API_END. Inside, throw cairn::Error (via
// cairn::raise) for failures; the macros turn it and every other exception into a cairn_status
// whose message names the C function (cairn.h's conventions): the runtime's own message, such as
// "decay_steps must be > 0", comes back as "cairn_schedule_exponential_decay: decay_steps ...".
#define CAIRN_API_BEGIN try {
#define CAIRN_API_END CAIRN_API_END_AS(__func__)

// CAIRN_API_END in a helper that serves several entry points: `fn` is the one being served.
#define CAIRN_API_END_AS(fn)                                   \
  }                                                            \
  catch (...) {                                                \
    return ::cairn::capi::status_from_exception(fn);           \
  }                                                            \
  return nullptr;

// CAIRN_API_END for the entry points whose messages name what the caller asked to run, not the C
// function: an op ("MatMul: ..."), a compiled function ("function 'f': ...") or the caller's own
// callback, as the header documents for them.
#define CAIRN_API_END_NAMED_BY_MESSAGE CAIRN_API_END_AS(nullptr)
