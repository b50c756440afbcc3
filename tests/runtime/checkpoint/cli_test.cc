// The `cairn ckpt` commands, run as the built binary: output and exit codes on good and damaged files.
#include <sys/wait.h>

#include <cstdio>

#include "runtime/checkpoint/shard_index.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

const char* kCli = "tools/cli/cairn";
const char* kGoldenV1 = "tests/golden/checkpoint_v1.cairn";

struct Run {
  int status = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

Run run(const std::string& args) {
  std::string dir = make_temp_dir();
  std::string cmd = std::string(kCli) + " " + args + " >" + dir + "/out 2>" + dir + "/err";
  int raw = std::system(cmd.c_str());
  Run r;
  REQUIRE(WIFEXITED(raw));
  r.status = WEXITSTATUS(raw);
  r.out = read_file(dir + "/out");
  r.err = read_file(dir + "/err");
  return r;
}

std::string damaged_copy(const std::string& key) {
  std::string bytes = read_file(kGoldenV1);
  ckpt::Reader r = ckpt::Reader::open(kGoldenV1);
  const ckpt::TensorInfo& e = r.info(key);
  bytes[e.offset + e.stored_size / 2] ^= 0x04;
  std::string path = make_temp_dir() + "/damaged";
  write_file(path, bytes);
  return path;
}

TEST_CASE("ckpt ls lists every key with dtype, shape, stored size and codec") {
  Run r = run(std::string("ckpt ls ") + kGoldenV1);
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  CHECK(r.out.find("net/dense/bias/.ATTRIBUTES/VARIABLE_VALUE    float32    [4]") != std::string::npos);
  CHECK(r.out.find("save_counter/.ATTRIBUTES/VARIABLE_VALUE      int64      []        8  none\n") != std::string::npos);
  CHECK(r.out.find("zstd+shuffle") != std::string::npos);
  CHECK(r.out.rfind("_CHECKPOINTABLE_OBJECT_GRAPH ", 0) == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 16);

  Run missing = run("ckpt ls /no/such/checkpoint");
  CHECK(missing.status == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("cairn: /no/such/checkpoint: cannot open checkpoint") != std::string::npos);
  CHECK(run("ckpt ls").status != 0);  // usage error
}

TEST_CASE("ckpt ls and verify read a sharded checkpoint through its index") {
  const std::string dir = make_temp_dir();
  const Sample s = make_sample();
  ckpt::ShardIndex index;
  for (int r = 0; r < 2; ++r) {
    std::vector<ckpt::SaveEntry> mine;
    for (size_t i = r; i < s.entries.size(); i += 2) mine.push_back(s.entries[i]);
    const std::string file = dir + "/" + ckpt::shard_file_name("ckpt-1", r, 2, 7);
    ckpt::WriteOptions o;
    o.fsync = false;
    ckpt::write_checkpoint(file, ckpt::ObjectGraph{}, mine, s.metadata, o);
    index.shards.push_back(ckpt::describe_shard(file));
    for (const auto& e : mine) index.keys.emplace_back(e.key, r);
  }
  std::sort(index.keys.begin(), index.keys.end());
  write_file(dir + "/ckpt-1", ckpt::encode_shard_index(index));
  Run ls = run("ckpt ls " + dir + "/ckpt-1");
  CHECK(ls.status == 0);
  CHECK(ls.out.find("ckpt-1.shard-1-of-2-0000000000000007") != std::string::npos);
  CHECK(static_cast<size_t>(std::count(ls.out.begin(), ls.out.end(), '\n')) == s.entries.size() + 1);
  Run verify = run("ckpt verify " + dir + "/ckpt-1");
  CHECK(verify.status == 0);
  CHECK(verify.out.find("entries verified (cairn)") != std::string::npos);
}

TEST_CASE("ckpt verify: 0 on a good file, 1 naming the damaged key") {
  Run good = run(std::string("ckpt verify ") + kGoldenV1);
  CHECK(good.status == 0);
  CHECK(good.out.find("all 16 entries verified") != std::string::npos);

  for (const char* key : {"net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE", "dtypes/int8", "notes"}) {
    CAPTURE(key);
    std::string path = damaged_copy(key);
    Run bad = run("ckpt verify " + path);
    CHECK(bad.status == 1);
    CHECK(bad.err.find(std::string("DAMAGED ") + key + ": " + path + ": checksum mismatch for key '" + key + "'") !=
          std::string::npos);
    CHECK(bad.out.find("1 of 16 entries damaged") != std::string::npos);
    // ls still works: the index is intact.
    CHECK(run("ckpt ls " + path).status == 0);
  }

  // A damaged index: verify exits 1 too.
  std::string bytes = read_file(kGoldenV1);
  bytes[bytes.size() - 60] ^= 1;
  std::string path = make_temp_dir() + "/bad_index";
  write_file(path, bytes);
  Run bad = run("ckpt verify " + path);
  CHECK(bad.status == 1);
  CHECK(bad.err.find("index checksum mismatch") != std::string::npos);
  CHECK(run("ckpt ls " + path).status == 2);
}

TEST_CASE("ckpt show prints values like NumPy, abbreviating large tensors") {
  Run r = run(std::string("ckpt show ") + kGoldenV1 + " dtypes/int32");
  CHECK(r.status == 0);
  CHECK(r.out == "dtypes/int32: int32[2,2] (16 bytes, stored 16 as none)\n[[ 1, -2],\n [ 3, -4]]\n");
  r = run(std::string("ckpt show ") + kGoldenV1 + " save_counter/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(r.out.find("\n7\n") != std::string::npos);
  r = run(std::string("ckpt show ") + kGoldenV1 + " dtypes/bool");
  CHECK(r.out.find("[ true, false,  true]") != std::string::npos);
  r = run(std::string("ckpt show ") + kGoldenV1 + " dtypes/int32_ramp");
  CHECK(r.out.find("[  0,   1,   2,") != std::string::npos);  // 256 elements: not abbreviated
  r = run(std::string("ckpt show ") + kGoldenV1 + " net/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(r.out.find("[[   -8,  -7.5,    -7,") != std::string::npos);
  r = run(std::string("ckpt show ") + kGoldenV1 + " notes");
  CHECK(r.out.find("\"golden checkpoint v1\"") != std::string::npos);
  r = run(std::string("ckpt show ") + kGoldenV1 + " _CHECKPOINTABLE_OBJECT_GRAPH");
  CHECK(r.out.find("node 5 (optimizer)\n  slot m: optimizer node 5, variable node 3 -> node 6") != std::string::npos);
  r = run(std::string("ckpt show ") + kGoldenV1 + " nope");
  CHECK(r.status == 2);
  CHECK(r.err.find("no key named 'nope'") != std::string::npos);
}

TEST_CASE("ckpt show abbreviates like NumPy above 1000 elements") {
  std::string path = make_temp_dir() + "/big";
  ckpt::WriteOptions o;
  o.fsync = false;
  Tensor t = Tensor::allocate(ctx().cpu(), DType::Int32, Shape{40, 30});
  for (int i = 0; i < 1200; ++i) t.mutable_data<int32_t>()[i] = i;
  ckpt::write_checkpoint(path, {}, {ckpt::SaveEntry("t", t)}, {}, o);
  Run r = run("ckpt show " + path + " t");
  CHECK(r.status == 0);
  CHECK(r.out.find("[[   0,    1,    2, ...,   27,   28,   29],\n [  30,") != std::string::npos);
  CHECK(r.out.find(" ...,\n [1110,") != std::string::npos);
  CHECK(r.out.find("1199]]\n") != std::string::npos);
}

TEST_CASE("ckpt diff reports keys only on one side, dtype/shape and value differences") {
  std::string dir = make_temp_dir();
  ckpt::WriteOptions o;
  o.fsync = false;
  std::vector<ckpt::SaveEntry> a = {ckpt::SaveEntry("same", make<float>({1, 2}, Shape{2})),
                                    ckpt::SaveEntry("only_a", scalar<int32_t>(1)),
                                    ckpt::SaveEntry("shape", make<float>({1, 2}, Shape{2})),
                                    ckpt::SaveEntry("vals", make<float>({1, 2, 3, 4}, Shape{4}))};
  std::vector<ckpt::SaveEntry> b = {ckpt::SaveEntry("same", make<float>({1, 2}, Shape{2})),
                                    ckpt::SaveEntry("only_b", scalar<int32_t>(1)),
                                    ckpt::SaveEntry("shape", make<float>({1, 2}, Shape{1, 2})),
                                    ckpt::SaveEntry("vals", make<float>({1, 2.5f, 3, 3}, Shape{4}))};
  ckpt::write_checkpoint(dir + "/a", {}, a, {}, o);
  ckpt::write_checkpoint(dir + "/b", {}, b, {}, o);
  Run r = run("ckpt diff " + dir + "/a " + dir + "/b");
  CHECK(r.status == 1);
  CHECK(r.out ==
        "only in A: only_a\n"
        "only in B: only_b\n"
        "dtype/shape differ: shape: float32[2] vs float32[1,2]\n"
        "values differ: vals: 2 of 4 elements, max abs diff 1\n");
  Run same = run("ckpt diff " + dir + "/a " + dir + "/a");
  CHECK(same.status == 0);
  CHECK(same.out == "no differences\n");
  CHECK(run("ckpt diff " + dir + "/a " + dir + "/missing").status == 2);
}

}  // namespace
}  // namespace cairn::test

// ---- TensorFlow checkpoints and safetensors through the same commands ----

namespace cairn::test {
namespace {

const char* kTfStrings = "tests/golden/tf_checkpoint/dtypes_strings/ckpt";  // written by TensorFlow 2.21
const char* kTfKeras = "tests/golden/tf_checkpoint/keras3_mlp/ckpt";
const char* kSharded = "tests/golden/safetensors/sharded";  // written by the safetensors package

TEST_CASE("ckpt ls, show and verify read TensorFlow checkpoints") {
  Run ls = run(std::string("ckpt ls ") + kTfStrings);
  CHECK(ls.status == 0);
  CHECK(ls.out.find("m/bf16/.ATTRIBUTES/VARIABLE_VALUE        bfloat16    [3]        6  shard 0") != std::string::npos);
  CHECK(ls.out.find("m/s_vec/.ATTRIBUTES/VARIABLE_VALUE") != std::string::npos);

  Run graph = run(std::string("ckpt show ") + kTfKeras + " _CHECKPOINTABLE_OBJECT_GRAPH");
  CHECK(graph.status == 0);
  CHECK(graph.out.find("node 0 (kind 0) root") != std::string::npos);  // TensorFlow's graph, decoded
  CHECK(graph.out.find("child optimizer -> node") != std::string::npos);

  Run strings = run(std::string("ckpt show ") + kTfStrings + " m/s_vec/.ATTRIBUTES/VARIABLE_VALUE");
  CHECK(strings.status == 0);
  CHECK(strings.out.find("[0] \"") != std::string::npos);

  Run ok = run(std::string("ckpt verify ") + kTfKeras);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("entries verified (tf)") != std::string::npos);

  // One flipped byte in the data shard: verify names the damaged key and exits 1.
  const std::string dir = make_temp_dir();
  write_file(dir + "/ckpt.index", read_file(std::string(kTfKeras) + ".index"));
  std::string data = read_file(std::string(kTfKeras) + ".data-00000-of-00001");
  data[data.size() / 2] ^= 0x10;
  write_file(dir + "/ckpt.data-00000-of-00001", data);
  Run bad = run("ckpt verify " + dir + "/ckpt");
  CHECK(bad.status == 1);
  CHECK(bad.err.find("DAMAGED ") != std::string::npos);
  CHECK(bad.out.find("damaged") != std::string::npos);
}

TEST_CASE("ckpt verify checks safetensors' structure and Cairn's opt-in checksums") {
  Run ls = run(std::string("ckpt ls ") + kSharded);
  CHECK(ls.status == 0);
  CHECK(ls.out.find("embed.weight    F32   [4,3]  48  F32 in model-00001-of-00003.safetensors") != std::string::npos);
  Run v = run(std::string("ckpt verify ") + kSharded);
  CHECK(v.status == 0);
  CHECK(v.out.find("structure verified; 0 of 4 entries have checksums") != std::string::npos);

  // A converted file has no checksums (the format has none; write_file's are opt-in): a flipped
  // byte inside a tensor passes, a broken structure does not.
  const std::string dir = make_temp_dir();
  Run c = run(std::string("ckpt convert ") + kTfKeras + " " + dir + "/m.safetensors --to-format safetensors");
  CHECK(c.status == 0);
  CHECK(c.err.find("skipped _CHECKPOINTABLE_OBJECT_GRAPH") != std::string::npos);  // no strings in safetensors
  Run d = run(std::string("ckpt diff ") + kTfKeras + " " + dir + "/m.safetensors");
  CHECK(d.status == 1);  // only the graph differs
  CHECK(d.out == "only in A: _CHECKPOINTABLE_OBJECT_GRAPH\n");

  std::string bytes = read_file(dir + "/m.safetensors");
  bytes[bytes.size() - 2] ^= 0x01;  // inside the last tensor: no checksum catches it, the structure is fine
  write_file(dir + "/flipped.safetensors", bytes);
  CHECK(run("ckpt verify " + dir + "/flipped.safetensors").status == 0);
  bytes.resize(bytes.size() - 1);  // a truncated file breaks a rule
  write_file(dir + "/short.safetensors", bytes);
  Run t = run("ckpt verify " + dir + "/short.safetensors");
  CHECK(t.status == 1);
  CHECK(t.err.find("DAMAGED ") != std::string::npos);
}

TEST_CASE("ckpt convert carries every value between the three formats") {
  const std::string dir = make_temp_dir();
  // TensorFlow -> Cairn -> TensorFlow: the same values (string vectors do not fit a Cairn file).
  Run a = run(std::string("ckpt convert ") + kTfKeras + " " + dir + "/c.cairn --to-format cairn");
  CHECK(a.status == 0);
  Run b = run("ckpt convert " + dir + "/c.cairn " + dir + "/back --to-format tf");
  CHECK(b.status == 0);
  Run same = run(std::string("ckpt diff ") + kTfKeras + " " + dir + "/back");
  CHECK(same.out == "only in A: _CHECKPOINTABLE_OBJECT_GRAPH\n");
  // safetensors shards -> TensorFlow: every tensor, equal.
  Run s = run(std::string("ckpt convert ") + kSharded + " " + dir + "/st --to-format tf");
  CHECK(s.status == 0);
  CHECK(s.out.find("4 of 4 entries written as tf (safetensors -> tf)") != std::string::npos);
  Run eq = run(std::string("ckpt diff ") + kSharded + " " + dir + "/st");
  CHECK(eq.status == 0);
  CHECK(eq.out == "no differences\n");
  // A dtype Cairn lacks stops the conversion, naming the key, and writes nothing.
  Run t = run(std::string("ckpt convert ") + kTfStrings + " " + dir + "/strings --to-format tf");
  CHECK(t.status == 2);
  CHECK(t.err.find("'m/c128/.ATTRIBUTES/VARIABLE_VALUE' has TensorFlow dtype complex128") != std::string::npos);
  CHECK(run("ckpt ls " + dir + "/strings").status == 2);
  CHECK(run("ckpt convert x y --to-format onnx").status == 2);
}

}  // namespace
}  // namespace cairn::test
