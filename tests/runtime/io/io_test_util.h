// Helpers shared by the record tests: scratch paths, whole-file reads and writes, record files.
#pragma once

#include <string>
#include <vector>

#include "runtime/io/record.h"
#include "runtime/io/record_reader.h"

namespace cairn::test {

// A fresh path "<$TEST_TMPDIR or /tmp>/<name>-<n>" (n counts up, so each call is new).
std::string temp_path(const std::string& name);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
void append_file(const std::string& path, const std::string& bytes);

// Writes `records` to `path` with `opts`.
void write_records(const std::string& path, const std::vector<std::string>& records,
                   const io::RecordWriterOptions& opts = {});
// Reads every complete record of `path`.
std::vector<std::string> read_records(const std::string& path, const io::RecordReaderOptions& opts = {});
// Reads the rest of an open reader.
std::vector<std::string> read_rest(io::RecordReader& r);

// `n` deterministic records of assorted sizes (0 bytes, small, a few KiB), seeded by `seed`.
std::vector<std::string> sample_records(size_t n, uint32_t seed = 1);

}  // namespace cairn::test
