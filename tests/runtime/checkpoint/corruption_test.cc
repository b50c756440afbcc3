// Damaged and hostile files: every flipped byte gives an error or exactly the original values,
// every truncation is an error, and hostile indexes are refused without large allocations.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "schemas/checkpoint_generated.h"
#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;
namespace fbs = ckpt::fb;

std::string sample_file(bool compress) {
  Sample s = make_sample();
  std::string dir = make_temp_dir();
  WriteOptions o;
  o.compress = compress;
  o.fsync = false;
  write_checkpoint(dir + "/c", s.graph, s.entries, s.metadata, o);
  return read_file(dir + "/c");
}

// Opens and loads everything; true when it all matched the sample, false on a cairn::Error.
// Any other exception escapes and fails the test; a crash fails it too.
bool loads_sample(const std::string& bytes, const Sample& s) {
  try {
    Reader r = Reader::open_memory(bytes.data(), bytes.size(), "damaged");
    for (const TensorInfo& e : r.entries()) {
      if (e.dtype == DType::String) r.load_string(e);
      else r.load(e, ctx().cpu());
    }
    bool same = matches_sample(r, s, /*quiet=*/true);
    CHECK_MESSAGE(same, "a damaged file loaded different values");
    return true;
  } catch (const Error& e) {
    CHECK_MESSAGE((e.code() == Code::DataLoss || e.code() == Code::InvalidArgument), e.message());
    CHECK(e.message().rfind("damaged:", 0) == 0);
    return false;
  }
}

TEST_CASE("every flipped byte gives an error or the original values") {
  Sample s = make_sample();
  for (bool compress : {false, true}) {
    const std::string good = sample_file(compress);
    CHECK(loads_sample(good, s));
    Reader r = Reader::open_memory(good.data(), good.size(), "good");
    if (compress) CHECK(r.info("net/kernel/.ATTRIBUTES/VARIABLE_VALUE").codec == Codec::ZstdShuffle);
    // Which bytes carry meaning: header, payloads, index and footer (the rest is zero padding).
    std::vector<bool> meaningful(good.size(), false);
    for (size_t i = 0; i < kHeaderSize; ++i) meaningful[i] = true;
    for (const TensorInfo& e : r.entries())
      for (uint64_t i = 0; i < e.stored_size; ++i) meaningful[e.offset + i] = true;
    uint64_t index_offset = load_le64(reinterpret_cast<const uint8_t*>(good.data()) + good.size() - kFooterSize);
    for (size_t i = index_offset; i < good.size(); ++i) meaningful[i] = true;

    size_t errors = 0, padding_ok = 0;
    for (size_t i = 0; i < good.size(); ++i) {
      for (uint8_t mask : {0x01, 0x80, 0xff}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ mask);
        CAPTURE(i);
        bool ok = loads_sample(bad, s);
        if (!ok) ++errors;
        else if (!meaningful[i]) ++padding_ok;
        else FAIL_CHECK("flip of a meaningful byte went unnoticed at ", i);
      }
    }
    MESSAGE("file of ", good.size(), " bytes: ", errors, " flips detected, ", padding_ok, " padding flips harmless");
    CHECK(errors > 0);
  }
}

TEST_CASE("a flipped payload byte on disk names the key") {
  Sample s = make_sample();
  std::string good = sample_file(true);
  std::string dir = make_temp_dir();
  Reader r0 = Reader::open_memory(good.data(), good.size());
  for (const char* key : {"net/bias/.ATTRIBUTES/VARIABLE_VALUE", "net/kernel/.ATTRIBUTES/VARIABLE_VALUE",
                          "net/kernel/.OPTIMIZER_SLOT/opt/m", "extra/note"}) {
    CAPTURE(key);
    const TensorInfo& e = r0.info(key);
    std::string bad = good;
    bad[e.offset + e.stored_size / 2] ^= 0x10;
    write_file(dir + "/bad", bad);
    Reader r = Reader::open(dir + "/bad");  // the index is intact
    std::string want = fmt::format("{}/bad: checksum mismatch for key '{}'", dir, key);
    CHECK_THROWS_CODE(r.verify(r.info(key)), Code::DataLoss, want);
    if (e.dtype == DType::String) CHECK_THROWS_CODE(r.load_string(key), Code::DataLoss, want);
    else CHECK_THROWS_CODE(r.load(key, ctx().cpu()), Code::DataLoss, want);
    // Other keys still load.
    CHECK(r.load("save_counter/.ATTRIBUTES/VARIABLE_VALUE", ctx().cpu()).data<int64_t>()[0] == 3);
  }
}

