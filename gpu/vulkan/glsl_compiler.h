// GLSL -> SPIR-V at run time, for the shaders Cairn generates (fused elementwise programs,
// fused_shader.h). It uses glslang's C interface, which the Vulkan backend links already (VkFFT
// compiles its kernels with it), so run-time compilation adds no dependency.
//
// Why not shaderc (issue 7 named it): Debian's libshaderc.so.1 is underlinked. It leaves glslang
// and SPIRV-Tools symbols undefined for the executable to provide (glslc links them statically),
// so dlopen() fails with "undefined symbol: _ZTVN8spvtools5utils5TimerE" in any other program,
// and providing them from our glslang 12 would not match the glslang 11.13 headers it was built
// with (glslang 12 grew TBuiltInResource, which shaderc passes by pointer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::gpu {

// Compiles GLSL compute shader `source` to SPIR-V for Vulkan 1.1, optimized by SPIRV-Tools'
// performance passes (as the build's glslc -O). Throws Internal on a compile error: the message
// holds glslang's log and the source line it names first (`name` labels the source).
std::vector<uint32_t> compile_compute_shader(const std::string& source, const std::string& name);

}  // namespace cairn::gpu
