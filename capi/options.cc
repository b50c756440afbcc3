// cairn_X_init for every versioned struct: the header's defaults for languages that cannot expand
// the CAIRN_X_INIT macros. The struct list and the struct_size rule live in internal/options.h.
#include "capi/internal/handles.h"
#include "capi/internal/options.h"

extern "C" {

#define CAIRN_DEFINE_INIT(T, INIT)                              \
  cairn_status* T##_init(T* opts, uint32_t struct_size) {       \
    CAIRN_API_BEGIN                                             \
    cairn::capi::init_struct(opts, struct_size, #T "_init");    \
    CAIRN_API_END                                               \
  }
CAIRN_VERSIONED_STRUCTS(CAIRN_DEFINE_INIT)
#undef CAIRN_DEFINE_INIT

}  // extern "C"
