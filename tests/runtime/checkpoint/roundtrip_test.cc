// Writing and reading checkpoints: every dtype, raw and compressed, strings, graph and metadata,
// determinism, atomic replacement, writer input errors and temporary-file cleanup.
#include <unistd.h>

#include <cstring>

#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

const DType kAllDTypes[] = {DType::Float32, DType::Float64,   DType::Int32, DType::UInt8, DType::Int16,   DType::Int8,
                            DType::Complex64, DType::Int64, DType::Bool,  DType::BFloat16, DType::Float16};

WriteOptions opts(bool compress) {
  WriteOptions o;
  o.compress = compress;
  o.fsync = false;
  return o;
}

TEST_CASE("every dtype and shape round-trips, raw and compressed") {
  const Shape shapes[] = {Shape{}, Shape{0}, Shape{3, 0, 2}, Shape{5}, Shape{7, 3}, Shape{40, 33}};
  for (bool compress : {false, true}) {
    std::string dir = make_temp_dir();
    std::vector<SaveEntry> entries;
    for (DType dt : kAllDTypes)
      for (size_t si = 0; si < std::size(shapes); ++si)
        for (int pattern : {0, 1, 2})
          entries.emplace_back(fmt::format("{}/s{}/p{}", dtype_name(dt), si, pattern), pattern_tensor(dt, shapes[si], pattern, si));
    std::string path = dir + "/ckpt";
    WriteStats stats = write_checkpoint(path, ObjectGraph{}, entries, Metadata{}, opts(compress));
    CHECK(stats.entries == entries.size() + 1);
    CHECK((stats.compressed_entries > 0) == compress);

    Reader r = Reader::open(path);
    CHECK(r.format_version() == kFormatVersion);
    REQUIRE(r.entries().size() == entries.size() + 1);
    for (size_t i = 1; i < r.entries().size(); ++i) CHECK(r.entries()[i - 1].key < r.entries()[i].key);
    for (const SaveEntry& e : entries) {
      CAPTURE(e.key);
      const TensorInfo& info = r.info(e.key);
      CHECK(info.dtype == e.tensor.dtype());
      CHECK(info.shape == e.tensor.shape());
      CHECK(info.offset % kPayloadAlignment == 0);
      CHECK(info.raw_size == static_cast<uint64_t>(e.tensor.num_elements()) * dtype_size(e.tensor.dtype()));
      if (!compress) CHECK(info.codec == Codec::None);
      if (info.codec != Codec::None) CHECK(info.stored_size <= info.raw_size - info.raw_size / 20);
      Tensor t = r.load(e.key, ctx().cpu());
      CHECK(same_tensor(t, e.tensor));
      r.verify(info);
    }
    if (compress) {
      // A smooth float ramp compresses with the shuffle, an integer ramp without, random bits not at all.
      CHECK(r.info("float32/s5/p1").codec == Codec::ZstdShuffle);
      CHECK(r.info("bfloat16/s5/p1").codec == Codec::ZstdShuffle);
      CHECK(r.info("complex64/s5/p1").codec == Codec::ZstdShuffle);
      CHECK(r.info("int32/s5/p1").codec == Codec::Zstd);
      CHECK(r.info("float32/s5/p0").codec == Codec::None);
      CHECK(r.info("float32/s1/p1").codec == Codec::None);  // empty
    }
  }
}

TEST_CASE("payloads larger than the write buffer and the shuffle block") {
  std::string dir = make_temp_dir();
  std::vector<SaveEntry> entries;
  entries.emplace_back("big/ramp", pattern_tensor(DType::Float32, Shape{3, 1 << 20}, 1));      // 12 MiB, compressible
  entries.emplace_back("big/normal", pattern_tensor(DType::Float64, Shape{1 << 18, 5}, 2));    // 10 MiB, a little
  entries.emplace_back("big/random", pattern_tensor(DType::Int8, Shape{(9 << 20) + 3}, 0));    // incompressible
  for (bool compress : {false, true}) {
    std::string path = dir + (compress ? "/z" : "/raw");
    write_checkpoint(path, ObjectGraph{}, entries, Metadata{}, opts(compress));
    Reader r = Reader::open(path);
    for (const SaveEntry& e : entries) {
      CAPTURE(e.key);
      CHECK(same_tensor(r.load(e.key, ctx().cpu()), e.tensor));
      r.verify(r.info(e.key));
    }
    if (compress) {
      CHECK(r.info("big/ramp").codec == Codec::ZstdShuffle);
      CHECK(r.info("big/random").codec == Codec::None);
    }
  }
}

