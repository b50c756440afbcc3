// The safetensors writer: the reference's bytes, atomic replacement, checksums in the metadata,
// and sharded models with their index.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "tests/runtime/safetensors/st_test_util.h"

namespace cairn::test {
namespace {

using namespace cairn::safetensors;
using Named = std::vector<std::pair<std::string, Tensor>>;

const std::string kGolden = "tests/golden/safetensors/";

// Every tensor of `f` in its file order.
Named load_all(const File& f) {
  Named out;
  for (const TensorEntry& e : f.tensors()) out.emplace_back(e.name, f.load(e.name, ctx().cpu()));
  return out;
}

Named sample_tensors() {
  return {{"w", pattern_tensor(DType::Float32, Shape{3, 4}, 0)},
          {"b", pattern_tensor(DType::Float16, Shape{4}, 1)},
          {"step", pattern_tensor(DType::Int64, Shape{}, 0)},
          {"flags", pattern_tensor(DType::Bool, Shape{5}, 0)},
          {"z", pattern_tensor(DType::Complex64, Shape{2}, 0)},
          {"none", pattern_tensor(DType::BFloat16, Shape{0, 7}, 0)}};
}

void check_same(const Named& want, const File& f) {
  REQUIRE(f.tensors().size() == want.size());
  for (const auto& [name, t] : want) {
    INFO("tensor ", name);
    CHECK(same_tensor(f.load(name, ctx().cpu()), t));
  }
}

TEST_CASE("the writer reproduces the Python package's files byte for byte") {
  for (const char* name : {"cairn_dtypes.safetensors", "numpy.safetensors", "empty.safetensors"}) {
    INFO("golden ", name);
    const std::string golden = read_file(kGolden + name);
    auto f = File::open(kGolden + name);
    WriteOptions o;
    o.metadata = f->metadata();
    Named tensors = load_all(*f);
    std::reverse(tensors.begin(), tensors.end());  // the writer sorts; the input order is free
    CHECK(serialize(tensors, o) == golden);
    const std::string path = make_temp_dir() + "/out.safetensors";
    safetensors::write_file(path, tensors, o);
    CHECK(read_file(path) == golden);
  }
}

TEST_CASE("writer: sorted by dtype then name, header padded with spaces to 8, metadata sorted") {
  WriteOptions o;
  o.metadata = {{"z", "last"}, {"a", "first \"quoted\"\t"}};
  const std::string bytes = serialize(sample_tensors(), o);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[i]);
  CHECK(n % 8 == 0);
  const std::string header = bytes.substr(8, n);
  CHECK(header.find_first_not_of(' ', header.rfind('}') + 1) == std::string::npos);
  CHECK(header.rfind(R"({"__metadata__":{"a":"first \"quoted\"\t","z":"last"},"step":{"dtype":"I64","shape":[],)", 0) == 0);
  std::vector<std::string> order;
  const std::string path = make_temp_dir() + "/s.safetensors";
  test::write_file(path, bytes);
  auto f = File::open(path);
  for (const TensorEntry& e : f->tensors()) order.push_back(e.name);
  CHECK(order == std::vector<std::string>{"step", "z", "w", "none", "b", "flags"});  // I64 C64 F32 BF16 F16 BOOL
  CHECK(f->metadata() == o.metadata);
  check_same(sample_tensors(), *f);
}

TEST_CASE("writer: what it refuses") {
  const std::string path = make_temp_dir() + "/r.safetensors";
  Tensor x = pattern_tensor(DType::Float32, Shape{2}, 0);
  CHECK_THROWS_CODE(safetensors::write_file(path, {{"a", x}, {"a", x}}), Code::InvalidArgument, "duplicate tensor name 'a'");
  CHECK_THROWS_CODE(safetensors::write_file(path, {{"__metadata__", x}}), Code::InvalidArgument, "cannot be named '__metadata__'");
  CHECK_THROWS_CODE(safetensors::write_file(path, {{"e", Tensor()}}), Code::InvalidArgument, "tensor 'e' is empty");
  CHECK_THROWS_CODE(safetensors::write_file(path, {{"bad\xff", x}}), Code::InvalidArgument, "tensor name 'bad");
  WriteOptions bad_meta;
  bad_meta.metadata = {{"k", "\xc3"}};
  CHECK_THROWS_CODE(safetensors::write_file(path, {{"a", x}}, bad_meta), Code::InvalidArgument, "metadata value");
  CHECK(list_dir(path.substr(0, path.rfind('/'))).empty());  // nothing written, no temporary left
  CHECK_THROWS_CODE(safetensors::write_file("/nonexistent/dir/x.safetensors", {{"a", x}}), Code::NotFound, "/nonexistent/dir");
}

TEST_CASE("a failed write leaves the old file as it was") {
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/m.safetensors";
  Named small = {{"a", pattern_tensor(DType::Float32, Shape{4}, 0)}};
  safetensors::write_file(path, small);
  const std::string before = read_file(path);
  // A file-size limit makes write(2) fail half way (EFBIG) for the larger file.
  struct rlimit old_limit;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limit) == 0);
  bool threw = false;
  try {
    safetensors::write_file(path, {{"big", pattern_tensor(DType::Float32, Shape{4096}, 0)}});
  } catch (const Error& e) {
    threw = true;
    CHECK_MESSAGE(e.message().find("write") != std::string::npos, e.message());
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  CHECK(threw);
  CHECK(read_file(path) == before);
  CHECK(list_dir(dir) == std::vector<std::string>{"m.safetensors"});
}

TEST_CASE("tensors on a device without host memory are written through Device::read") {
  Ref<HandleDevice> dev = make_ref<HandleDevice>();
  Named host = sample_tensors(), remote;
  for (const auto& [name, t] : host) remote.emplace_back(name, tensor_on_device(t, *dev));
  CHECK(serialize(remote) == serialize(host));
}

// ---- Checksums -----------------------------------------------------------------------------------

// `path` with one byte of tensor `name` flipped.
void corrupt(const std::string& path, const std::string& name) {
  std::string bytes = read_file(path);
  uint64_t at;
  {
    auto f = File::open(path);
    at = bytes.size() - f->tensors().back().end + f->find(name)->begin;  // data start + offset
  }
  bytes[at] ^= 0x20;
  test::write_file(path, bytes);
}

TEST_CASE("opt-in checksums: written in the metadata, verified on load, DataLoss naming the tensor") {
  const std::string path = make_temp_dir() + "/c.safetensors";
  WriteOptions o;
  o.checksums = true;
  o.metadata = {{"format", "pt"}};
  safetensors::write_file(path, sample_tensors(), o);
  {
    auto f = File::open(path);
    CHECK(f->metadata().at("format") == "pt");
    CHECK(f->metadata().count("cairn.checksum.w") == 1);
    CHECK(f->metadata().at("cairn.checksum.w").rfind("xxh3:", 0) == 0);
    CHECK(f->verify("w"));
    check_same(sample_tensors(), *f);
  }
  corrupt(path, "w");
  auto f = File::open(path);  // opening still works: the checksum is per tensor
  CHECK_THROWS_CODE(f->load("w", ctx().cpu()), Code::DataLoss, "tensor 'w': checksum mismatch");
  CHECK_THROWS_CODE(f->verify("w"), Code::DataLoss, "tensor 'w'");
  CHECK(same_tensor(f->load("b", ctx().cpu()), sample_tensors()[1].second));
  ReadOptions trusting;
  trusting.verify_checksums = false;
  CHECK(File::open(path, trusting)->load("w", ctx().cpu()).valid());

  // Without checksums a corrupted byte loads silently: the reason the option exists.
  const std::string plain = make_temp_dir() + "/p.safetensors";
  safetensors::write_file(plain, sample_tensors());
  corrupt(plain, "w");
  auto p = File::open(plain);
  CHECK_FALSE(p->verify("w"));
  CHECK_FALSE(same_tensor(p->load("w", ctx().cpu()), sample_tensors()[0].second));
}

TEST_CASE("a malformed checksum is DataLoss; one for a tensor not in the file is ignored") {
  const std::string t = R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  CHECK_THROWS_CODE(File::open(st_file(R"({"__metadata__":{"cairn.checksum.a":"crc:12"},)" + t + "}", "x")), Code::DataLoss,
                    "metadata 'cairn.checksum.a' = 'crc:12'");
  CHECK_THROWS_CODE(File::open(st_file(R"({"__metadata__":{"cairn.checksum.a":"xxh3:0123456789ABCDEF"},)" + t + "}", "x")),
                    Code::DataLoss, "16 hex digits");
  auto f = File::open(st_file(R"({"__metadata__":{"cairn.checksum.gone":"xxh3:0123456789abcdef"},)" + t + "}", "x"));
  CHECK(f->load("a", ctx().cpu()).valid());
}

// ---- Sharded models ------------------------------------------------------------------------------

Named model_tensors() {
  Named out;
  for (int i = 0; i < 5; ++i) out.emplace_back(fmt::format("layer.{}.weight", i), pattern_tensor(DType::Float32, Shape{10, 10}, 0, i));
  out.emplace_back("embed", pattern_tensor(DType::Float32, Shape{100, 10}, 0));  // 4000 bytes: over the limit alone
  out.emplace_back("bias", pattern_tensor(DType::Float16, Shape{10}, 1));
  return out;
}

TEST_CASE("write_sharded: greedy shards, transformers' index, read back as one model") {
  const std::string dir = make_temp_dir();
  WriteOptions o;
  o.metadata = {{"format", "pt"}};
  o.checksums = true;
  write_sharded(dir, model_tensors(), 1000, o);  // 400-byte layers: two per shard
  CHECK(list_dir(dir) == std::vector<std::string>{"model-00001-of-00005.safetensors", "model-00002-of-00005.safetensors",
                                                  "model-00003-of-00005.safetensors", "model-00004-of-00005.safetensors",
                                                  "model-00005-of-00005.safetensors", "model.safetensors.index.json"});
  const std::string index = read_file(dir + "/model.safetensors.index.json");
  CHECK(index.rfind("{\n  \"metadata\": {\n    \"total_size\": 6020\n  },\n  \"weight_map\": {\n    \"bias\": \"model-00005-of-00005.safetensors\",\n", 0) == 0);
  CHECK(index.back() == '\n');
  Model m = Model::open(dir);
  CHECK(m.files().size() == 5);
  CHECK(m.file_of("embed")->path() == dir + "/model-00004-of-00005.safetensors");
  CHECK(m.file_of("layer.4.weight")->path() == dir + "/model-00003-of-00005.safetensors");
  CHECK(m.metadata().at("format") == "pt");
  for (const auto& [name, t] : model_tensors()) CHECK(same_tensor(m.load(name, ctx().cpu()), t));
  CHECK_THROWS_CODE(m.load("missing", ctx().cpu()), Code::NotFound, "no tensor 'missing'");

  // Fewer shards next time: the old ones go; one shard: model.safetensors and no index.
  write_sharded(dir, model_tensors(), 5000);
  CHECK(list_dir(dir).size() == 3);
  write_sharded(dir, model_tensors(), 1 << 20);
  CHECK(list_dir(dir) == std::vector<std::string>{"model.safetensors"});
  Model single = Model::open(dir);
  CHECK(single.names().size() == model_tensors().size());
  CHECK(Model::open(dir + "/model.safetensors").names() == single.names());
  CHECK_THROWS_CODE(write_sharded(dir, model_tensors(), 0), Code::InvalidArgument, "max_shard_bytes");
  CHECK_THROWS_CODE(write_sharded(dir + "/nope", model_tensors(), 10), Code::NotFound, "not a directory");
  Named dup = model_tensors();
  dup.push_back(dup[0]);
  CHECK_THROWS_CODE(write_sharded(dir, dup, 1000), Code::InvalidArgument, "duplicate tensor name 'layer.0.weight'");
}

TEST_CASE("a sharded model whose index lies is rejected") {
  auto setup = [](const std::string& index) {
    const std::string dir = make_temp_dir();
    safetensors::write_file(dir + "/model-00001-of-00001.safetensors", {{"a", pattern_tensor(DType::Float32, Shape{2}, 0)}});
    test::write_file(dir + "/model.safetensors.index.json", index);
    return dir;
  };
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":{"a":"../x.safetensors"}})")), Code::DataLoss,
                    "'../x.safetensors' is not a file name in the index's directory");
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":{"b":"model-00001-of-00001.safetensors"}})")), Code::DataLoss,
                    "puts tensor 'b' in model-00001-of-00001.safetensors, which has no such tensor");
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":{"a":"model-00001-of-00001.safetensors","a":"x"}})")), Code::DataLoss,
                    "names tensor 'a' twice");
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":{"a":"other.safetensors"}})")), Code::NotFound, "other.safetensors");
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":{"a":3}})")), Code::DataLoss, "is not a file name");
  CHECK_THROWS_CODE(Model::open(setup(R"({"metadata":{}})")), Code::DataLoss, "no \"weight_map\" object");
  CHECK_THROWS_CODE(Model::open(setup(R"({"weight_map":)")), Code::DataLoss, "not valid JSON");
  CHECK_THROWS_CODE(Model::open(make_temp_dir()), Code::NotFound, "holds neither");
  Model ok = Model::open(setup(R"({"metadata":{"total_size":8,"total_parameters":2},"weight_map":{"a":"model-00001-of-00001.safetensors"}})"));
  CHECK(ok.names() == std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace cairn::test
