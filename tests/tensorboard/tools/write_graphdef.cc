// write_graphdef OUT: writes the binary tensorflow.GraphDef of the sample traced function
// (graph_sample.h: a while loop with a cond inside, a variable) to OUT, and its text form to
// OUT.pbtxt, for checks with the real protobuf and TensorBoard (tests/tensorboard).
#include <cstdio>
#include <fstream>

#include "runtime/graph/graphdef.h"
#include "runtime/graph/graphdef_proto.h"
#include "tests/tensorboard/tools/graph_sample.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_graphdef OUT\n");
    return 2;
  }
  auto ctx = cairn::make_ref<cairn::Context>(cairn::ContextOptions{});
  auto f = cairn::test::graph_sample(*ctx);
  const cairn::graph::Graph& g = f->concretes()[0]->graph();
  std::ofstream(argv[1], std::ios::binary | std::ios::trunc) << cairn::graph::graphdef_proto(g);
  std::ofstream(std::string(argv[1]) + ".pbtxt", std::ios::trunc) << cairn::graph::graphdef_text(g);
  return 0;
}
