// Writes, into the directory given, what check_with_python.py reads with the safetensors package:
// single.safetensors (every Cairn dtype, metadata, checksums) and sharded/ (write_sharded), plus
// expected.json with every tensor's dtype, shape and values.
#include <errno.h>
#include <sys/stat.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <fstream>

#include "runtime/core/allocator.h"
#include "runtime/core/convert.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/io/safetensors.h"

namespace {

using namespace cairn;
using Named = std::vector<std::pair<std::string, Tensor>>;

Device& host() {
  static Device* d = new CpuDevice(default_allocator());
  return *d;
}

// Values i * step + start converted to `dtype` (bool: odd i).
Tensor ramp(DType dtype, const Shape& shape, double step, double start) {
  Tensor t = Tensor::allocate(host(), dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.mutable_data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const double v = static_cast<double>(i) * step + start;
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = i % 2 == 1;
      } else if constexpr (std::is_same_v<T, complex64>) {
        p[i] = complex64(static_cast<float>(v), static_cast<float>(-v));
      } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        p[i] = T(static_cast<float>(v));
      } else {
        p[i] = static_cast<T>(v);
      }
    }
  });
  return t;
}

// Values as JSON: complex as [re, im], 16-bit floats through float.
nlohmann::json describe(const Tensor& t) {
  nlohmann::json values = nlohmann::json::array();
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, complex64>) {
        values.push_back({p[i].real(), p[i].imag()});
      } else if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        values.push_back(static_cast<float>(p[i]));
      } else {
        values.push_back(p[i]);
      }
    }
  });
  return {{"dtype", dtype_name(t.dtype())}, {"shape", t.shape().to_vector()}, {"values", values}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  Named all = {
      {"f32", ramp(DType::Float32, Shape{2, 3}, 0.5, -1)}, {"f64", ramp(DType::Float64, Shape{3}, 1e-3, 1e10)},
      {"f16", ramp(DType::Float16, Shape{4}, 0.25, -0.5)}, {"bf16", ramp(DType::BFloat16, Shape{2, 2}, 8, -3)},
      {"i8", ramp(DType::Int8, Shape{3}, 100, -128)},      {"u8", ramp(DType::UInt8, Shape{3}, 100, 0)},
      {"i16", ramp(DType::Int16, Shape{2}, 30000, -30000)}, {"i32", ramp(DType::Int32, Shape{1, 1, 2}, 7, -1)},
      {"i64", ramp(DType::Int64, Shape{}, 0, 1e15)},        {"bool", ramp(DType::Bool, Shape{5}, 1, 0)},
      {"c64", ramp(DType::Complex64, Shape{2}, 1.5, 0.5)},  {"empty", ramp(DType::Float32, Shape{0, 4}, 1, 0)},
      {"name with \"quotes\" and \u00e9", ramp(DType::Float32, Shape{1}, 0, 42)},
  };
  safetensors::WriteOptions o;
  o.metadata = {{"format", "pt"}, {"written_by", "cairn"}};
  o.checksums = true;
  safetensors::write_file(dir + "/single.safetensors", all, o);
  const std::string sharded = dir + "/sharded";
  if (::mkdir(sharded.c_str(), 0755) != 0 && errno != EEXIST) {
    std::perror(sharded.c_str());
    return 1;
  }
  safetensors::write_sharded(sharded, all, 24, o);

  nlohmann::json expected = nlohmann::json::object();
  for (const auto& [name, t] : all) expected[name] = describe(t);
  std::ofstream(dir + "/expected.json") << expected.dump(1) << "\n";
  return 0;
}
