#include "tests/runtime/summary/event_reader.h"

#include <doctest/doctest.h>
#include <pb_decode.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "runtime/io/crc32c.h"

namespace cairn::test {

namespace {

struct Field {
  uint32_t number = 0;
  pb_wire_type_t type = PB_WT_VARINT;
  uint64_t varint = 0;
  uint64_t fixed = 0;
  std::string bytes;
};

std::vector<Field> fields(const std::string& msg) {
  std::vector<Field> out;
  pb_istream_t s = pb_istream_from_buffer(reinterpret_cast<const pb_byte_t*>(msg.data()), msg.size());
  while (s.bytes_left > 0) {
    Field f;
    bool eof = false;
    REQUIRE(pb_decode_tag(&s, &f.type, &f.number, &eof));
    if (eof) break;
    switch (f.type) {
      case PB_WT_VARINT: REQUIRE(pb_decode_varint(&s, &f.varint)); break;
      case PB_WT_64BIT: REQUIRE(pb_decode_fixed64(&s, &f.fixed)); break;
      case PB_WT_32BIT: {
        uint32_t v = 0;
        REQUIRE(pb_decode_fixed32(&s, &v));
        f.fixed = v;
        break;
      }
      case PB_WT_STRING: {
        uint32_t n = 0;
        REQUIRE(pb_decode_varint32(&s, &n));
        REQUIRE(n <= s.bytes_left);
        f.bytes.resize(n);
        REQUIRE(pb_read(&s, reinterpret_cast<pb_byte_t*>(f.bytes.data()), n));
        break;
      }
      default: FAIL("unexpected wire type " << static_cast<int>(f.type));
    }
    out.push_back(std::move(f));
  }
  return out;
}

uint64_t le64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t le32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

DecodedValue decode_value(const std::string& msg) {
  DecodedValue v;
  for (const Field& f : fields(msg)) {
    if (f.number == 1) v.tag = f.bytes;
    if (f.number == 9) {
      v.has_metadata = true;
      for (const Field& m : fields(f.bytes)) {
        if (m.number == 4) v.data_class = static_cast<int>(m.varint);
        if (m.number == 1)
          for (const Field& p : fields(m.bytes)) {
            if (p.number == 1) v.plugin_name = p.bytes;
            if (p.number == 2) v.plugin_content = p.bytes;
          }
      }
    }
    if (f.number == 2) FAIL("a simple_value: TF2 writes tensors");
    if (f.number == 8)
      for (const Field& t : fields(f.bytes)) {
        if (t.number == 1) v.dtype = static_cast<int>(t.varint);
        if (t.number == 2)
          for (const Field& d : fields(t.bytes))
            if (d.number == 2) {
              int64_t size = 0;
              for (const Field& s : fields(d.bytes))
                if (s.number == 1) size = static_cast<int64_t>(s.varint);
              v.shape.push_back(size);
            }
        if (t.number == 4) v.content = t.bytes;
        if (t.number == 8) v.strings.push_back(t.bytes);
        if (t.number == 5) {
          for (size_t i = 0; i + 4 <= t.bytes.size(); i += 4) {
            float x;
            std::memcpy(&x, t.bytes.data() + i, 4);
            v.float_val.push_back(x);
          }
        }
      }
  }
  return v;
}

}  // namespace

std::vector<std::string> read_records(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < data.size()) {
    REQUIRE_MESSAGE(data.size() - pos >= 12, "truncated header at offset " << pos);
    const uint64_t n = le64(data.data() + pos);
    CHECK(le32(data.data() + pos + 8) == io::mask_crc(io::crc32c(data.data() + pos, 8)));
    REQUIRE_MESSAGE(data.size() - pos - 12 >= n + 4, "truncated record at offset " << pos);
    std::string rec = data.substr(pos + 12, n);
    CHECK(le32(data.data() + pos + 12 + n) == io::mask_crc(io::crc32c(rec.data(), rec.size())));
    out.push_back(std::move(rec));
    pos += 12 + n + 4;
  }
  return out;
}

DecodedEvent decode_event(const std::string& record) {
  DecodedEvent e;
  for (const Field& f : fields(record)) {
    if (f.number == 1) std::memcpy(&e.wall_time, &f.fixed, 8);
    if (f.number == 2) e.step = static_cast<int64_t>(f.varint);
    if (f.number == 3) e.file_version = f.bytes;
    if (f.number == 4) {
      e.has_graph = true;
      e.graph_def = f.bytes;
    }
    if (f.number == 5)
      for (const Field& s : fields(f.bytes))
        if (s.number == 1) e.values.push_back(decode_value(s.bytes));
  }
  return e;
}

std::vector<DecodedEvent> read_events(const std::string& path) {
  std::vector<DecodedEvent> out;
  for (const std::string& r : read_records(path)) out.push_back(decode_event(r));
  return out;
}

std::string fresh_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::filesystem::path p = std::filesystem::path(tmp ? tmp : "/tmp") / name;
  std::filesystem::remove_all(p);
  return p.string();
}

std::vector<std::string> event_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find("tfevents") != std::string::npos) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

float scalar_of(const DecodedValue& v) {
  REQUIRE(v.dtype == 1);
  REQUIRE(v.shape.empty());
  if (!v.float_val.empty()) return v.float_val[0];
  REQUIRE(v.content.size() == 4);
  float x;
  std::memcpy(&x, v.content.data(), 4);
  return x;
}

}  // namespace cairn::test