TEST_CASE("the highest accepted zstd level decodes within the reader's window bound") {
  std::string dir = make_temp_dir();
  WriteOptions o = opts(true);
  o.zstd_level = 19;
  Tensor t = pattern_tensor(DType::Float32, Shape{(1 << 19) + 5}, 2);  // a little over 2 MiB
  write_checkpoint(dir + "/c", ObjectGraph{}, {SaveEntry("w", t)}, Metadata{}, o);
  Reader r = Reader::open(dir + "/c");
  CHECK(r.info("w").codec == Codec::ZstdShuffle);
  CHECK(same_tensor(r.load("w", ctx().cpu()), t));
}

TEST_CASE("string scalars, the object graph entry, graph and metadata") {
  std::string dir = make_temp_dir();
  Sample s = make_sample();
  std::string big(300000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>(i);
  s.entries.push_back(SaveEntry::string_scalar("extra/big_string", big));
  s.entries.push_back(SaveEntry::string_scalar("extra/empty_string", ""));
  for (bool compress : {false, true}) {
    std::string path = dir + (compress ? "/z" : "/raw");
    write_checkpoint(path, s.graph, s.entries, s.metadata, opts(compress));
    Reader r = Reader::open(path);
    matches_sample(r, s);
    const TensorInfo& g = r.info(kObjectGraphKey);
    CHECK(g.dtype == DType::String);
    CHECK(g.shape == Shape{});
    CHECK(r.entries().front().key == "_CHECKPOINTABLE_OBJECT_GRAPH");
    CHECK(r.load_string("extra/big_string") == big);
    CHECK(r.load_string("extra/empty_string").empty());
    if (compress) CHECK(r.info("extra/big_string").codec == Codec::Zstd);
    CHECK_THROWS_CODE(r.load("extra/note", ctx().cpu()), Code::InvalidArgument, "is a string scalar");
    CHECK_THROWS_CODE(r.load_string("net/bias/.ATTRIBUTES/VARIABLE_VALUE"), Code::InvalidArgument,
                      "float32[16], not a string scalar");
    CHECK_THROWS_CODE(r.load("nope", ctx().cpu()), Code::NotFound, "no key named 'nope'");
    CHECK(r.find("nope") == nullptr);
  }
}

TEST_CASE("a large compressed string is checked before it is allocated, then loads") {
  std::string dir = make_temp_dir();
  std::string big(20 << 20, 'a');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i / 4096 % 26);
  write_checkpoint(dir + "/s", ObjectGraph{}, {SaveEntry::string_scalar("s", big)}, Metadata{}, opts(true));
  Reader r = Reader::open(dir + "/s");
  CHECK(r.info("s").codec == Codec::Zstd);
  CHECK(r.info("s").stored_size < big.size() / 100);
  CHECK(r.load_string("s") == big);
}

TEST_CASE("many small entries: an index of several MiB") {
  std::string dir = make_temp_dir();
  std::vector<SaveEntry> entries;
  for (int i = 0; i < 30000; ++i) entries.emplace_back(fmt::format("block_{:03d}/unit_{:05d}/bias", i / 1000, i), scalar<int32_t>(i));
  write_checkpoint(dir + "/c", ObjectGraph{}, entries, Metadata{}, opts(false));
  Reader r = Reader::open(dir + "/c");
  REQUIRE(r.entries().size() == entries.size() + 1);
  CHECK(values<int32_t>(r.load("block_012/unit_12345/bias", ctx().cpu())) == std::vector<int32_t>{12345});
  uint64_t index_offset = r.entries().back().offset + 64;
  CHECK(r.file_size() - index_offset > (1u << 20));
  std::string bytes = read_file(dir + "/c");
  bytes[bytes.size() - kFooterSize - 1000] ^= 1;  // inside the index
  write_file(dir + "/bad", bytes);
  CHECK_THROWS_CODE(Reader::open(dir + "/bad"), Code::DataLoss, "index checksum mismatch");
}

TEST_CASE("the same state gives the same bytes") {
  std::string dir = make_temp_dir();
  Sample s = make_sample();
  s.entries.emplace_back("w", pattern_tensor(DType::Float32, Shape{300, 70}, 2));
  for (bool compress : {false, true}) {
    write_checkpoint(dir + "/a", s.graph, s.entries, s.metadata, opts(compress));
    std::vector<SaveEntry> reversed(s.entries.rbegin(), s.entries.rend());  // input order does not matter
    write_checkpoint(dir + "/b", s.graph, reversed, s.metadata, opts(compress));
    CHECK(read_file(dir + "/a") == read_file(dir + "/b"));
  }
}

