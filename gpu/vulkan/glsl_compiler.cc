#include "gpu/vulkan/glsl_compiler.h"

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>

#include "runtime/core/error.h"

namespace cairn::gpu {

namespace {

// glslang's process state is reference counted: VkFFT initializes and finalizes it around its
// plans. One reference held for the life of the process keeps it valid between those.
void initialize_glslang() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = glslang_initialize_process() != 0; });
  if (!ok) raise(Code::Internal, "glslang_initialize_process failed");
}

// Line `n` (1-based) of `source`, or "" when there is none.
std::string source_line(const std::string& source, long n) {
  std::istringstream in(source);
  std::string line;
  for (long i = 1; std::getline(in, line); ++i)
    if (i == n) return line;
  return "";
}

// glslang logs "ERROR: 0:<line>: ..."; the first line number an error names, or 0.
long first_error_line(const std::string& log) {
  size_t at = log.find("ERROR: ");
  if (at == std::string::npos) return 0;
  size_t colon = log.find(':', at + 7);
  if (colon == std::string::npos) return 0;
  return std::strtol(log.c_str() + colon + 1, nullptr, 10);
}

[[noreturn]] void compile_error(const std::string& name, const std::string& source, const char* stage,
                                const char* log) {
  std::string text = log ? log : "";
  long line = first_error_line(text);
  raise(Code::Internal, "{}: the generated shader does not {}: {}(line {}: \"{}\")", name, stage, text, line,
        source_line(source, line));
}

}  // namespace

std::vector<uint32_t> compile_compute_shader(const std::string& source, const std::string& name) {
  initialize_glslang();
  static std::mutex mu;  // compiles are rare (once per program and device): one at a time
  std::lock_guard<std::mutex> lock(mu);
  glslang_input_t input{};
  input.language = GLSLANG_SOURCE_GLSL;
  input.stage = GLSLANG_STAGE_COMPUTE;
  input.client = GLSLANG_CLIENT_VULKAN;
  input.client_version = GLSLANG_TARGET_VULKAN_1_1;
  input.target_language = GLSLANG_TARGET_SPV;
  input.target_language_version = GLSLANG_TARGET_SPV_1_3;
  input.code = source.c_str();
  input.default_version = 450;
  input.default_profile = GLSLANG_NO_PROFILE;
  input.messages = static_cast<glslang_messages_t>(GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
  input.resource = glslang_default_resource();

  std::unique_ptr<glslang_shader_t, void (*)(glslang_shader_t*)> shader(glslang_shader_create(&input),
                                                                        glslang_shader_delete);
  if (!glslang_shader_preprocess(shader.get(), &input))
    compile_error(name, source, "preprocess", glslang_shader_get_info_log(shader.get()));
  if (!glslang_shader_parse(shader.get(), &input))
    compile_error(name, source, "compile", glslang_shader_get_info_log(shader.get()));
  std::unique_ptr<glslang_program_t, void (*)(glslang_program_t*)> program(glslang_program_create(),
                                                                           glslang_program_delete);
  glslang_program_add_shader(program.get(), shader.get());
  if (!glslang_program_link(program.get(), input.messages))
    compile_error(name, source, "link", glslang_program_get_info_log(program.get()));
  glslang_spv_options_t options{};
  options.disable_optimizer = false;  // SPIRV-Tools' performance recipe, as glslc -O
  glslang_program_SPIRV_generate_with_options(program.get(), input.stage, &options);
  std::vector<uint32_t> words(glslang_program_SPIRV_get_size(program.get()));
  if (words.empty()) {
    const char* messages = glslang_program_SPIRV_get_messages(program.get());
    raise(Code::Internal, "{}: glslang produced no SPIR-V: {}", name, messages ? messages : "");
  }
  glslang_program_SPIRV_get(program.get(), words.data());
  return words;
}

}  // namespace cairn::gpu
