// Writes the golden checkpoint of the current format version (see README.md):
//   bazel run //tests/golden:make_golden_checkpoint -- "$PWD/tests/golden/checkpoint_v1.cairn"
#include <cstdio>

#include "runtime/checkpoint/writer.h"
#include "runtime/eager/context.h"
#include "tests/golden/checkpoint_v1_contents.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_golden_checkpoint OUTPUT_PATH\n");
    return 2;
  }
  try {
    cairn::Context ctx(cairn::ContextOptions{});
    cairn::ckpt::write_checkpoint(argv[1], cairn::golden::checkpoint_v1_graph(),
                                  cairn::golden::checkpoint_v1_entries(ctx.cpu()), cairn::golden::checkpoint_v1_metadata(),
                                  cairn::golden::checkpoint_v1_options());
  } catch (const cairn::Error& e) {
    std::fprintf(stderr, "make_golden_checkpoint: %s\n", e.what());
    return 1;
  }
  return 0;
}