TEST_CASE("every truncation is an error") {
  Sample s = make_sample();
  for (bool compress : {false, true}) {
    const std::string good = sample_file(compress);
    for (size_t len = 0; len < good.size(); ++len) {
      CAPTURE(len);
      CHECK_FALSE(loads_sample(good.substr(0, len), s));
    }
    // Through the file path too, at a few lengths.
    std::string dir = make_temp_dir();
    for (size_t len : {size_t{0}, size_t{63}, size_t{64}, size_t{200}, good.size() / 2, good.size() - 1}) {
      write_file(dir + "/t", good.substr(0, len));
      CHECK_THROWS_CODE(Reader::open(dir + "/t"), Code::DataLoss, dir + "/t: ");
    }
    // And one byte too many.
    CHECK_FALSE(loads_sample(good + std::string(1, '\0'), s));
  }
}

// ---- hostile indexes: well-formed envelopes (correct checksums) around lying contents ----

using Build = std::function<flatbuffers::Offset<fbs::Index>(flatbuffers::FlatBufferBuilder&)>;

// header + `payloads` (padded to 64) + an index made by `build` + a footer with a correct checksum.
std::string envelope(const Build& build, std::string payloads = std::string(64, '\0')) {
  flatbuffers::FlatBufferBuilder fbb;
  fbs::FinishIndexBuffer(fbb, build(fbb));
  payloads.resize((payloads.size() + 63) / 64 * 64, '\0');
  std::string out(kHeaderSize, '\0');
  encode_header(Header{}, reinterpret_cast<uint8_t*>(out.data()));
  out += payloads;
  Footer f;
  f.index_offset = out.size();
  f.index_size = fbb.GetSize();
  f.index_checksum = checksum(fbb.GetBufferPointer(), fbb.GetSize());
  out.append(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  std::string footer(kFooterSize, '\0');
  encode_footer(f, reinterpret_cast<uint8_t*>(footer.data()));
  return out + footer;
}

struct EntrySpec {
  std::string key = "k";
  int32_t dtype = 1;
  std::vector<int64_t> shape = {4};
  uint64_t offset = 64, stored = 16, raw = 16;
  fbs::Codec codec = fbs::Codec::NONE;
  uint64_t checksum = 0, raw_checksum = 0;
};

Build entries_index(std::vector<EntrySpec> specs) {
  return [specs](flatbuffers::FlatBufferBuilder& fbb) {
    std::vector<flatbuffers::Offset<fbs::TensorEntry>> v;
    for (const EntrySpec& e : specs) {
      auto key = fbb.CreateString(e.key);  // keeps NUL bytes, unlike the Direct helpers
      v.push_back(fbs::CreateTensorEntry(fbb, key, e.dtype, fbb.CreateVector(e.shape), e.offset, e.stored, e.raw, e.codec,
                                         e.checksum, e.raw_checksum));
    }
    return fbs::CreateIndex(fbb, kFormatVersion, fbb.CreateVector(v));  // not re-sorted, unlike CreateIndexDirect
  };
}

// Allocations through this context are recorded; anything over 64 MiB is refused.
std::atomic<size_t> g_largest{0};
Context& tracking_ctx() {
  static Context* c = [] {
    ContextOptions o;
    o.num_threads = 1;
    o.allocator.allocate = [](void*, size_t size, size_t alignment) -> void* {
      size_t prev = g_largest.load();
      while (size > prev && !g_largest.compare_exchange_weak(prev, size)) {
      }
      if (size > (size_t{64} << 20)) return nullptr;
      return std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    };
    o.allocator.deallocate = [](void*, void* p, size_t) { std::free(p); };
    return new Context(o);
  }();
  return *c;
}

// Opens `bytes` and loads every entry; returns the error, which must be DataLoss.
std::string hostile_error(const std::string& bytes) {
  g_largest = 0;
  try {
    Reader r = Reader::open_memory(bytes.data(), bytes.size(), "hostile");
    for (const TensorInfo& e : r.entries()) {
      if (e.dtype == DType::String) r.load_string(e);
      else r.load(e, tracking_ctx().cpu());
    }
  } catch (const Error& e) {
    CHECK_MESSAGE(e.code() == Code::DataLoss, e.message());
    CHECK(g_largest.load() <= (size_t{4} << 20) + 64);
    if (std::getenv("SHOW_ERRORS")) MESSAGE(e.message());
    return e.message();
  }
  FAIL("a hostile file was accepted");
  return "";
}

TEST_CASE("a well-formed envelope around a valid entry loads (the harness itself is right)") {
  std::string payload(16, '\0');
  for (int i = 0; i < 16; ++i) payload[i] = static_cast<char>(i);
  EntrySpec e;
  e.checksum = e.raw_checksum = checksum(payload.data(), 16);
  std::string bytes = envelope(entries_index({e}), payload);
  Reader r = Reader::open_memory(bytes.data(), bytes.size());
  Tensor t = r.load("k", ctx().cpu());
  CHECK(std::memcmp(t.raw_data(), payload.data(), 16) == 0);
}

TEST_CASE("hostile tensor entries are refused at open or load, without big allocations") {
  auto with = [](std::function<void(EntrySpec&)> change, std::string payload = std::string(64, '\0')) {
    EntrySpec e;
    change(e);
    return envelope(entries_index({e}), payload);
  };
  CHECK(hostile_error(with([](EntrySpec& e) { e.shape = {int64_t{1} << 58}; e.raw = e.stored = uint64_t{1} << 60; }))
            .find("outside the payload area") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.offset = uint64_t{1} << 63; })).find("outside the payload area") !=
        std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.offset = ~uint64_t{63}; e.stored = e.raw = 128; e.shape = {32}; }))
            .find("outside the payload area") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.offset = 100; })).find("outside the payload area") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.offset = 0; })).find("outside the payload area") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) {
          e.shape = {int64_t{1} << 40};
          e.raw = uint64_t{1} << 42;
          e.stored = 64;
          e.codec = fbs::Codec::ZSTD;
        })).find("claims 4398046511104 raw bytes from 64 stored bytes") != std::string::npos);
  // Plausible sizes with garbage bytes: refused at load, after allocating only the raw size.
  CHECK(hostile_error(with([](EntrySpec& e) {
          e.shape = {1 << 20};
          e.raw = 4 << 20;
          e.stored = 256;
          e.codec = fbs::Codec::ZSTD_SHUFFLE;
        }, std::string(256, '\x5a'))).find("checksum mismatch for key 'k'") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.raw = 20; })).find("raw size 20 but float32[4] takes 16 bytes") !=
        std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.shape = {-4}; })).find("invalid shape: ") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.shape = {1, 1, 1, 1, 1, 1, 1, 1, 4}; })).find("rank 9") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.shape = {int64_t{1} << 62, 8}; })).find("invalid shape: ") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.dtype = 99; })).find("invalid dtype (99)") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.dtype = 0; })).find("invalid dtype (0)") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.codec = static_cast<fbs::Codec>(7); })).find("unknown codec (7)") !=
        std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.dtype = 7; })).find("string key 'k' is not a scalar") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.dtype = 7; e.shape = {}; e.codec = fbs::Codec::ZSTD_SHUFFLE; }))
            .find("cannot use a byte shuffle") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.stored = 8; })).find("inconsistent sizes") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.checksum = 1; })).find("inconsistent sizes or checksums") !=
        std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.key = std::string("a\0b", 3); })).find("NUL") != std::string::npos);
  CHECK(hostile_error(with([](EntrySpec& e) { e.key = ""; })).find("empty key") != std::string::npos);
  // Raw payload with a wrong checksum.
  CHECK(hostile_error(with([](EntrySpec& e) { e.checksum = e.raw_checksum = 12345; }))
            .find("checksum mismatch for key 'k'") != std::string::npos);

  EntrySpec a, b;
  a.key = "b";
  b.key = "a";
  CHECK(hostile_error(envelope(entries_index({a, b}))).find("not sorted and unique at 'a'") != std::string::npos);
  b.key = "b";
  CHECK(hostile_error(envelope(entries_index({a, b}))).find("not sorted and unique at 'b'") != std::string::npos);
}

