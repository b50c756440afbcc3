// The safetensors reader: files written by the Python package (tests/golden/safetensors), every
// rule of the reference with its own error, zero-copy loads, F8 conversion and checksums.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/runtime/safetensors/st_test_util.h"

namespace cairn::test {
namespace {

using namespace cairn::safetensors;
using nlohmann::json;

const std::string kGolden = "tests/golden/safetensors/";

const json& expected() {
  static const json e = json::parse(read_file(kGolden + "expected.json"));
  return e;
}

double expected_number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<double>();
}

// Every element of `t` against the expected values (C64: real and imaginary parts).
void check_values(const Tensor& t, const json& want, const std::string& name) {
  INFO("tensor ", name);
  std::vector<double> got, ref;
  if (t.dtype() == DType::Complex64) {
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      got.push_back(t.data<complex64>()[i].real());
      got.push_back(t.data<complex64>()[i].imag());
    }
    for (const json& v : want) {
      ref.push_back(v[0].get<double>());
      ref.push_back(v[1].get<double>());
    }
  } else {
    got = as_doubles(t);
    for (const json& v : want) ref.push_back(v.is_number_unsigned() ? static_cast<double>(v.get<uint64_t>()) : expected_number(v));
  }
  REQUIRE(got.size() == ref.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(ref[i])) {
      CHECK(std::isnan(got[i]));
    } else {
      CHECK_MESSAGE(got[i] == ref[i], "element ", i);
    }
  }
}

void check_against_expected(const std::string& file_key, const std::string& path) {
  INFO("golden ", file_key);
  const json& want = expected()["files"][file_key];
  Model m = Model::open(path);
  std::vector<std::string> names;
  for (const auto& [name, info] : want["tensors"].items()) names.push_back(name);
  std::sort(names.begin(), names.end());
  CHECK(m.names() == names);
  if (want["metadata"].is_null()) {
    CHECK(m.metadata().empty());
  } else {
    CHECK(m.metadata() == want["metadata"].get<std::map<std::string, std::string>>());
  }
  for (const auto& [name, info] : want["tensors"].items()) {
    const TensorEntry* e = m.find(name);
    REQUIRE(e != nullptr);
    CHECK(e->dtype == info["dtype"].get<std::string>());
    CHECK(e->shape.to_vector() == info["shape"].get<std::vector<int64_t>>());
    if (e->cairn_dtype == DType::Invalid) continue;  // U16/U32/U64: checked below
    check_values(m.load(name, ctx().cpu()), info["values"], name);
  }
}

TEST_CASE("goldens written by the Python package read with every value") {
  for (const char* f : {"cairn_dtypes.safetensors", "numpy.safetensors", "empty.safetensors", "f8.safetensors",
                        "unsigned.safetensors"})
    check_against_expected(f, kGolden + f);
  check_against_expected("sharded", kGolden + "sharded");
  check_against_expected("sharded", kGolden + "sharded/model.safetensors.index.json");
}

TEST_CASE("tensors are listed in offset order with the file's dtype names") {
  auto f = File::open(kGolden + "cairn_dtypes.safetensors");
  uint64_t end = 0;
  for (const TensorEntry& e : f->tensors()) {
    CHECK(e.begin == end);
    end = e.end;
  }
  CHECK(f->tensors().front().dtype == "I64");  // the writer puts the widest dtypes first
  CHECK(f->find("bf16")->cairn_dtype == DType::BFloat16);
  CHECK(f->find("c64")->cairn_dtype == DType::Complex64);
  CHECK(f->find("nope") == nullptr);
  CHECK_THROWS_CODE(f->load("nope", ctx().cpu()), Code::NotFound, "no tensor 'nope'");
}

TEST_CASE("dtypes Cairn lacks are listed, and loading one names the tensor") {
  auto f = File::open(kGolden + "unsigned.safetensors");
  for (const char* name : {"u16", "u32", "u64"}) {
    REQUIRE(f->find(name) != nullptr);
    CHECK(f->find(name)->cairn_dtype == DType::Invalid);
    CHECK_THROWS_CODE(f->load(name, ctx().cpu()), Code::Unimplemented, std::string("tensor '") + name + "'");
  }
  CHECK(as_doubles(f->load("f32", ctx().cpu())) == std::vector<double>{1.0, 2.0});
}

