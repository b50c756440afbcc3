// The `cairn ckpt` commands, run as the built binary: output and exit codes on good and damaged files.
#include <sys/wait.h>

#include <cstdio>

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
