// Helpers shared by the checkpoint tests: scratch directories, files, deterministic tensors and a
// small sample checkpoint.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/writer.h"
#include "tests/util/test_util.h"

namespace cairn::test {

// A fresh empty directory under $TEST_TMPDIR (or /tmp).
std::string make_temp_dir();
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);
// Names of the directory's entries, sorted, without "." and "..".
std::vector<std::string> list_dir(const std::string& dir);

// Deterministic values of any non-string dtype. `pattern` 0: pseudo-random bits (incompressible
// for floats), 1: a smooth compressible ramp, 2: small pseudo-random normal-ish values.
Tensor pattern_tensor(DType dtype, const Shape& shape, int pattern, uint64_t seed = 1);
// dtype, shape and bytes equal.
bool same_tensor(const Tensor& a, const Tensor& b);

// A small checkpoint with a graph, metadata, several dtypes and codecs (the corruption tests use it).
struct Sample {
  ckpt::ObjectGraph graph;
  std::vector<ckpt::SaveEntry> entries;
  ckpt::Metadata metadata;
};
Sample make_sample();
// Expects every entry of `r` to be one of `s`'s with the same value, and the graph and metadata equal.
// Returns false (without failing the test) instead when `quiet`.
bool matches_sample(const ckpt::Reader& r, const Sample& s, bool quiet = false);

}  // namespace cairn::test
