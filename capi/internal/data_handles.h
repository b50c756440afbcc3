// The struct behind cairn_dataset, shared by the files of the dataset API (capi/data*.cc).
#pragma once

#include <string>
#include <vector>

#include "capi/internal/handles.h"
#include "runtime/data/dataset.h"

// One reference to an immutable dataset; may be used from several threads (freed by one).
struct cairn_dataset {
  cairn::data::DatasetPtr ds;
};

namespace cairn::capi {

inline cairn_dataset* new_dataset(data::DatasetPtr ds) { return new cairn_dataset{std::move(ds)}; }

// The dataset of `h`; InvalidArgument "<fn>: <what> is NULL" for NULL.
const data::DatasetPtr& require_dataset(const cairn_dataset* h, const char* fn, const char* what = "dataset");

// `n` component names: the given ones (each non-empty, unique) or "0", "1", ... for NULL.
std::vector<std::string> component_names(const char* const* names, size_t n, const char* fn);

// An element spec from C (names as component_names; specs as cairn_tensor_spec arrays, whose
// stride is the struct_size of element 0).
data::ElementSpec element_spec(const char* const* names, const cairn_tensor_spec* specs, size_t n, const char* fn);

}  // namespace cairn::capi