TEST_CASE("hostile compressed payloads: wrong sizes, trailing bytes, truncated frames") {
  // Real zstd frames with checksums that match the stored bytes, but lies elsewhere.
  std::string dir = make_temp_dir();
  WriteOptions o;
  o.compress = true;
  o.fsync = false;
  write_checkpoint(dir + "/c", ObjectGraph{}, {SaveEntry("k", pattern_tensor(DType::Int32, Shape{256}, 1))}, Metadata{}, o);
  std::string file = read_file(dir + "/c");
  Reader r = Reader::open(dir + "/c");
  const TensorInfo good = r.info("k");
  REQUIRE(good.codec == Codec::Zstd);
  std::string frame = file.substr(good.offset, good.stored_size);

  auto spec = [&](const std::string& stored, uint64_t raw, std::vector<int64_t> shape) {
    EntrySpec e;
    e.dtype = static_cast<int32_t>(DType::Int32);
    e.shape = shape;
    e.raw = raw;
    e.stored = stored.size();
    e.codec = fbs::Codec::ZSTD;
    e.checksum = checksum(stored.data(), stored.size());
    e.raw_checksum = good.raw_checksum;
    return envelope(entries_index({e}), stored);
  };
  CHECK(hostile_error(spec(frame, 512, {128})).find("decodes to more than its 512 raw bytes") != std::string::npos);
  CHECK(hostile_error(spec(frame, 2048, {512})).find("decodes to 1024 bytes instead of 2048") != std::string::npos);
  CHECK(hostile_error(spec(frame + "junk", 1024, {256})).find("follow the end of the zstd frame") != std::string::npos);
  CHECK(hostile_error(spec(frame.substr(0, frame.size() - 3), 1024, {256})).find("ends before its zstd frame") !=
        std::string::npos);
  CHECK(hostile_error(spec("not a zstd frame at all", 1024, {256})).find("cannot decompress") != std::string::npos);
  std::string ok = spec(frame, 1024, {256});
  Reader fine = Reader::open_memory(ok.data(), ok.size());
  CHECK(same_tensor(fine.load("k", ctx().cpu()), r.load("k", ctx().cpu())));
}