TEST_CASE("F8 loads as float32 or float16, every byte exactly") {
  const json& want = expected()["files"]["f8.safetensors"]["tensors"];
  ReadOptions half;
  half.f8_as = DType::Float16;
  auto f = File::open(kGolden + "f8.safetensors", half);
  for (const char* name : {"e5m2", "e4m3"}) {
    Tensor t = f->load(name, ctx().cpu());
    CHECK(t.dtype() == DType::Float16);
    check_values(t, want[name]["values"], name);  // every F8 value is a float16 value too
  }
  ReadOptions bad;
  bad.f8_as = DType::Int32;
  CHECK_THROWS_CODE(File::open(kGolden + "f8.safetensors", bad), Code::InvalidArgument, "f8_as");
}

// ---- The rules, one by one ----------------------------------------------------------------------

void check_rejected(const std::string& bytes, Code code, const std::string& fragment) {
  const std::string path = make_temp_dir() + "/bad.safetensors";
  write_file(path, bytes);
  CHECK_THROWS_CODE(File::open(path), code, fragment);
}
void check_rejected_header(const std::string& header, const std::string& data, Code code, const std::string& fragment) {
  INFO("header: ", header);
  check_rejected(st_bytes(header, data), code, fragment);
}

TEST_CASE("header length rules") {
  check_rejected("", Code::DataLoss, "shorter than the 8-byte header length");
  check_rejected("1234567", Code::DataLoss, "shorter than the 8-byte header length");
  // N over the reference's limit is rejected before anything is read or allocated.
  std::string huge(8, '\0');
  const uint64_t n = 100'000'001;
  for (int i = 0; i < 8; ++i) huge[i] = static_cast<char>(n >> (8 * i));
  check_rejected(huge + "{}", Code::DataLoss, "over the limit of 100000000");
  check_rejected(std::string(8, '\xff'), Code::DataLoss, "over the limit");
  std::string past = st_bytes("{}      ");
  past[0] = 9;
  check_rejected(past, Code::DataLoss, "runs past the end");
}

TEST_CASE("header JSON rules") {
  const Code loss = Code::DataLoss;
  check_rejected_header("", "", loss, "invalid JSON");
  check_rejected_header("{\"a\":", "", loss, "invalid JSON");
  check_rejected_header("{} x", "", loss, "invalid JSON");
  check_rejected_header(std::string("{}\0\0\0\0\0\0", 8), "", loss, "invalid JSON");  // padding must be spaces
  check_rejected_header("[]", "", loss, "an array where the header object");
  check_rejected_header("\"x\"", "", loss, "a string where the header object");
  check_rejected_header("{\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}, \"\xff\":1}", "1234", loss,
                        "invalid JSON");  // not UTF-8
  check_rejected_header(R"({"a":[]})", "", loss, "an array where a tensor object");
  check_rejected_header(R"({"a":{"shape":[],"data_offsets":[0,0]}})", "", loss, "tensor 'a' has no 'dtype'");
  check_rejected_header(R"({"a":{"dtype":"F32","data_offsets":[0,0]}})", "", loss, "tensor 'a' has no 'shape'");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[0]}})", "", loss, "tensor 'a' has no 'data_offsets'");
  check_rejected_header(R"({"a":{"dtype":"F32","dtype":"F32","shape":[0],"data_offsets":[0,0]}})", "", loss,
                        "duplicate field 'dtype'");
  check_rejected_header(R"({"a":{"dtype":4,"shape":[0],"data_offsets":[0,0]}})", "", loss, "a dtype string");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", "", loss, "negative number -1");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}})", "1234", loss, "not an unsigned");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[18446744073709551616],"data_offsets":[0,4]}})", "1234", loss,
                        "not an unsigned");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", "1234", loss, "more than 2 numbers");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4]}})", "1234", loss, "has 1 numbers, not 2");
  check_rejected_header(R"({"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}})", std::string(16, 'x'), loss,
                        "tensor 'a': unknown dtype 'F128'");
  check_rejected_header(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", "1234",
                        Code::Unimplemented, "tensor 'a' has more than 8 dimensions");
}

