// Building and parsing the index FlatBuffer (private to runtime/checkpoint and its tests).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/checkpoint/format.h"

namespace cairn::ckpt::internal {

// The index bytes for `entries` (sorted by key, unique), the graph and the metadata. Every
// attribute key must be one of the entries' keys (the caller has checked). Deterministic.
std::vector<uint8_t> build_index(const std::vector<TensorInfo>& entries, const ObjectGraph& graph,
                                 const Metadata& metadata, uint32_t format_version = kFormatVersion);

// The _CHECKPOINTABLE_OBJECT_GRAPH bytes, with attribute tensor indices into `sorted_keys`.
std::string build_object_graph(const ObjectGraph& graph, const std::vector<std::string_view>& sorted_keys);

struct ParsedIndex {
  std::vector<TensorInfo> entries;
  ObjectGraph graph;
  Metadata metadata;
};

// Verifies and converts an index. `payload_end` is the index's file offset: every payload must
// end at or before it. Raises DataLoss naming `path` and the part that failed.
ParsedIndex parse_index(const uint8_t* data, size_t size, uint64_t payload_end, uint32_t format_version,
                        std::string_view path);

}  // namespace cairn::ckpt::internal
