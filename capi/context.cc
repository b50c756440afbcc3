// Contexts and tensors in the C API.
#include <cstring>
#include <vector>

#include "capi/internal/handles.h"
#include "capi/internal/options.h"
#include "runtime/core/free_list.h"
#include "runtime/eager/device_scope.h"

using namespace cairn;
using cairn::capi::read_options;
using cairn::capi::require;

namespace {

struct LogBridge {
  cairn_log_fn fn;
  void* user_data;
};

// A tensor on `device` for entry point `fn`: the device's allocation errors ("vulkan:0: a tensor of
// N bytes exceeds the device's maxStorageBufferRange", "cpu: out of memory ...") do not know who
// asked, so `fn` goes in front of them.
Tensor allocate_for(Device& device, DType dtype, const Shape& shape, const char* fn) {
  try {
    return Tensor::allocate(device, dtype, shape);
  } catch (const Error& e) {
    raise(e.code(), "{}: {}", fn, e.message());
  }
}


}  // namespace

namespace cairn::capi {

ContextOptions context_options(const cairn_context_options* user, const char* fn) {
  const cairn_context_options opts = read_options(user, fn);
  ContextOptions o;
  if (opts.device) o.device = opts.device;
  if (opts.num_threads < 0) raise(Code::InvalidArgument, "{}: num_threads must be >= 0, got {}", fn, opts.num_threads);
  o.num_threads = opts.num_threads;
  o.seed = opts.seed;
  if (opts.log_level < CAIRN_LOG_DEBUG || opts.log_level > CAIRN_LOG_ERROR)
    raise(Code::InvalidArgument, "{}: unknown log_level {}", fn, static_cast<int>(opts.log_level));
  o.log.min_level = static_cast<LogLevel>(opts.log_level);
  if (opts.log_fn) {
    // cairn_log_level and LogLevel share values, so the C callback type fits the runtime's sink.
    o.log.callback = reinterpret_cast<void (*)(void*, LogLevel, const char*)>(opts.log_fn);
    o.log.user_data = opts.log_user_data;
  }
  o.log.release = opts.log_release;
  if (opts.allocator) {
    o.allocator.allocate = opts.allocator->allocate;
    o.allocator.deallocate = opts.allocator->deallocate;
    o.allocator.user_data = opts.allocator->user_data;
    o.allocator.release = opts.allocator->release;
  }
  return o;
}

}  // namespace cairn::capi

extern "C" {

cairn_status* cairn_context_create(const cairn_context_options* opts, cairn_context** out) {
  CAIRN_API_BEGIN
  require(out, "cairn_context_create", "out");
  *out = nullptr;
  Ref<Context> ctx = make_ref<Context>(capi::context_options(opts, "cairn_context_create"));
  *out = new cairn_context{std::move(ctx)};
  CAIRN_API_END
}

void cairn_context_free(cairn_context* ctx) { delete ctx; }

const char* cairn_context_device(const cairn_context* ctx) {
  return ctx ? ctx->ctx->default_device().name().c_str() : nullptr;
}

cairn_status* cairn_tensor_create(cairn_context* ctx, cairn_dtype dtype, const int64_t* shape, size_t rank,
                                  const void* data, size_t nbytes, cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tensor_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  DType t = static_cast<DType>(dtype);
  if (!dtype_is_valid(t)) raise(Code::InvalidArgument, "{}: unknown dtype {}", fn, static_cast<int>(dtype));
  if (t == DType::String) raise(Code::InvalidArgument, "{}: string tensors cannot be created from raw bytes", fn);
  Shape s = Shape::from(shape, rank, fn);
  size_t expected = static_cast<size_t>(s.num_elements()) * dtype_size(t);
  if (nbytes != expected)
    raise(Code::InvalidArgument, "{}: nbytes is {} but a {}{} tensor needs {}", fn, nbytes, dtype_name(t), s.str(),
          expected);
  if (data == nullptr && nbytes != 0) raise(Code::InvalidArgument, "{}: data is NULL", fn);
  Device& device = scoped_device(*ctx->ctx);  // a device scope's, else the default device
  Tensor tensor = allocate_for(device, t, s, fn);
  if (t == DType::Bool && nbytes > 0) {
    // Any nonzero byte is true; kernels rely on bools being exactly 0 or 1.
    std::vector<uint8_t> normalized(nbytes);
    const auto* src = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < nbytes; ++i) normalized[i] = src[i] != 0;
    device.write(*tensor.buffer(), normalized.data(), nbytes);
  } else {
    device.write(*tensor.buffer(), data, nbytes);
  }
  *out = capi::new_tensor(std::move(tensor));
  CAIRN_API_END
}

