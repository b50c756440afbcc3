#include "runtime/distribute/mpi_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/error.h"

namespace cairn::distribute {
namespace {

constexpr const char* kPluginName = "libcairn_mpi.so";

// Where to look, in order (see mpi_plugin()).
std::vector<std::string> candidates() {
  if (const char* env = std::getenv("CAIRN_MPI_PLUGIN"); env && *env) return {env};
  std::vector<std::string> paths;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&mpi_plugin), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    const size_t slash = self.rfind('/');
    if (slash != std::string::npos) paths.push_back(self.substr(0, slash + 1) + kPluginName);
  }
  paths.push_back(kPluginName);
  return paths;
}

const cairn_mpi_plugin& check_table(const cairn_mpi_plugin* table, const std::string& path) {
  if (!table) raise(Code::FailedPrecondition, "MPI: the plugin {} returned no function table", path);
  if (table->version != CAIRN_MPI_PLUGIN_VERSION || table->size < sizeof(cairn_mpi_plugin))
    raise(Code::FailedPrecondition,
          "MPI: the plugin {} has table version {} ({} bytes); this libcairn needs version {} ({} bytes): use the "
          "libcairn_mpi.so built with this libcairn",
          path, table->version, table->size, CAIRN_MPI_PLUGIN_VERSION, sizeof(cairn_mpi_plugin));
  return *table;
}

// Loads the first candidate that opens and has the table's symbol.
const cairn_mpi_plugin& load() {
  std::vector<std::string> failures;
  for (const std::string& path : candidates()) {
    // RTLD_GLOBAL: Open MPI's own components (dlopened by libmpi) resolve libmpi's symbols globally.
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      const char* why = dlerror();
      failures.push_back(fmt::format("{} ({})", path, why ? why : "not loadable"));
      continue;
    }
    auto table_fn = reinterpret_cast<cairn_mpi_plugin_table_fn>(dlsym(lib, CAIRN_MPI_PLUGIN_SYMBOL));
    if (!table_fn) {
      failures.push_back(fmt::format("{} (no symbol {})", path, CAIRN_MPI_PLUGIN_SYMBOL));
      dlclose(lib);
      continue;
    }
    return check_table(table_fn(), path);  // the library stays loaded for the process's life
  }
  raise(Code::Unavailable,
        "MPI: cannot load the MPI plugin; tried {}. Install Open MPI (libopenmpi-dev, openmpi-bin), put {} beside "
        "libcairn.so (bazel build //runtime/distribute/mpi:libcairn_mpi.so) or set CAIRN_MPI_PLUGIN to its path",
        fmt::join(failures, "; "), kPluginName);
}

}  // namespace

const cairn_mpi_plugin& mpi_plugin() {
  static std::mutex mu;
  static const cairn_mpi_plugin* loaded = nullptr;  // set once; a failed load is retried next call
  std::lock_guard<std::mutex> lock(mu);
  if (!loaded) loaded = &load();
  return *loaded;
}

}  // namespace cairn::distribute