TEST_CASE("tensors on a non-host device are staged through host memory") {
  // A device whose memory the writer must not touch directly: data lives behind `hidden`.
  struct OpaqueDevice final : Device {
    OpaqueDevice() : Device(DeviceKind::Vulkan, "opaque:0") {}
    Buffer* allocate(size_t nbytes) override {
      Buffer* b = new Buffer();
      b->device = this;
      b->nbytes = nbytes;
      b->data = nullptr;
      hidden.emplace_back(nbytes);
      b->data = reinterpret_cast<void*>(hidden.size());  // a handle, not a pointer
      retain();
      return b;
    }
    void read(const Buffer& b, void* dst, size_t n) override {
      if (n) std::memcpy(dst, hidden[reinterpret_cast<size_t>(b.data) - 1].data(), n);
    }
    void write(Buffer& b, const void* src, size_t n) override {
      if (n) std::memcpy(hidden[reinterpret_cast<size_t>(b.data) - 1].data(), src, n);
    }
    void deallocate(Buffer* b) override { delete b; }
    std::vector<std::vector<uint8_t>> hidden;
  };
  OpaqueDevice* dev = new OpaqueDevice();
  dev->hidden.reserve(16);
  {
    Tensor host = pattern_tensor(DType::Int16, Shape{4, 5}, 2);
    Tensor remote = Tensor::allocate(*dev, DType::Int16, host.shape());
    dev->write(*remote.buffer(), host.raw_data(), host.nbytes());
    std::string dir = make_temp_dir();
    write_checkpoint(dir + "/c", ObjectGraph{}, {SaveEntry("v", remote)}, Metadata{}, opts(true));
    Reader r = Reader::open(dir + "/c");
    CHECK(same_tensor(r.load("v", ctx().cpu()), host));
    Tensor back = r.load("v", *dev);
    CHECK(back.device() == dev);
    std::vector<uint8_t> bytes(back.nbytes());
    dev->read(*back.buffer(), bytes.data(), bytes.size());
    CHECK(std::memcmp(bytes.data(), host.raw_data(), bytes.size()) == 0);
  }
  dev->release();
}

TEST_CASE("writes replace atomically and leave no temporary files") {
  std::string dir = make_temp_dir();
  Sample s = make_sample();
  write_checkpoint(dir + "/ckpt-1", s.graph, s.entries, s.metadata, WriteOptions{});  // with fsync
  std::string first = read_file(dir + "/ckpt-1");
  CHECK(list_dir(dir) == std::vector<std::string>{"ckpt-1"});

  // A failing write leaves the previous file as it was and cleans up its temporary file.
  ObjectGraph bad = s.graph;
  bad.nodes[2].attributes[0].key = "missing/key";
  CHECK_THROWS_CODE(write_checkpoint(dir + "/ckpt-1", bad, s.entries, s.metadata, opts(false)), Code::InvalidArgument,
                    "refers to key 'missing/key'");
  CHECK(read_file(dir + "/ckpt-1") == first);
  CHECK(list_dir(dir) == std::vector<std::string>{"ckpt-1"});

  s.metadata.save_counter = 4;
  write_checkpoint(dir + "/ckpt-1", s.graph, s.entries, s.metadata, opts(false));
  CHECK(Reader::open(dir + "/ckpt-1").metadata().save_counter == 4);
  CHECK(list_dir(dir) == std::vector<std::string>{"ckpt-1"});

  CHECK_THROWS_CODE(write_checkpoint(dir + "/no/such/dir/ckpt", s.graph, s.entries, s.metadata, opts(false)),
                    Code::NotFound, "no/such/dir/ckpt");
  CHECK_THROWS_CODE(Reader::open(dir + "/ckpt-2"), Code::NotFound, "ckpt-2");
  CHECK_THROWS_CODE(Reader::open(dir), Code::InvalidArgument, "not a regular file");
}