cairn_dtype cairn_tensor_dtype(const cairn_tensor* t) {
  return t ? static_cast<cairn_dtype>(t->t.dtype()) : CAIRN_INVALID_DTYPE;
}

size_t cairn_tensor_rank(const cairn_tensor* t) { return t ? static_cast<size_t>(t->t.rank()) : 0; }

int64_t cairn_tensor_dim(const cairn_tensor* t, size_t axis) {
  if (!t || axis >= static_cast<size_t>(t->t.rank())) return -1;
  return t->t.shape()[static_cast<int>(axis)];
}

int64_t cairn_tensor_num_elements(const cairn_tensor* t) { return t ? t->t.num_elements() : 0; }

size_t cairn_tensor_nbytes(const cairn_tensor* t) { return t ? t->t.nbytes() : 0; }

const char* cairn_tensor_device(const cairn_tensor* t) { return t ? t->t.device()->name().c_str() : nullptr; }

cairn_status* cairn_tensor_read(const cairn_tensor* t, void* dst, size_t nbytes) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tensor_read";
  require(t, fn, "tensor");
  if (nbytes != t->t.nbytes())
    raise(Code::InvalidArgument, "{}: nbytes is {} but the {} tensor holds {}", fn, nbytes, t->t.debug_string(),
          t->t.nbytes());
  if (nbytes == 0) return nullptr;
  require(dst, fn, "dst");
  t->t.device()->read(*t->t.buffer(), dst, nbytes);
  CAIRN_API_END
}

cairn_status* cairn_tensor_copy_to_device(cairn_context* ctx, const cairn_tensor* t, const char* device,
                                          cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_tensor_copy_to_device";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  require(t, fn, "tensor");
  require(device, fn, "device");
  Device& target = ctx->ctx->device(device);
  Device* source = t->t.device();
  if (&target == source) {
    *out = capi::new_tensor(t->t);
    return nullptr;
  }
  Tensor copy = allocate_for(target, t->t.dtype(), t->t.shape(), fn);
  if (source->is_host()) {
    target.write(*copy.buffer(), t->t.raw_data(), t->t.nbytes());
  } else {
    std::vector<char> staging(t->t.nbytes());
    source->read(*t->t.buffer(), staging.data(), staging.size());
    target.write(*copy.buffer(), staging.data(), staging.size());
  }
  *out = capi::new_tensor(std::move(copy));
  CAIRN_API_END
}

cairn_status* cairn_tensor_share(const cairn_tensor* t, cairn_tensor** out) {
  CAIRN_API_BEGIN
  require(out, "cairn_tensor_share", "out");
  *out = nullptr;
  require(t, "cairn_tensor_share", "tensor");
  *out = capi::new_tensor(t->t);
  CAIRN_API_END
}

void cairn_tensor_free(cairn_tensor* t) { delete t; }

}  // extern "C"

namespace {
// Freed tensor handles, kept per thread for the next one (see cairn_tensor's operator new).
class HandleBlocks {
 public:
  static constexpr int kCapacity = 64;
  FreeList<kCapacity> list;
  // A handle freed later in the thread's exit goes back to the system.
  ~HandleBlocks() { list.close(sizeof(cairn_tensor), [](void* p) { ::operator delete(p); }); }
};
thread_local HandleBlocks handle_blocks;
}  // namespace

void* cairn_tensor::operator new(size_t size) {
  if (void* p = handle_blocks.list.take(size)) return p;
  return ::operator new(size);
}

void cairn_tensor::operator delete(void* p, size_t size) noexcept {
  if (p == nullptr) return;
  if (!handle_blocks.list.keep(p, size)) ::operator delete(p);
}