TEST_CASE("duplicate names and metadata rules") {
  const std::string t = R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  check_rejected_header("{\"a\":" + t + ",\"a\":" + t + "}", "x", Code::DataLoss, "duplicate name 'a'");
  check_rejected_header(R"({"__metadata__":{},"__metadata__":{}})", "", Code::DataLoss, "duplicate name '__metadata__'");
  check_rejected_header(R"({"__metadata__":{"k":1}})", "", Code::DataLoss, "__metadata__ values are strings");
  check_rejected_header(R"({"__metadata__":{"k":{"x":"y"}}})", "", Code::DataLoss, "__metadata__ values are strings");
  check_rejected_header(R"({"__metadata__":{"k":"a","k":"b"}})", "", Code::DataLoss, "duplicate __metadata__ key 'k'");
  check_rejected_header(R"({"__metadata__":[]})", "", Code::DataLoss, "the __metadata__ object");
  // Accepted as the reference accepts them: null metadata, and fields it does not know.
  auto f = File::open(st_file(R"({"__metadata__":null,"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":[{"y":[1,[]]},null]}})", "z"));
  CHECK(f->metadata().empty());
  CHECK(as_doubles(f->load("a", ctx().cpu())) == std::vector<double>{'z'});
}

TEST_CASE("offset and size rules") {
  const Code loss = Code::DataLoss;
  auto entry = [](const char* name, const char* dtype, const char* shape, uint64_t b, uint64_t e) {
    return fmt::format(R"("{}":{{"dtype":"{}","shape":{},"data_offsets":[{},{}]}})", name, dtype, shape, b, e);
  };
  auto header = [](const std::vector<std::string>& entries) { return "{" + fmt::format("{}", fmt::join(entries, ",")) + "}"; };
  const std::string d8(8, 'x');
  check_rejected_header(header({entry("a", "F32", "[1]", 0, 8)}), d8, loss, "tensor 'a': data_offsets [0, 8] hold 8 bytes, but F32 [1]");
  check_rejected_header(header({entry("a", "F32", "[2]", 0, 8), entry("b", "F32", "[2]", 4, 12)}), d8 + "xxxx", loss,
                        "tensor 'b': data_offsets [4, 12] overlap the previous tensor");
  check_rejected_header(header({entry("a", "F32", "[1]", 0, 4), entry("b", "F32", "[1]", 8, 12)}), d8 + "xxxx", loss,
                        "tensor 'b': data_offsets [8, 12] leave bytes 4..8 covered by no tensor");
  check_rejected_header(header({entry("a", "F32", "[1]", 4, 8)}), d8, loss, "leave bytes 0..4");
  check_rejected_header(header({entry("a", "F32", "[1]", 0, 4), entry("b", "F32", "[0]", 4, 0)}), "xxxx", loss,
                        "tensor 'b': data_offsets [4, 0] end before they begin");
  check_rejected_header(header({entry("a", "F32", "[2]", 0, 8)}), "xxxx", loss, "past the end of the data (4 bytes)");
  check_rejected_header(header({entry("a", "F32", "[1]", 0, 4)}), d8, loss, "4 trailing bytes after the last tensor");
  check_rejected_header(header({}), "x", loss, "1 trailing bytes");
  // Overflows: the element count, then the byte count; neither allocates what it claims.
  check_rejected_header(header({entry("a", "F32", "[4294967296,4294967296]", 0, 4)}), "xxxx", loss,
                        "shape [4294967296,4294967296] overflows the element count");
  check_rejected_header(header({entry("a", "F64", "[4611686018427387904]", 0, 4)}), "xxxx", loss, "overflow the byte count");
  check_rejected_header(header({entry("a", "F32", "[1000000000000]", 0, 4000000000000)}), "xxxx", loss, "past the end of the data");
  check_rejected_header(header({entry("a", "F4", "[3]", 0, 1)}), "x", loss, "do not fill whole bytes");
  // Empty tensors may share an offset, and sit anywhere.
  auto f = File::open(st_file(header({entry("z", "F32", "[0]", 4, 4), entry("a", "F32", "[1]", 0, 4), entry("e", "I64", "[0,2]", 0, 0)}),
                              std::string("\0\0\x80\x3f", 4)));
  std::vector<std::string> order;
  for (const TensorEntry& e : f->tensors()) order.push_back(e.name);
  CHECK(order == std::vector<std::string>{"e", "a", "z"});
  CHECK(as_doubles(f->load("a", ctx().cpu())) == std::vector<double>{1.0});
  CHECK(f->load("e", ctx().cpu()).shape() == Shape{0, 2});
}

TEST_CASE("open errors name the file") {
  CHECK_THROWS_CODE(File::open("/nonexistent/x.safetensors"), Code::NotFound, "/nonexistent/x.safetensors");
  CHECK_THROWS_CODE(File::open(make_temp_dir()), Code::InvalidArgument, "is a directory");
}

