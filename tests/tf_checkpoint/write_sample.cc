// Writes a TensorFlow checkpoint with Cairn's BundleWriter for verify_with_tf.py to read with real
// TensorFlow (run.sh runs both). The values follow one rule that the script computes again:
// element i of "v/<dtype>" [2,3] is ((7 * i) % 13 - 6), times 0.25 for floating types; uint8 takes
// (7 * i) % 13, bool i % 2 == 0, complex64 the value plus -value/2 imaginary.
//
//   write_sample DIR   -> DIR/ckpt-3.{index,data-00000-of-00001} and DIR/checkpoint
#include <complex>
#include <cstdio>
#include <string>

#include "runtime/checkpoint/tf_bundle.h"
#include "runtime/core/allocator.h"
#include "runtime/core/convert.h"
#include "runtime/cpu/cpu_device.h"

using namespace cairn;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  CpuDevice cpu(default_allocator());
  try {
    tfckpt::BundleWriter w(dir + "/ckpt-3");
    for (DType t : {DType::Float32, DType::Float64, DType::Int32, DType::UInt8, DType::Int16, DType::Int8,
                    DType::Complex64, DType::Int64, DType::Bool, DType::BFloat16, DType::Float16}) {
      Tensor v = Tensor::allocate(cpu, t, Shape{2, 3});
      const bool floating = t == DType::Float32 || t == DType::Float64 || t == DType::BFloat16 ||
                            t == DType::Float16 || t == DType::Complex64;
      visit_dtype(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* p = v.mutable_data<T>();
        for (int i = 0; i < 6; ++i) {
          double x = t == DType::UInt8 ? (7 * i) % 13 : (7 * i) % 13 - 6;
          if (floating) x *= 0.25;
          if constexpr (std::is_same_v<T, complex64>) {
            p[i] = complex64(static_cast<float>(x), static_cast<float>(-x / 2));
          } else if constexpr (std::is_same_v<T, bool>) {
            p[i] = i % 2 == 0;
          } else {
            p[i] = convert<T>(x);
          }
        }
      });
      w.add(std::string("v/") + dtype_name(t), v);
    }
    Tensor step = Tensor::allocate(cpu, DType::Int64, Shape{});
    *step.mutable_data<int64_t>() = 1234567890123;
    w.add("step/.ATTRIBUTES/VARIABLE_VALUE", step);
    w.add("empty", Tensor::allocate(cpu, DType::Float32, Shape{0, 3}));
    w.add_strings("s/scalar", Shape{}, {"cairn"});
    w.add_strings("s/vector", Shape{4}, {"", "a", std::string(300, 'z'), std::string("\0\xff", 2)});
    w.finish();
    tfckpt::write_checkpoint_state(dir, "ckpt-3", {"ckpt-3"});
  } catch (const Error& e) {
    std::fprintf(stderr, "write_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
