#include "tests/runtime/tf_checkpoint/tf_test_util.h"

#include <zlib.h>

namespace cairn::tfckpt::tftest {

const nlohmann::json& expected() {
  static const nlohmann::json j = nlohmann::json::parse(read_file(kGoldenDir + "expected.json"));
  return j;
}

std::vector<std::string> golden_names() {
  std::vector<std::string> out;
  for (auto& [name, v] : expected()["checkpoints"].items()) out.push_back(name);
  return out;
}

std::string golden_prefix(const std::string& name) {
  return kGoldenDir + expected()["checkpoints"][name]["prefix"].get<std::string>();
}

std::string base64_decode(const std::string& s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : s) {
    const int v = val(c);
    if (v < 0) continue;  // '=' padding
    acc = acc << 6 | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

uint32_t zlib_crc32(const void* data, size_t n) {
  return static_cast<uint32_t>(::crc32(::crc32(0, nullptr, 0), static_cast<const Bytef*>(data), static_cast<uInt>(n)));
}

std::string copy_checkpoint(const std::string& prefix, const std::string& dir) {
  const size_t slash = prefix.rfind('/');
  const std::string src_dir = prefix.substr(0, slash);
  const std::string base = prefix.substr(slash + 1);
  for (const std::string& n : list_dir(src_dir))
    if (n.rfind(base + ".", 0) == 0) write_file(dir + "/" + n, read_file(src_dir + "/" + n));
  return dir + "/" + base;
}

}  // namespace cairn::tfckpt::tftest
