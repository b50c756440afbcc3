// Test-side reading of event files: TFRecord framing checked byte by byte (lengths and masked
// CRC32C), then each Event decoded with nanopb's wire-format primitives, field by field, so the
// test does not share the writer's encoding code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cairn::test {

struct DecodedValue {
  std::string tag;
  bool has_metadata = false;
  std::string plugin_name;
  std::string plugin_content;
  int data_class = 0;
  int dtype = 0;
  std::vector<int64_t> shape;
  std::string content;
  std::vector<std::string> strings;
  std::vector<float> float_val;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  bool has_graph = false;
  std::string graph_def;
  std::vector<DecodedValue> values;
};

// Every record of a TFRecord file; a bad length or CRC fails the test (REQUIRE).
std::vector<std::string> read_records(const std::string& path);
DecodedEvent decode_event(const std::string& record);
std::vector<DecodedEvent> read_events(const std::string& path);
// An empty directory TEST_TMPDIR/<name> (removed first when it exists); not created.
std::string fresh_dir(const std::string& name);
// The event files (names containing "tfevents") in `dir`, sorted.
std::vector<std::string> event_files(const std::string& dir);
// The float32 value of a scalar summary (rank 0, in tensor_content or float_val).
float scalar_of(const DecodedValue& v);

}  // namespace cairn::test
