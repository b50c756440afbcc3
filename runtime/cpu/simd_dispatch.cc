#include "runtime/cpu/simd_dispatch.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "runtime/core/error.h"

namespace cairn {
namespace {

constexpr SimdArch kAllArchs[] = {SimdArch::kPortable, SimdArch::kSse2, SimdArch::kAvx2, SimdArch::kAvx512};

// xsimd reads cpuid only; __builtin_cpu_supports also checks that the OS saves the wide registers.
bool cpu_has(SimdArch arch) {
  if (arch == kBaselineSimdArch) return true;
#if defined(CAIRN_SIMD_X86)
  const auto cpu = xsimd::available_architectures();
  switch (arch) {
    case SimdArch::kAvx2: return cpu.fma3_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case SimdArch::kAvx512:
      return cpu.avx512bw && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd");
    default: break;
  }
#endif
  return false;
}

const SimdLoops& loops_for(SimdArch arch) {
  if (!cpu_has(arch)) raise(Code::InvalidArgument, "CAIRN_SIMD: this CPU has no {}", simd_arch_name(arch));
#if defined(CAIRN_SIMD_X86)
  if (arch == SimdArch::kAvx2) return simd_loops_avx2();
  if (arch == SimdArch::kAvx512) return simd_loops_avx512();
#endif
  return simd_loops_baseline();
}

const SimdLoops& initial_loops() {
  if (const char* env = std::getenv("CAIRN_SIMD"); env != nullptr && *env != '\0') {
    for (SimdArch arch : kAllArchs)
      if (std::string(env) == simd_arch_name(arch)) return loops_for(arch);
    raise(Code::InvalidArgument, "CAIRN_SIMD: unknown instruction set '{}' (portable, sse2, avx2 or avx512)", env);
  }
  return loops_for(available_simd_archs().back());
}

std::atomic<const SimdLoops*> current{nullptr};

}  // namespace

const char* simd_arch_name(SimdArch arch) {
  switch (arch) {
    case SimdArch::kPortable: return "portable";
    case SimdArch::kSse2: return "sse2";
    case SimdArch::kAvx2: return "avx2";
    case SimdArch::kAvx512: return "avx512";
  }
  return "?";
}

std::vector<SimdArch> available_simd_archs() {
  std::vector<SimdArch> archs;
  for (SimdArch arch : kAllArchs)
    if (cpu_has(arch)) archs.push_back(arch);
  return archs;
}

const SimdLoops& simd_loops() {
  const SimdLoops* loops = current.load(std::memory_order_acquire);
  if (loops == nullptr) {
    static const SimdLoops& initial = initial_loops();  // thread-safe, once
    const SimdLoops* expected = nullptr;
    current.compare_exchange_strong(expected, &initial, std::memory_order_acq_rel);
    loops = current.load(std::memory_order_acquire);
  }
  return *loops;
}

void use_simd_arch(SimdArch arch) { current.store(&loops_for(arch), std::memory_order_release); }

}  // namespace cairn
