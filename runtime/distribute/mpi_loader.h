// Finds and loads the MPI plugin (libcairn_mpi.so, mpi/plugin.h) on first use. libcairn never links
// libmpi: a process without MPI loads Cairn as before and gets a clear error only when it asks for
// MPI.
#pragma once

#include "runtime/distribute/mpi/plugin.h"

namespace cairn::distribute {

// The plugin's table, loading the plugin on the first call: $CAIRN_MPI_PLUGIN when set, otherwise
// libcairn_mpi.so beside the binary holding this code (libcairn.so), then the loader's search path.
// Unavailable naming every place tried (and why each failed) when none loads; FailedPrecondition
// when the plugin's table has another version or is smaller than this build's.
const cairn_mpi_plugin& mpi_plugin();

}  // namespace cairn::distribute