TEST_CASE("hostile graphs and metadata") {
  auto graph_index = [](std::function<std::vector<flatbuffers::Offset<fbs::ObjectNode>>(flatbuffers::FlatBufferBuilder&)> nodes) {
    return [nodes](flatbuffers::FlatBufferBuilder& fbb) {
      EntrySpec e;
      std::vector<flatbuffers::Offset<fbs::TensorEntry>> t = {fbs::CreateTensorEntryDirect(
          fbb, e.key.c_str(), e.dtype, &e.shape, e.offset, e.stored, e.raw, e.codec, e.checksum, e.raw_checksum)};
      auto n = nodes(fbb);
      return fbs::CreateIndexDirect(fbb, kFormatVersion, &t, &n);
    };
  };
  using FBB = flatbuffers::FlatBufferBuilder;
  CHECK(hostile_error(envelope(graph_index([](FBB& fbb) {
          std::vector<flatbuffers::Offset<fbs::ChildEdge>> c = {fbs::CreateChildEdgeDirect(fbb, "x", 5)};
          return std::vector<flatbuffers::Offset<fbs::ObjectNode>>{fbs::CreateObjectNodeDirect(fbb, 1, &c)};
        }))).find("child 'x' pointing at node 5") != std::string::npos);
  CHECK(hostile_error(envelope(graph_index([](FBB& fbb) {
          std::vector<flatbuffers::Offset<fbs::VariableAttr>> a = {fbs::CreateVariableAttrDirect(fbb, "V", "k", 3)};
          return std::vector<flatbuffers::Offset<fbs::ObjectNode>>{fbs::CreateObjectNodeDirect(fbb, 2, nullptr, &a)};
        }))).find("points at entry 3, which is not key 'k'") != std::string::npos);
  CHECK(hostile_error(envelope(graph_index([](FBB& fbb) {
          std::vector<flatbuffers::Offset<fbs::VariableAttr>> a = {fbs::CreateVariableAttrDirect(fbb, "V", "other", 0)};
          return std::vector<flatbuffers::Offset<fbs::ObjectNode>>{fbs::CreateObjectNodeDirect(fbb, 2, nullptr, &a)};
        }))).find("which is not key 'other'") != std::string::npos);
  CHECK(hostile_error(envelope(graph_index([](FBB& fbb) {
          std::vector<flatbuffers::Offset<fbs::SlotRef>> s = {fbs::CreateSlotRefDirect(fbb, 0, 0, "m", 9)};
          return std::vector<flatbuffers::Offset<fbs::ObjectNode>>{fbs::CreateObjectNodeDirect(fbb, 6, nullptr, nullptr, &s)};
        }))).find("slot 'm'") != std::string::npos);
  // One long name shared by many edges: verification passes, but copying would multiply memory.
  CHECK(hostile_error(envelope(graph_index([](FBB& fbb) {
          auto edge = fbs::CreateChildEdge(fbb, fbb.CreateString(std::string(65536, 'n')), 0);
          std::vector<flatbuffers::Offset<fbs::ChildEdge>> c(20000, edge);
          return std::vector<flatbuffers::Offset<fbs::ObjectNode>>{fbs::CreateObjectNodeDirect(fbb, 1, &c)};
        }))).find("index strings exceed the index size") != std::string::npos);
  // Metadata keys out of order.
  CHECK(hostile_error(envelope([](FBB& fbb) {
          std::vector<flatbuffers::Offset<fbs::KeyValue>> kv = {fbs::CreateKeyValueDirect(fbb, "b", "1"),
                                                               fbs::CreateKeyValueDirect(fbb, "a", "2")};
          auto m = fbs::CreateMetadata(fbb, 0, fbb.CreateString("v"), fbb.CreateVector(kv));  // not re-sorted
          return fbs::CreateIndexDirect(fbb, kFormatVersion, nullptr, nullptr, m);
        })).find("metadata keys are not sorted") != std::string::npos);
  // Index version disagreeing with the header.
  CHECK(hostile_error(envelope([](FBB& fbb) { return fbs::CreateIndexDirect(fbb, 9); })).find("index says format version 9") !=
        std::string::npos);
  // An empty index (no tensors at all) is valid.
  std::string empty = envelope([](FBB& fbb) { return fbs::CreateIndexDirect(fbb, kFormatVersion); });
  CHECK(Reader::open_memory(empty.data(), empty.size()).entries().empty());
}

