// The `cairn` command-line tool.
#include <CLI/CLI.hpp>

#include <iostream>

#include "runtime/core/error.h"
#include "tools/cli/ckpt_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"cairn: tools for the Cairn runtime"};
  app.require_subcommand(1);
  CLI::App* ckpt = app.add_subcommand(
      "ckpt", "Inspect, check and convert weights: Cairn checkpoints, TensorFlow checkpoints, safetensors");
  ckpt->require_subcommand(1);

  std::string path, key, other, format;
  int status = 0;
  CLI::App* ls = ckpt->add_subcommand("ls", "List the keys: key, dtype, shape, stored bytes, codec");
  ls->add_option("path", path, "Checkpoint file, TensorFlow prefix or directory, safetensors file or directory")->required();
  CLI::App* show = ckpt->add_subcommand("show", "Print one value (large tensors abbreviated)");
  show->add_option("path", path, "Checkpoint file")->required();
  show->add_option("key", key, "Checkpoint key")->required();
  CLI::App* verify = ckpt->add_subcommand("verify", "Check every checksum; exit 1 naming damaged keys");
  verify->add_option("path", path, "Checkpoint file")->required();
  CLI::App* diff = ckpt->add_subcommand("diff", "Compare two checkpoints key by key; exit 1 when they differ");
  diff->add_option("a", path, "First checkpoint")->required();
  diff->add_option("b", other, "Second checkpoint")->required();
  CLI::App* convert = ckpt->add_subcommand("convert", "Write every value to another file, by name");
  convert->add_option("from", path, "Weights to read")->required();
  convert->add_option("to", other, "File (or TensorFlow prefix) to write")->required();
  convert->add_option("--to-format", format, "cairn, tf or safetensors")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*ls) status = cairn::cli::ckpt_ls(path, std::cout);
    else if (*show) status = cairn::cli::ckpt_show(path, key, std::cout);
    else if (*verify) status = cairn::cli::ckpt_verify(path, std::cout, std::cerr);
    else if (*diff) status = cairn::cli::ckpt_diff(path, other, std::cout);
    else if (*convert) status = cairn::cli::ckpt_convert(path, other, format, std::cout, std::cerr);
  } catch (const cairn::Error& e) {
    std::cout.flush();
    std::cerr << "cairn: " << e.message() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "cairn: " << e.what() << "\n";
    return 2;
  }
  return status;
}
