// The SPIR-V of every shader variant, embedded at build time (gpu/shaders/embed_spirv.sh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cairn::gpu {

struct ShaderBinary {
  const char* name;  // "<family>_<dtype>", e.g. "binary_f32", or "strided_w32"
  const uint32_t* words;
  size_t bytes;
};

extern const ShaderBinary kShaders[];
extern const size_t kNumShaders;

// The variant called `name`, or nullptr.
inline const ShaderBinary* find_shader(std::string_view name) {
  for (size_t i = 0; i < kNumShaders; ++i)
    if (name == kShaders[i].name) return &kShaders[i];
  return nullptr;
}

}  // namespace cairn::gpu
