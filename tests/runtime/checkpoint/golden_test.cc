// The committed golden checkpoint of format version 1 reads back exactly (tests/golden/README.md).
#include "tests/golden/checkpoint_v1_contents.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

const char* kGoldenV1 = "tests/golden/checkpoint_v1.cairn";

TEST_CASE("golden v1: listing") {
  Reader r = Reader::open(kGoldenV1);
  CHECK(r.format_version() == 1);
  struct Row {
    const char* key;
    const char* dtype;
    const char* shape;
    const char* codec;
  };
  const Row want[] = {
      {"_CHECKPOINTABLE_OBJECT_GRAPH", "string", "[]", "zstd"},
      {"dtypes/bfloat16", "bfloat16", "[2]", "none"},
      {"dtypes/bool", "bool", "[3]", "none"},
      {"dtypes/complex64", "complex64", "[2]", "none"},
      {"dtypes/float64", "float64", "[3]", "none"},
      {"dtypes/int16", "int16", "[3]", "none"},
      {"dtypes/int32", "int32", "[2,2]", "none"},
      {"dtypes/int32_ramp", "int32", "[256]", "zstd"},
      {"dtypes/int64_empty", "int64", "[2,0]", "none"},
      {"dtypes/int8", "int8", "[4]", "none"},
      {"dtypes/uint8", "uint8", "[5]", "none"},
      {"net/dense/bias/.ATTRIBUTES/VARIABLE_VALUE", "float32", "[4]", "none"},
      {"net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", "float32", "[4,64]", "zstd+shuffle"},
      {"net/dense/kernel/.OPTIMIZER_SLOT/opt/m", "float16", "[4,64]", "zstd+shuffle"},
      {"notes", "string", "[]", "none"},
      {"save_counter/.ATTRIBUTES/VARIABLE_VALUE", "int64", "[]", "none"},
  };
  REQUIRE(r.entries().size() == std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) {
    const TensorInfo& e = r.entries()[i];
    CAPTURE(e.key);
    CHECK(e.key == want[i].key);
    CHECK(std::string(dtype_name(e.dtype)) == want[i].dtype);
    CHECK(e.shape.str() == want[i].shape);
    CHECK(std::string(codec_name(e.codec)) == want[i].codec);
    r.verify(e);
  }
}

TEST_CASE("golden v1: values, graph and metadata") {
  Reader r = Reader::open(kGoldenV1);
  for (const SaveEntry& e : golden::checkpoint_v1_entries(ctx().cpu())) {
    CAPTURE(e.key);
    if (e.is_string) CHECK(r.load_string(e.key) == e.bytes);
    else CHECK(same_tensor(r.load(e.key, ctx().cpu()), e.tensor));
  }
  CHECK(r.graph() == golden::checkpoint_v1_graph());
  CHECK(parse_object_graph(r.load_string(kObjectGraphKey)) == golden::checkpoint_v1_graph());
  CHECK(r.metadata() == golden::checkpoint_v1_metadata());

  // Literal spot checks, independent of the contents file.
  CHECK(values<float>(r.load("net/dense/bias/.ATTRIBUTES/VARIABLE_VALUE", ctx().cpu())) ==
        std::vector<float>{0.1f, -0.2f, 0.3f, -0.4f});
  CHECK(values<int64_t>(r.load("save_counter/.ATTRIBUTES/VARIABLE_VALUE", ctx().cpu())) == std::vector<int64_t>{7});
  std::vector<float> kernel = values<float>(r.load("net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", ctx().cpu()));
  CHECK(kernel.front() == -8.0f);
  CHECK(kernel[65] == 24.5f);
  CHECK(kernel.back() == 119.5f);
  CHECK(as_doubles(r.load("net/dense/kernel/.OPTIMIZER_SLOT/opt/m", ctx().cpu()))[13] == 0.625);
  CHECK(values<int8_t>(r.load("dtypes/int8", ctx().cpu())) == std::vector<int8_t>{-128, -1, 0, 127});
  CHECK(values<complex64>(r.load("dtypes/complex64", ctx().cpu()))[1] == complex64(0.5f, 2.0f));
  CHECK(bools(r.load("dtypes/bool", ctx().cpu())) == std::vector<int>{1, 0, 1});
  CHECK(as_doubles(r.load("dtypes/bfloat16", ctx().cpu())) == std::vector<double>{1.0, -3.5});
  CHECK(values<double>(r.load("dtypes/float64", ctx().cpu()))[2] == 1e300);
  CHECK(r.load("dtypes/int64_empty", ctx().cpu()).num_elements() == 0);
  CHECK(r.load_string("notes") == "golden checkpoint v1");
  CHECK(r.metadata().save_counter == 7);
  CHECK(r.metadata().user.at("generator") == "tests/golden/make_golden_checkpoint");
  REQUIRE(r.graph().nodes.size() == 8);
  CHECK(r.graph().nodes[0].children[1].name == "opt");
  CHECK(r.graph().nodes[5].slots[0].slot_name == "m");
}

}  // namespace
}  // namespace cairn::test
