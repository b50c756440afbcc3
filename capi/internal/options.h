// The one struct_size rule of the C API, as cairn.h's preamble states it:
//  - struct_size is the size of the struct in the header the caller was compiled with;
//  - a library accepts the size of every released version of a struct up to its own, reads the
//    fields that size covers and gives later fields their defaults (the header's _INIT values);
//  - any other size, including a larger one from a newer header, is INVALID_ARGUMENT.
// Every options struct is read through read_options, every struct the library fills through
// write_struct, and every cairn_X_init through init_struct, so the rule exists once.
#pragma once

#include <cstddef>
#include <cstring>

#include "cairn/cairn.h"
#include "runtime/core/error.h"

namespace cairn::capi {

// Every versioned struct of the header with its _INIT macro. A later release that appends
// fields to a struct adds the size of the previous version to released_before below.
#define CAIRN_VERSIONED_STRUCTS(X)                                            \
  X(cairn_context_options, CAIRN_CONTEXT_OPTIONS_INIT)                        \
  X(cairn_variable_options, CAIRN_VARIABLE_OPTIONS_INIT)                      \
  X(cairn_checkpoint_options, CAIRN_CHECKPOINT_OPTIONS_INIT)                  \
  X(cairn_checkpoint_manager_options, CAIRN_CHECKPOINT_MANAGER_OPTIONS_INIT)  \
  X(cairn_tape_options, CAIRN_TAPE_OPTIONS_INIT)                              \
  X(cairn_optimizer_options, CAIRN_OPTIMIZER_OPTIONS_INIT)                    \
  X(cairn_exponential_decay_options, CAIRN_EXPONENTIAL_DECAY_OPTIONS_INIT)    \
  X(cairn_cosine_decay_options, CAIRN_COSINE_DECAY_OPTIONS_INIT)              \
  X(cairn_dense_options, CAIRN_DENSE_OPTIONS_INIT)                            \
  X(cairn_conv2d_options, CAIRN_CONV2D_OPTIONS_INIT)                          \
  X(cairn_pool2d_options, CAIRN_POOL2D_OPTIONS_INIT)                          \
  X(cairn_flatten_options, CAIRN_FLATTEN_OPTIONS_INIT)                        \
  X(cairn_embedding_options, CAIRN_EMBEDDING_OPTIONS_INIT)                    \
  X(cairn_norm_options, CAIRN_NORM_OPTIONS_INIT)                              \
  X(cairn_dropout_options, CAIRN_DROPOUT_OPTIONS_INIT)                        \
  X(cairn_activation_options, CAIRN_ACTIVATION_OPTIONS_INIT)                  \
  X(cairn_sequential_options, CAIRN_SEQUENTIAL_OPTIONS_INIT)                  \
  X(cairn_function_options, CAIRN_FUNCTION_OPTIONS_INIT)                      \
  X(cairn_tensor_spec, CAIRN_TENSOR_SPEC_INIT)                                \
  X(cairn_vulkan_device_info, CAIRN_VULKAN_DEVICE_INFO_INIT)                  \
  X(cairn_vulkan_options, CAIRN_VULKAN_OPTIONS_INIT)                          \
  X(cairn_record_writer_options, CAIRN_RECORD_WRITER_OPTIONS_INIT)            \
  X(cairn_record_reader_options, CAIRN_RECORD_READER_OPTIONS_INIT)            \
  X(cairn_feature_spec, CAIRN_FEATURE_SPEC_INIT)                              \
  X(cairn_feature_values, CAIRN_FEATURE_VALUES_INIT)                          \
  X(cairn_summary_writer_options, CAIRN_SUMMARY_WRITER_OPTIONS_INIT)          \
  X(cairn_profiler_options, CAIRN_PROFILER_OPTIONS_INIT)                      \
  X(cairn_csv_options, CAIRN_CSV_OPTIONS_INIT)                                \
  X(cairn_tfrecord_options, CAIRN_TFRECORD_OPTIONS_INIT)                      \
  X(cairn_map_options, CAIRN_MAP_OPTIONS_INIT)                                \
  X(cairn_filter_options, CAIRN_FILTER_OPTIONS_INIT)                          \
  X(cairn_interleave_options, CAIRN_INTERLEAVE_OPTIONS_INIT)                  \
  X(cairn_export_options, CAIRN_EXPORT_OPTIONS_INIT)                          \
  X(cairn_weights_options, CAIRN_WEIGHTS_OPTIONS_INIT)                        \
  X(cairn_model_options, CAIRN_MODEL_OPTIONS_INIT)                            \
  X(cairn_compile_options, CAIRN_COMPILE_OPTIONS_INIT)                        \
  X(cairn_model_data, CAIRN_MODEL_DATA_INIT)                                  \
  X(cairn_fit_options, CAIRN_FIT_OPTIONS_INIT)                                \
  X(cairn_evaluate_options, CAIRN_EVALUATE_OPTIONS_INIT)                      \
  X(cairn_predict_options, CAIRN_PREDICT_OPTIONS_INIT)                        \
  X(cairn_callback_hooks, CAIRN_CALLBACK_HOOKS_INIT)                          \
  X(cairn_model_checkpoint_options, CAIRN_MODEL_CHECKPOINT_OPTIONS_INIT)      \
  X(cairn_tensorboard_options, CAIRN_TENSORBOARD_OPTIONS_INIT)                \
  X(cairn_early_stopping_options, CAIRN_EARLY_STOPPING_OPTIONS_INIT)          \
  X(cairn_reduce_lr_options, CAIRN_REDUCE_LR_OPTIONS_INIT)                    \
  X(cairn_csv_logger_options, CAIRN_CSV_LOGGER_OPTIONS_INIT)                  \
  X(cairn_backup_options, CAIRN_BACKUP_OPTIONS_INIT)                          \
  X(cairn_physical_device_info, CAIRN_PHYSICAL_DEVICE_INFO_INIT)              \
  X(cairn_memory_heap, CAIRN_MEMORY_HEAP_INIT)                                \
  X(cairn_logical_device_config, CAIRN_LOGICAL_DEVICE_CONFIG_INIT)            \
  X(cairn_logical_device_info, CAIRN_LOGICAL_DEVICE_INFO_INIT)                \
  X(cairn_memory_info, CAIRN_MEMORY_INFO_INIT)                                \
  X(cairn_mirrored_options, CAIRN_MIRRORED_OPTIONS_INIT)                      \
  X(cairn_multi_worker_options, CAIRN_MULTI_WORKER_OPTIONS_INIT)

// The name and the defaults of each struct. The defaults live in static storage, so their
// padding bytes are zero and cairn_X_init gives the same bytes as a static `T x = CAIRN_X_INIT`.
template <class T>
struct StructInfo;
#define CAIRN_STRUCT_INFO(T, INIT)                 \
  template <>                                      \
  struct StructInfo<T> {                           \
    static constexpr const char* name = #T;        \
    static const T& defaults() {                   \
      static const T d = INIT;                     \
      return d;                                    \
    }                                              \
  };
CAIRN_VERSIONED_STRUCTS(CAIRN_STRUCT_INFO)
#undef CAIRN_STRUCT_INFO

// Sizes of versions older than this header's that are still accepted. Before 1.0 two structs
// grew; binaries built then pass these sizes. Nothing is listed for a struct that never grew.
template <class T>
constexpr bool released_before(size_t) {
  return false;
}
template <>
constexpr bool released_before<cairn_context_options>(size_t size) {
  return size == offsetof(cairn_context_options, log_release);
}
template <>
constexpr bool released_before<cairn_function_options>(size_t size) {
  return size == offsetof(cairn_function_options, static_inputs);
}

// Throws InvalidArgument naming `fn` and the struct unless `size` is a released size of T.
template <class T>
void check_struct_size(uint32_t size, const char* fn) {
  if (size == sizeof(T) || released_before<T>(size)) return;
  raise(Code::InvalidArgument,
        "{}: {}.struct_size is {}, not a size of that struct this library knows (its own is {}; a larger "
        "size means the program was compiled against a newer cairn.h than this library)",
        fn, StructInfo<T>::name, size, sizeof(T));
}

// The caller's struct as this library's version of it: the fields its struct_size covers, and
// the header's defaults for the rest (for every field when `user` is NULL).
template <class T>
T read_options(const T* user, const char* fn) {
  T out = StructInfo<T>::defaults();
  if (!user) return out;
  check_struct_size<T>(user->struct_size, fn);
  std::memcpy(static_cast<void*>(&out), user, user->struct_size);
  out.struct_size = sizeof(T);
  return out;
}

// The first element of an array of growable structs gives the stride of all of them.
template <class T>
T read_array_element(const T* array, size_t index, const char* fn) {
  const uint32_t stride = array[0].struct_size;
  check_struct_size<T>(stride, fn);
  const T* element = reinterpret_cast<const T*>(reinterpret_cast<const unsigned char*>(array) + index * stride);
  if (element->struct_size != stride)
    raise(Code::InvalidArgument, "{}: {}[{}].struct_size is {} but element 0's is {}; all must be equal", fn,
          StructInfo<T>::name, index, element->struct_size, stride);
  return read_options(element, fn);
}

// Writes `value` into a struct the caller owns, as far as the caller's struct_size reaches.
template <class T>
void write_struct(T* dst, T value, const char* fn) {
  check_struct_size<T>(dst->struct_size, fn);
  value.struct_size = dst->struct_size;
  std::memcpy(static_cast<void*>(dst), &value, dst->struct_size);
}

// cairn_X_init: the defaults, as far as `size` reaches.
template <class T>
void init_struct(T* dst, uint32_t size, const char* fn) {
  if (!dst) raise(Code::InvalidArgument, "{}: opts is NULL", fn);
  check_struct_size<T>(size, fn);
  std::memcpy(static_cast<void*>(dst), &StructInfo<T>::defaults(), size);
  dst->struct_size = size;
}

}  // namespace cairn::capi
