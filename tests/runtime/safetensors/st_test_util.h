// Helpers of the safetensors tests: hand-made files (for the rules a writer never breaks) and a
// device without host memory (for the copy paths a GPU takes).
#pragma once

#include <string>
#include <vector>

#include "runtime/io/safetensors.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {

// `u64 len(json) | json | data`: the header exactly as given (no padding).
std::string st_bytes(const std::string& json, const std::string& data = "");
// Writes st_bytes(json, data) to a fresh file and returns its path.
std::string st_file(const std::string& json, const std::string& data = "");

// A device whose Buffer::data is a handle, not a host pointer: tensors on it must be copied.
class HandleDevice final : public Device {
 public:
  HandleDevice() : Device(DeviceKind::Vulkan, "handles") {}
  Buffer* allocate(size_t nbytes) override;
  void read(const Buffer& b, void* dst, size_t n) override;
  void write(Buffer& b, const void* src, size_t n) override;
  std::vector<uint8_t>& bytes_of(const Buffer& b);

 protected:
  void deallocate(Buffer* b) override { delete b; }

 private:
  std::vector<std::vector<uint8_t>> blocks_;
};

// The host bytes of `t` wherever it lives.
std::string tensor_bytes(const Tensor& t);

}  // namespace cairn::test
