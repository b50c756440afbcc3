#include "runtime/core/object_kind.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

namespace cairn::test {

std::string make_temp_dir() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/ckpt-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  REQUIRE(::mkdtemp(buf.data()) != nullptr);
  return std::string(buf.data());
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

namespace {
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

Tensor pattern_tensor(DType dtype, const Shape& shape, int pattern, uint64_t seed) {
  Tensor t = Tensor::allocate(ctx().cpu(), dtype, shape);
  const size_t n = static_cast<size_t>(t.num_elements());
  uint64_t s = seed * 7919 + static_cast<uint64_t>(dtype);
  if (pattern == 0) {
    auto* p = static_cast<uint8_t*>(t.raw_mutable_data());
    size_t bytes = n * dtype_size(dtype);
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(splitmix(s));
    if (dtype == DType::Bool)
      for (size_t i = 0; i < bytes; ++i) p[i] &= 1;
    return t;
  }
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.mutable_data<T>();
    for (size_t i = 0; i < n; ++i) {
      double v;
      if (pattern == 1) {
        v = static_cast<double>(i % 97) * 0.25;
      } else {  // sum of uniforms: roughly normal, std ~0.5
        double acc = 0;
        for (int k = 0; k < 4; ++k) acc += static_cast<double>(splitmix(s) >> 11) * 0x1.0p-53 - 0.5;
        v = acc * 0.5;
      }
      p[i] = convert<T>(v);
    }
  });
  return t;
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  size_t n = static_cast<size_t>(a.num_elements()) * dtype_size(a.dtype());
  return n == 0 || std::memcmp(a.raw_data(), b.raw_data(), n) == 0;
}

Sample make_sample() {
  using namespace ckpt;
  Sample s;
  // root -> net (module) -> {kernel, bias}; root -> save_counter; root -> opt (optimizer with a slot)
  s.graph.nodes.resize(7);
  s.graph.nodes[0].kind = static_cast<uint32_t>(ObjectKind::Trackable);
  s.graph.nodes[0].children = {{"net", 1}, {"opt", 4}, {"save_counter", 5}};
  s.graph.nodes[1].kind = static_cast<uint32_t>(ObjectKind::Module);
  s.graph.nodes[1].children = {{"kernel", 2}, {"bias", 3}};
  s.graph.nodes[2].kind = static_cast<uint32_t>(ObjectKind::Variable);
  s.graph.nodes[2].attributes = {{"VARIABLE_VALUE", "net/kernel/.ATTRIBUTES/VARIABLE_VALUE"}};
  s.graph.nodes[3].kind = static_cast<uint32_t>(ObjectKind::Variable);
  s.graph.nodes[3].attributes = {{"VARIABLE_VALUE", "net/bias/.ATTRIBUTES/VARIABLE_VALUE"}};
  s.graph.nodes[4].kind = static_cast<uint32_t>(ObjectKind::Optimizer);
  s.graph.nodes[4].slots = {{4, 2, "m", 6}};
  s.graph.nodes[5].kind = static_cast<uint32_t>(ObjectKind::Variable);
  s.graph.nodes[5].attributes = {{"VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}};
  s.graph.nodes[6].kind = static_cast<uint32_t>(ObjectKind::Variable);
  s.graph.nodes[6].attributes = {
      {"VARIABLE_VALUE", "net/kernel/.OPTIMIZER_SLOT/opt/m"}};

  s.entries.emplace_back("net/kernel/.ATTRIBUTES/VARIABLE_VALUE", pattern_tensor(DType::Float32, Shape{8, 16}, 1));
  s.entries.emplace_back("net/bias/.ATTRIBUTES/VARIABLE_VALUE", pattern_tensor(DType::Float32, Shape{16}, 0));
  s.entries.emplace_back("net/kernel/.OPTIMIZER_SLOT/opt/m", pattern_tensor(DType::Int32, Shape{8, 16}, 1));
  s.entries.emplace_back("save_counter/.ATTRIBUTES/VARIABLE_VALUE", scalar<int64_t>(3));
  s.entries.emplace_back("extra/half", pattern_tensor(DType::Float16, Shape{2, 3}, 2));
  s.entries.emplace_back("extra/empty", pattern_tensor(DType::Float64, Shape{0, 4}, 1));
  s.entries.push_back(SaveEntry::string_scalar("extra/note", "hello checkpoint"));
  s.metadata.save_counter = 3;
  s.metadata.library_version = "0.1.0-test";
  s.metadata.user = {{"a", "1"}, {"b", "two"}};
  return s;
}

bool matches_sample(const ckpt::Reader& r, const Sample& s, bool quiet) {
  bool ok = r.graph() == s.graph && r.metadata() == s.metadata && r.entries().size() == s.entries.size() + 1;
  for (const ckpt::SaveEntry& e : s.entries) {
    if (!ok) break;
    const ckpt::TensorInfo* info = r.find(e.key);
    if (!info) {
      ok = false;
    } else if (e.is_string) {
      ok = info->dtype == DType::String && r.load_string(*info) == e.bytes;
    } else {
      ok = same_tensor(r.load(*info, ctx().cpu()), e.tensor);
    }
    if (!quiet) CHECK_MESSAGE(ok, "entry " << e.key);
  }
  if (ok) {
    ckpt::ObjectGraph g = ckpt::parse_object_graph(r.load_string(ckpt::kObjectGraphKey));
    ok = g == s.graph;
  }
  if (!quiet) CHECK(ok);
  return ok;
}

}  // namespace cairn::test