TEST_CASE("writer input errors") {
  std::string dir = make_temp_dir();
  std::string path = dir + "/c";
  Tensor t = scalar<float>(1.0f);
  auto write = [&](const ObjectGraph& g, std::vector<SaveEntry> e) {
    return write_checkpoint(path, g, e, Metadata{}, opts(false));
  };
  CHECK_THROWS_CODE(write({}, {SaveEntry("", t)}), Code::InvalidArgument, "empty key");
  CHECK_THROWS_CODE(write({}, {SaveEntry(std::string("a\0b", 3), t)}), Code::InvalidArgument, "NUL");
  CHECK_THROWS_CODE(write({}, {SaveEntry("a", t), SaveEntry("a", t)}), Code::InvalidArgument, "duplicate key 'a'");
  CHECK_THROWS_CODE(write({}, {SaveEntry::string_scalar("a", "x"), SaveEntry("a", t)}), Code::InvalidArgument,
                    "duplicate key 'a'");
  CHECK_THROWS_CODE(write({}, {SaveEntry("_CHECKPOINTABLE_OBJECT_GRAPH", t)}), Code::InvalidArgument, "reserved");
  CHECK_THROWS_CODE(write({}, {SaveEntry("a", Tensor())}), Code::InvalidArgument, "key 'a' has no tensor");
  ObjectGraph g;
  g.nodes.resize(2);
  g.nodes[0].children = {{"x", 2}};
  CHECK_THROWS_CODE(write(g, {}), Code::InvalidArgument, "child 'x' pointing at node 2");
  g.nodes[0].children = {{"x", 1}};
  g.nodes[1].slots = {{0, 1, "m", 5}};
  CHECK_THROWS_CODE(write(g, {}), Code::InvalidArgument, "slot 'm'");
  g.nodes[1].slots.clear();
  g.nodes[1].attributes = {{"VARIABLE_VALUE", "b"}};
  CHECK_THROWS_CODE(write(g, {SaveEntry("a", t)}), Code::InvalidArgument, "refers to key 'b'");
  CHECK_THROWS_CODE(write_checkpoint("", g, {}, Metadata{}, opts(false)), Code::InvalidArgument, "empty path");
  WriteOptions ultra = opts(true);
  ultra.zstd_level = 22;
  CHECK_THROWS_CODE(write_checkpoint(path, g, {}, Metadata{}, ultra), Code::InvalidArgument, "zstd level 22 is outside");
  CHECK(list_dir(dir).empty());
  write(g, {SaveEntry("b", t)});  // and the fixed graph writes fine
  CHECK(Reader::open(path).graph() == g);
}

// Large payloads are written a 1 MiB piece at a time straight from the tensor, the shorter last
// piece too, each after whatever small entries and padding were buffered before it.
TEST_CASE("payloads around the 1 MiB write piece, between small ones, land where the index says") {
  const std::string dir = make_temp_dir();
  const size_t mib = size_t{1} << 20;
  std::vector<SaveEntry> entries;
  int i = 0;
  for (size_t n : {mib - 1, mib, mib + 1, 2 * mib + 63, 3 * mib - 7}) {
    entries.emplace_back("big_" + std::to_string(i), pattern_tensor(DType::UInt8, Shape{static_cast<int64_t>(n)}, 0, 10 + i));
    entries.emplace_back("big_" + std::to_string(i) + "_small", pattern_tensor(DType::Float32, Shape{3 + i}, 2, 20 + i));
    ++i;
  }
  WriteOptions o;
  o.fsync = false;
  write_checkpoint(dir + "/c", ObjectGraph{}, entries, Metadata{}, o);
  Reader r = Reader::open(dir + "/c");
  for (const TensorInfo& e : r.entries()) CHECK(e.offset % kPayloadAlignment == 0);
  for (const SaveEntry& e : entries) {
    CAPTURE(e.key);
    CHECK(same_tensor(r.load(e.key, ctx().cpu()), e.tensor));
  }
}

TEST_CASE("stale temporary files are recognized and removed") {
  CHECK(is_temp_file_name("ckpt-1.tmp-0123456789abcdef"));
  CHECK_FALSE(is_temp_file_name("ckpt-1.tmp-0123456789abcde"));
  CHECK_FALSE(is_temp_file_name("ckpt-1.tmp-0123456789abcdeg"));
  CHECK_FALSE(is_temp_file_name("ckpt-1.tmp-0123456789ABCDEF"));
  CHECK_FALSE(is_temp_file_name(".tmp-0123456789abcdef"));
  CHECK_FALSE(is_temp_file_name("ckpt-1"));

  std::string dir = make_temp_dir();
  for (const char* name : {"ckpt-1", "ckpt-1.tmp-0123456789abcdef", "ckpt-2.tmp-ffffffffffffffff", "ckpt-3.tmp-xyz",
                           "other.tmp-0123456789abcdef", "checkpoint"})
    write_file(dir + "/" + name, "x");
  auto removed = remove_stale_temp_files(dir, "ckpt");
  CHECK(removed == std::vector<std::string>{dir + "/ckpt-1.tmp-0123456789abcdef", dir + "/ckpt-2.tmp-ffffffffffffffff"});
  CHECK(list_dir(dir) == std::vector<std::string>{"checkpoint", "ckpt-1", "ckpt-3.tmp-xyz", "other.tmp-0123456789abcdef"});
  removed = remove_stale_temp_files(dir + "/");
  CHECK(removed == std::vector<std::string>{dir + "/other.tmp-0123456789abcdef"});
  CHECK_THROWS_CODE(remove_stale_temp_files(dir + "/missing"), Code::NotFound, "missing");
}

}  // namespace
}  // namespace cairn::test