TEST_CASE("hostile footers and indexes that are not FlatBuffers") {
  std::string good = sample_file(false);
  const size_t n = good.size();
  auto with_footer = [&](uint64_t offset, uint64_t size, bool fix_checksum) {
    std::string bad = good;
    Footer f = decode_footer(reinterpret_cast<const uint8_t*>(bad.data()) + n - kFooterSize, "x");
    f.index_offset = offset;
    f.index_size = size;
    if (fix_checksum && offset < n && size <= n - offset)
      f.index_checksum = checksum(bad.data() + offset, static_cast<size_t>(size));
    encode_footer(f, reinterpret_cast<uint8_t*>(bad.data()) + n - kFooterSize);
    return bad;
  };
  Footer f = decode_footer(reinterpret_cast<const uint8_t*>(good.data()) + n - kFooterSize, "x");
  CHECK(hostile_error(with_footer(f.index_offset, ~uint64_t{0}, false)).find("does not end at the footer") != std::string::npos);
  CHECK(hostile_error(with_footer(~uint64_t{63}, f.index_size, false)).find("does not end at the footer") != std::string::npos);
  CHECK(hostile_error(with_footer(0, n - kFooterSize, true)).find("does not end at the footer") != std::string::npos);
  // The index region moved onto payload bytes, checksum made to match: not a valid index.
  CHECK(hostile_error(with_footer(64, n - kFooterSize - 64, true)).find("not a valid checkpoint index") != std::string::npos);
  // Random bytes as the index, with a matching checksum.
  std::string junk = good.substr(0, 64) + std::string(64, '\0');
  std::string idx(200, '\0');
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<char>(i * 73 + 11);
  junk += idx;
  Footer jf;
  jf.index_offset = 128;
  jf.index_size = idx.size();
  jf.index_checksum = checksum(idx.data(), idx.size());
  std::string foot(kFooterSize, '\0');
  encode_footer(jf, reinterpret_cast<uint8_t*>(foot.data()));
  CHECK(hostile_error(junk + foot).find("not a valid checkpoint index") != std::string::npos);
}

}  // namespace
}  // namespace cairn::test
