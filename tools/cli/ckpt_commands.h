// `cairn ckpt ...`: inspecting, checking and converting weight files: Cairn checkpoints, TensorFlow
// checkpoints and safetensors (weights_file.h says how each is recognised). Each command writes its report to
// `out` and problems to `err`, and returns the process exit status:
//   0  done, nothing wrong (verify: every checksum matched; diff: no difference)
//   1  verify found damage, or diff found differences
// Errors that stop a command (missing file, missing key) are raised as cairn::Error.
#pragma once

#include <ostream>
#include <string>

namespace cairn::cli {

int ckpt_ls(const std::string& path, std::ostream& out);
int ckpt_show(const std::string& path, const std::string& key, std::ostream& out);
int ckpt_verify(const std::string& path, std::ostream& out, std::ostream& err);
int ckpt_diff(const std::string& a, const std::string& b, std::ostream& out);
// Writes every value of `from` to `to` in `format` ("cairn", "tf", "safetensors"), by name; keys the
// target cannot hold are named on `err`.
int ckpt_convert(const std::string& from, const std::string& to, const std::string& format, std::ostream& out,
                 std::ostream& err);

}  // namespace cairn::cli
