#include "tests/runtime/safetensors/st_test_util.h"

#include <cstring>

namespace cairn::test {

std::string st_bytes(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + json + data;
}

std::string st_file(const std::string& json, const std::string& data) {
  std::string path = make_temp_dir() + "/t.safetensors";
  write_file(path, st_bytes(json, data));
  return path;
}

Buffer* HandleDevice::allocate(size_t nbytes) {
  blocks_.emplace_back(nbytes);
  Buffer* b = new Buffer();
  b->device = this;
  b->nbytes = nbytes;
  b->data = reinterpret_cast<void*>(blocks_.size());  // 1-based handle
  retain();
  return b;
}

std::vector<uint8_t>& HandleDevice::bytes_of(const Buffer& b) { return blocks_[reinterpret_cast<size_t>(b.data) - 1]; }

void HandleDevice::read(const Buffer& b, void* dst, size_t n) {
  if (n) std::memcpy(dst, bytes_of(b).data(), n);
}

void HandleDevice::write(Buffer& b, const void* src, size_t n) {
  if (n) std::memcpy(bytes_of(b).data(), src, n);
}

std::string tensor_bytes(const Tensor& t) {
  std::string out(t.nbytes(), '\0');
  if (t.device()->is_host()) {
    if (!out.empty()) std::memcpy(out.data(), t.raw_data(), out.size());
  } else {
    t.device()->read(*t.buffer(), out.data(), out.size());
  }
  return out;
}

}  // namespace cairn::test
