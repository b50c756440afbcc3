// libFuzzer target for the checkpoint reader: any bytes must open and load without crashing,
// raising only cairn::Error. Build and run with tests/fuzz/run_fuzzer.sh (clang), or replay the
// corpus under gcc with //tests/fuzz:checkpoint_reader_corpus_test.
#include <cstdint>
#include <cstdlib>
#include <new>

#include "runtime/checkpoint/reader.h"
#include "runtime/core/allocator.h"

namespace {

// A plain host device, so the target needs only the tensor core and the checkpoint library.
class FuzzHostDevice final : public cairn::Device {
 public:
  FuzzHostDevice() : Device(cairn::DeviceKind::CPU, "cpu") {}
  cairn::Buffer* allocate(size_t nbytes) override {
    if (nbytes > kMaxBytes) cairn::raise(cairn::Code::ResourceExhausted, "fuzz device: {} bytes refused", nbytes);
    size_t total = (cairn::kTensorAlignment + nbytes + 63) / 64 * 64;
    void* block = std::aligned_alloc(cairn::kTensorAlignment, total);
    if (!block) cairn::raise(cairn::Code::ResourceExhausted, "fuzz device: out of memory");
    auto* b = new (block) cairn::Buffer();
    b->device = this;
    b->data = static_cast<char*>(block) + cairn::kTensorAlignment;
    b->nbytes = nbytes;
    retain();
    return b;
  }
  void read(const cairn::Buffer& b, void* dst, size_t n) override { std::memcpy(dst, b.data, n); }
  void write(cairn::Buffer& b, const void* src, size_t n) override { std::memcpy(b.data, src, n); }

 protected:
  void deallocate(cairn::Buffer* b) override {
    b->~Buffer();
    std::free(b);
  }

 private:
  static constexpr size_t kMaxBytes = size_t{256} << 20;
};

// Values up to this size are loaded; larger ones are checked through verify(), which streams.
constexpr uint64_t kLoadLimit = uint64_t{16} << 20;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzHostDevice* device = new FuzzHostDevice();
  try {
    cairn::ckpt::Reader r = cairn::ckpt::Reader::open_memory(data, size, "fuzz");
    for (const cairn::ckpt::TensorInfo& e : r.entries()) {
      try {
        if (e.raw_size > kLoadLimit) r.verify(e);
        else if (e.dtype == cairn::DType::String) r.load_string(e);
        else r.load(e, *device);
      } catch (const cairn::Error&) {
        // One damaged entry does not stop the others.
      }
    }
    if (const cairn::ckpt::TensorInfo* g = r.find(cairn::ckpt::kObjectGraphKey)) {
      try {
        if (g->raw_size <= kLoadLimit) cairn::ckpt::parse_object_graph(r.load_string(*g));
      } catch (const cairn::Error&) {
      }
    }
  } catch (const cairn::Error&) {
  }
  return 0;
}
