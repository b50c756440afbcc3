// Writes the seed corpus of the checkpoint reader fuzzer (see README.md):
//   bazel run //tests/fuzz:make_fuzz_corpus -- "$PWD/tests/fuzz/corpus/checkpoint_reader"
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "runtime/checkpoint/writer.h"
#include "runtime/core/convert.h"
#include "runtime/eager/context.h"

using namespace cairn;

namespace {

Tensor ramp(Device& cpu, DType dtype, const Shape& shape) {
  Tensor t = Tensor::allocate(cpu, dtype, shape);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<T>()[i] = convert<T>(static_cast<double>(i % 13) * 0.5);
  });
  return t;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_corpus OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  Context ctx(ContextOptions{});
  Device& cpu = ctx.cpu();
  ckpt::WriteOptions raw, z;
  z.compress = true;

  // 1. The smallest useful file: one scalar, no graph.
  ckpt::write_checkpoint(dir + "/scalar", {}, {ckpt::SaveEntry("x", ramp(cpu, DType::Float32, Shape{}))}, {}, raw);

  // 2. A graph, metadata and all three codecs.
  ckpt::ObjectGraph g;
  g.nodes.resize(4);
  g.nodes[0].kind = 1;
  g.nodes[0].children = {{"v", 1}, {"opt", 2}};
  g.nodes[1].kind = 2;
  g.nodes[1].attributes = {{"VARIABLE_VALUE", "v/.ATTRIBUTES/VARIABLE_VALUE"}};
  g.nodes[2].kind = 6;
  g.nodes[2].slots = {{2, 1, "m", 3}};
  g.nodes[3].kind = 2;
  g.nodes[3].attributes = {{"VARIABLE_VALUE", "v/.OPTIMIZER_SLOT/opt/m"}};
  ckpt::Metadata m;
  m.save_counter = 2;
  m.library_version = "0.1.0";
  m.user = {{"k", "v"}};
  std::vector<ckpt::SaveEntry> entries = {
      ckpt::SaveEntry("v/.ATTRIBUTES/VARIABLE_VALUE", ramp(cpu, DType::Float32, Shape{8, 8})),
      ckpt::SaveEntry("v/.OPTIMIZER_SLOT/opt/m", ramp(cpu, DType::Int32, Shape{64})),
      ckpt::SaveEntry("small", ramp(cpu, DType::Float16, Shape{3})),
      ckpt::SaveEntry::string_scalar("note", "seed"),
  };
  ckpt::write_checkpoint(dir + "/graph_codecs", g, entries, m, z);

  // 3. Uncompressed, with empty and complex tensors.
  ckpt::write_checkpoint(dir + "/raw_mixed", {},
                         {ckpt::SaveEntry("c", ramp(cpu, DType::Complex64, Shape{2, 2})),
                          ckpt::SaveEntry("e", ramp(cpu, DType::Int64, Shape{0, 3})),
                          ckpt::SaveEntry("b", ramp(cpu, DType::Bool, Shape{5}))},
                         {}, raw);

  // 4. Truncated copies of 2: through the payloads, and just short of the footer.
  std::string full = slurp(dir + "/graph_codecs");
  spit(dir + "/truncated_half", full.substr(0, full.size() / 2));
  spit(dir + "/truncated_footer", full.substr(0, full.size() - 7));
  return 0;
}
