// Format pieces: header and footer encoding, the byte shuffle, the object graph bytes.
#include <cstring>

#include "tests/runtime/checkpoint/ckpt_test_util.h"

namespace cairn::test {
namespace {

using namespace ckpt;

TEST_CASE("header round trip and damage") {
  uint8_t h[kHeaderSize];
  encode_header(Header{}, h);
  CHECK(std::memcmp(h, "CAIRNCKP", 8) == 0);
  CHECK(load_le32(h + 8) == kFormatVersion);
  Header back = decode_header(h, "f");
  CHECK(back.format_version == kFormatVersion);
  CHECK(back.flags == 0);

  uint8_t bad[kHeaderSize];
  std::memcpy(bad, h, kHeaderSize);
  bad[0] = 'X';
  CHECK_THROWS_CODE(decode_header(bad, "f"), Code::DataLoss, "f: not a Cairn checkpoint");
  std::memcpy(bad, h, kHeaderSize);
  bad[30] = 1;
  CHECK_THROWS_CODE(decode_header(bad, "f"), Code::DataLoss, "header checksum mismatch");

  Header future;
  future.format_version = kFormatVersion + 1;
  encode_header(future, bad);
  CHECK_THROWS_CODE(decode_header(bad, "f"), Code::InvalidArgument, "format version 2 is not supported");
  Header flagged;
  flagged.flags = 4;
  encode_header(flagged, bad);
  CHECK_THROWS_CODE(decode_header(bad, "f"), Code::InvalidArgument, "unknown flags 0x4");
}

TEST_CASE("footer round trip and damage") {
  Footer f;
  f.index_offset = 0x1122334455667788ull;
  f.index_size = 77;
  f.index_checksum = 0xdeadbeefcafef00dull;
  uint8_t b[kFooterSize];
  encode_footer(f, b);
  CHECK(std::memcmp(b + 32, "CAIRNEND", 8) == 0);
  Footer back = decode_footer(b, "f");
  CHECK(back.index_offset == f.index_offset);
  CHECK(back.index_size == 77);
  CHECK(back.index_checksum == f.index_checksum);
  CHECK(back.format_version == kFormatVersion);
  b[39] ^= 1;
  CHECK_THROWS_CODE(decode_footer(b, "f"), Code::DataLoss, "footer magic missing");
  b[39] ^= 1;
  b[29] = 1;
  CHECK_THROWS_CODE(decode_footer(b, "f"), Code::DataLoss, "footer reserved bytes");
}

TEST_CASE("byte shuffle groups byte planes and inverts") {
  const uint8_t src[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  uint8_t dst[8];
  shuffle_bytes(src, dst, 8, 4);
  const uint8_t want4[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  CHECK(std::memcmp(dst, want4, 8) == 0);
  shuffle_bytes(src, dst, 8, 2);
  const uint8_t want2[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  CHECK(std::memcmp(dst, want2, 8) == 0);
  for (size_t width : {1, 2, 3, 4, 8}) {
    for (size_t n : {0, 1, 5, 1000}) {
      std::vector<uint8_t> a(n * width), s(a.size()), r(a.size());
      for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 31 + 7);
      shuffle_bytes(a.data(), s.data(), a.size(), width);
      unshuffle_bytes(s.data(), r.data(), a.size(), width);
      CHECK(r == a);
    }
  }
}

TEST_CASE("byte shuffle: the vectorized widths give the bytes of the plain definition, tails included") {
  for (size_t width : {2, 4, 8}) {
    for (size_t n : {15, 16, 17, 31, 32, 33, 47, 64, 100, 4099}) {
      CAPTURE(width);
      CAPTURE(n);
      std::vector<uint8_t> a(n * width), s(a.size()), want(a.size()), r(a.size());
      uint64_t x = 88172645463325252ull;
      for (auto& v : a) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v = static_cast<uint8_t>(x >> 32);
      }
      for (size_t i = 0; i < n; ++i)
        for (size_t b = 0; b < width; ++b) want[b * n + i] = a[i * width + b];
      shuffle_bytes(a.data(), s.data(), a.size(), width);
      CHECK(s == want);
      unshuffle_bytes(want.data(), r.data(), a.size(), width);
      CHECK(r == a);
    }
  }
}

TEST_CASE("object graph bytes parse back, and garbage does not") {
  Sample s = make_sample();
  std::string dir = make_temp_dir();
  WriteOptions o;
  o.fsync = false;
  write_checkpoint(dir + "/c", s.graph, s.entries, s.metadata, o);
  std::string bytes = Reader::open(dir + "/c").load_string(kObjectGraphKey);
  CHECK(bytes.substr(4, 4) == "CAOG");
  CHECK(parse_object_graph(bytes) == s.graph);
  std::string shifted = "x" + bytes;  // the same bytes at an odd address still parse
  CHECK(parse_object_graph(std::string_view(shifted).substr(1)) == s.graph);
  CHECK_THROWS_CODE(parse_object_graph("garbage!", "g"), Code::DataLoss, "g: not a valid object graph");
  CHECK_THROWS_CODE(parse_object_graph(bytes.substr(0, bytes.size() / 2), "g"), Code::DataLoss, "g:");
  CHECK_THROWS_CODE(parse_object_graph("", "g"), Code::DataLoss, "g:");
}

TEST_CASE("codec names") {
  CHECK(std::string(codec_name(Codec::None)) == "none");
  CHECK(std::string(codec_name(Codec::Zstd)) == "zstd");
  CHECK(std::string(codec_name(Codec::ZstdShuffle)) == "zstd+shuffle");
  CHECK(std::string(codec_name(static_cast<Codec>(9))) == "invalid");
}

}  // namespace
}  // namespace cairn::test
