// Helpers for the TensorFlow checkpoint tests: the golden files' expected.json, temp folders, files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/runtime/checkpoint/ckpt_test_util.h"  // make_temp_dir, read_file, write_file, list_dir

namespace cairn::tfckpt::tftest {

using cairn::test::list_dir;
using cairn::test::make_temp_dir;
using cairn::test::read_file;
using cairn::test::write_file;

inline const std::string kGoldenDir = "tests/golden/tf_checkpoint/";

// tests/golden/tf_checkpoint/expected.json, parsed.
const nlohmann::json& expected();
// The golden checkpoint names in expected.json ("keras3_mlp", ...).
std::vector<std::string> golden_names();
// kGoldenDir + expected()["checkpoints"][name]["prefix"].
std::string golden_prefix(const std::string& name);

std::string base64_decode(const std::string& s);
// zlib's CRC32 (the checksum expected.json records beside SHA-256).
uint32_t zlib_crc32(const void* data, size_t n);

// Copies a checkpoint's files (<prefix>.index, <prefix>.data-*) into `dir`; returns the new prefix.
std::string copy_checkpoint(const std::string& prefix, const std::string& dir);

}  // namespace cairn::tfckpt::tftest
