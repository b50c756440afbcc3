// Event records as TensorFlow 2 writes them (tensorboard compat/proto/event.proto, summary.proto):
// the values of one summary call, and their serialization with nanopb (runtime/io/proto).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"

namespace cairn::summary {

// The TensorBoard plugin a value belongs to; it decides the metadata (plugin name, content and
// data class) written with the first value of each tag.
enum class Plugin { Scalars, Histograms, Images, Text, Audio };
const char* plugin_name(Plugin p);  // "scalars", "histograms", ...
const char* summary_kind(Plugin p);  // "scalar", "histogram", ...: what error messages call it

// A TensorProto: numbers as little-endian row-major bytes in `content`, or strings.
struct TensorValue {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::string content;               // numeric dtypes
  std::vector<std::string> strings;  // DType::String
};

// One Summary.Value: a tag, its plugin and its tensor.
struct Value {
  std::string tag;
  Plugin plugin = Plugin::Scalars;
  TensorValue tensor;
};

// The first record of an event file: Event{wall_time, file_version = "brain.Event:2"}.
std::string encode_file_version_event(double wall_time);
// Event{wall_time, step, graph_def}.
std::string encode_graph_event(double wall_time, int64_t step, std::string_view graph_def);
// Event{wall_time, step, summary{value}}; with SummaryMetadata when `with_metadata`.
std::string encode_summary_event(double wall_time, int64_t step, const Value& value, bool with_metadata);

// A rank-0 float32 scalar value (the scalars plugin's TF2 form).
Value scalar_value(std::string tag, float value);

}  // namespace cairn::summary