// ---- Zero-copy, copies and other devices ---------------------------------------------------------

TEST_CASE("aligned CPU loads borrow the mapping, which outlives the File") {
  auto f = File::open(kGolden + "numpy.safetensors");
  const TensorEntry* e = f->find("layer.0.kernel");
  const void* in_file = f->raw_bytes(*e).data();
  Tensor a = f->load("layer.0.kernel", ctx().cpu());
  Tensor b = f->load("layer.0.kernel", ctx().cpu());
  CHECK(a.raw_data() == in_file);
  CHECK(b.raw_data() == in_file);
  CHECK(a.device() == &ctx().cpu());
  f.reset();  // the tensors keep the mapping alive
  CHECK(as_doubles(a) == std::vector<double>{0, 1, 2, 3, 4, 5});
  Tensor sum = run1("Add", {a, b});
  CHECK(as_doubles(sum) == std::vector<double>{0, 2, 4, 6, 8, 10});
}

TEST_CASE("misaligned data and zero_copy=false copy") {
  // A float32 tensor at data offset 1: a pointer kernels must not read floats through.
  const std::string header = R"({"b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"f":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
  std::string data = "\x07";
  const float v[2] = {1.5f, -2.0f};
  data.append(reinterpret_cast<const char*>(v), 8);
  const std::string path = st_file(header + std::string((8 - header.size() % 8) % 8, ' '), data);
  auto f = File::open(path);
  Tensor t = f->load("f", ctx().cpu());
  CHECK(t.raw_data() != f->raw_bytes(*f->find("f")).data());
  CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % alignof(float) == 0);
  CHECK(as_doubles(t) == std::vector<double>{1.5, -2.0});
  CHECK(f->load("b", ctx().cpu()).raw_data() == f->raw_bytes(*f->find("b")).data());  // bytes are always aligned

  ReadOptions copy;
  copy.zero_copy = false;
  auto g = File::open(kGolden + "numpy.safetensors", copy);
  Tensor c = g->load("layer.0.kernel", ctx().cpu());
  CHECK(c.raw_data() != g->raw_bytes(*g->find("layer.0.kernel")).data());
  CHECK(as_doubles(c) == std::vector<double>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("loads onto a device without host memory copy through Device::write") {
  Ref<HandleDevice> dev = make_ref<HandleDevice>();
  auto f = File::open(kGolden + "cairn_dtypes.safetensors");
  for (const TensorEntry& e : f->tensors()) {
    Tensor t = f->load(e.name, *dev);
    CHECK(t.device() == dev.get());
    CHECK(tensor_bytes(t) == std::string(f->raw_bytes(e)));
  }
  auto f8 = File::open(kGolden + "f8.safetensors");
  Tensor on_dev = f8->load("e4m3", *dev);
  Tensor on_cpu = f8->load("e4m3", ctx().cpu());
  CHECK(tensor_bytes(on_dev) == tensor_bytes(on_cpu));
}

TEST_CASE("Tensor::borrow_host holds its owner until the last copy goes") {
  bool freed = false;
  auto storage = std::shared_ptr<float>(new float[4]{1, 2, 3, 4}, [&](float* p) {
    freed = true;
    delete[] p;
  });
  const float* data = storage.get();
  Tensor t = Tensor::borrow_host(ctx().cpu(), DType::Float32, Shape{2, 2}, data, storage);
  storage.reset();
  CHECK_FALSE(freed);
  CHECK(t.nbytes() == 16);
  {
    Tensor copy = t;
    t = Tensor();
    CHECK_FALSE(freed);
    CHECK(as_doubles(copy) == std::vector<double>{1, 2, 3, 4});
  }
  CHECK(freed);
  Ref<HandleDevice> dev = make_ref<HandleDevice>();
  CHECK_THROWS_CODE(Tensor::borrow_host(*dev, DType::Float32, Shape{1}, data, nullptr), Code::InvalidArgument,
                    "cannot borrow host memory on device handles");
}

TEST_CASE("concurrent loads from one File") {
  auto f = File::open(kGolden + "cairn_dtypes.safetensors");
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        for (const TensorEntry& e : f->tensors())
          if (tensor_bytes(f->load(e.name, ctx().cpu())) != std::string(f->raw_bytes(e))) ++bad;
    });
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
}

}  // namespace
}  // namespace cairn::test
