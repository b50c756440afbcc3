// TF2's summary values: histogram buckets, PNG images (decoded back with libpng), WAV audio, and
// the errors for bad input, each naming the tag.
#include <png.h>

#include <cstring>

#include "runtime/summary/values.h"
#include "tests/util/test_util.h"

namespace cairn::test {
namespace {

using namespace cairn::summary;

std::vector<double> rows_of(const Value& v) {
  REQUIRE(v.tensor.dtype == DType::Float64);
  std::vector<double> out(v.tensor.content.size() / 8);
  std::memcpy(out.data(), v.tensor.content.data(), v.tensor.content.size());
  return out;
}

TEST_CASE("histogram: equal-width buckets from min to max, the max in the last bucket") {
  std::vector<double> data = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10};
  std::vector<double> r = histogram_buckets(data.data(), data.size(), 5);
  REQUIRE(r.size() == 15);
  const std::vector<double> expected = {0, 2, 2,  2, 4, 2,  4, 6, 2,  6, 8, 2,  8, 10, 2};
  CHECK(r == expected);
  // Edges as TF's linspace (start + i * step), the last forced to the max.
  std::vector<double> odd = {0.1, 0.7, 0.3};
  r = histogram_buckets(odd.data(), odd.size(), 3);
  CHECK(r[0] == 0.1);
  CHECK(r[1] == doctest::Approx(0.3));
  CHECK(r[7] == 0.7);
  CHECK(r[2] + r[5] + r[8] == 3);
}

TEST_CASE("histogram: one repeated value, no values, zero buckets") {
  std::vector<double> same = {2.5, 2.5, 2.5};
  std::vector<double> r = histogram_buckets(same.data(), same.size(), 4);
  CHECK(r == std::vector<double>{2.5, 2.5, 0, 2.5, 2.5, 0, 2.5, 2.5, 0, 2.5, 2.5, 3});
  r = histogram_buckets(nullptr, 0, 2);
  CHECK(r == std::vector<double>(6, 0.0));
  CHECK(histogram_buckets(same.data(), same.size(), 0).empty());
}

TEST_CASE("histogram_value: a [30, 3] float64 tensor by default, from any real dtype") {
  Value v = histogram_value("w", make<int32_t>({1, 2, 3, 4}, Shape{2, 2}));
  CHECK(v.plugin == Plugin::Histograms);
  CHECK(v.tensor.shape == std::vector<int64_t>{30, 3});
  std::vector<double> r = rows_of(v);
  double total = 0;
  for (size_t b = 0; b < 30; ++b) total += r[3 * b + 2];
  CHECK(total == 4);
  CHECK(r[0] == 1);
  CHECK(r[3 * 29 + 1] == 4);
  CHECK_THROWS_CODE(histogram_value("w", make<float>({1, NAN}, Shape{2})), Code::InvalidArgument, "histogram 'w'");
  CHECK_THROWS_CODE(histogram_value("w", make<float>({1}, Shape{1}), -1), Code::InvalidArgument, "buckets");
}

struct Decoded {
  png_uint_32 width = 0, height = 0;
  std::vector<uint8_t> pixels;  // RGBA
};

Decoded decode_png(const std::string& bytes) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()));
  image.format = PNG_FORMAT_RGBA;
  Decoded d;
  d.width = image.width;
  d.height = image.height;
  d.pixels.resize(PNG_IMAGE_SIZE(image));
  REQUIRE(png_image_finish_read(&image, nullptr, d.pixels.data(), 0, nullptr));
  return d;
}

TEST_CASE("image: [width, height, png...] with max_outputs, uint8 and float input") {
  // 3 RGB images of 2 rows x 4 columns; pixel value = image * 10 + column.
  std::vector<uint8_t> px;
  for (int i = 0; i < 3; ++i)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 3; ++c) px.push_back(static_cast<uint8_t>(i * 10 + x + c));
  Value v = image_value("img", make<uint8_t>(px, Shape{3, 2, 4, 3}), 2);
  CHECK(v.plugin == Plugin::Images);
  CHECK(v.tensor.dtype == DType::String);
  CHECK(v.tensor.shape == std::vector<int64_t>{4});
  REQUIRE(v.tensor.strings.size() == 4);
  CHECK(v.tensor.strings[0] == "4");  // width first
  CHECK(v.tensor.strings[1] == "2");
  Decoded d = decode_png(v.tensor.strings[3]);
  CHECK(d.width == 4);
  CHECK(d.height == 2);
  CHECK(d.pixels[0] == 10);              // image 1, x 0, red
  CHECK(d.pixels[4 * 3 + 2] == 10 + 3 + 2);  // x 3, blue
  CHECK(d.pixels[3] == 255);             // opaque

  // Floats: clamped to [0, 1], times 255.5, truncated (convert_image_dtype with saturation).
  Value f = image_value("f", make<float>({-1.0f, 0.0f, 0.5f, 1.0f, 2.0f, 0.999f}, Shape{1, 1, 6, 1}));
  REQUIRE(f.tensor.strings.size() == 3);
  Decoded g = decode_png(f.tensor.strings[2]);
  CHECK(g.width == 6);
  std::vector<int> gray;
  for (int x = 0; x < 6; ++x) gray.push_back(g.pixels[4 * x]);
  CHECK(gray == std::vector<int>{0, 0, 127, 255, 255, 255});
}

TEST_CASE("image: bad shapes and dtypes name the tag") {
  CHECK_THROWS_CODE(image_value("pic", make<uint8_t>({1, 2}, Shape{1, 2})), Code::InvalidArgument,
                    "image 'pic': expected a [k, height, width, channels] batch");
  CHECK_THROWS_CODE(image_value("pic", make<uint8_t>({1, 2}, Shape{1, 1, 1, 2})), Code::InvalidArgument, "image 'pic'");
  CHECK_THROWS_CODE(image_value("pic", make<int32_t>({1}, Shape{1, 1, 1, 1})), Code::InvalidArgument,
                    "image 'pic': unsupported dtype int32");
}

TEST_CASE("scalar: rank-0 real values only") {
  Value v = scalar_tensor_value("loss", make<double>({0.25}, Shape{}));
  CHECK(v.tensor.dtype == DType::Float32);
  CHECK(v.tensor.shape.empty());
  float x;
  std::memcpy(&x, v.tensor.content.data(), 4);
  CHECK(x == 0.25f);
  CHECK_THROWS_CODE(scalar_tensor_value("loss", make<float>({1, 2}, Shape{2})), Code::InvalidArgument,
                    "scalar 'loss': expected a rank-0 tensor, got shape [2]");
  CHECK_THROWS_CODE(scalar_tensor_value("loss", make<complex64>({complex64(1, 0)}, Shape{})), Code::InvalidArgument,
                    "scalar 'loss': unsupported dtype complex64");
}

uint32_t u32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint16_t u16(const std::string& s, size_t at) {
  uint16_t v;
  std::memcpy(&v, s.data() + at, 2);
  return v;
}

TEST_CASE("audio: [k, 2] of (16-bit PCM WAV, empty label)") {
  // 2 clips of 3 frames, 2 channels.
  Value v = audio_value("snd", make<float>({0, 1, -1, 0.5f, 2, -2, 0, 0, 0, 0, 0, 0}, Shape{2, 3, 2}), 8000, 1);
  CHECK(v.plugin == Plugin::Audio);
  CHECK(v.tensor.shape == std::vector<int64_t>{1, 2});
  REQUIRE(v.tensor.strings.size() == 2);
  const std::string& wav = v.tensor.strings[0];
  CHECK(v.tensor.strings[1].empty());
  REQUIRE(wav.size() == 44 + 3 * 2 * 2);
  CHECK(wav.substr(0, 4) == "RIFF");
  CHECK(u32(wav, 4) == wav.size() - 8);
  CHECK(wav.substr(8, 8) == "WAVEfmt ");
  CHECK(u16(wav, 20) == 1);      // PCM
  CHECK(u16(wav, 22) == 2);      // channels
  CHECK(u32(wav, 24) == 8000);   // sample rate
  CHECK(u32(wav, 28) == 8000 * 4);
  CHECK(u16(wav, 34) == 16);
  CHECK(wav.substr(36, 4) == "data");
  CHECK(u32(wav, 40) == 12);
  std::vector<int16_t> s(6);
  std::memcpy(s.data(), wav.data() + 44, 12);
  CHECK(s == std::vector<int16_t>{0, 32767, -32768, 16384, 32767, -32768});
  CHECK_THROWS_CODE(audio_value("snd", make<float>({0}, Shape{1, 1}), 8000), Code::InvalidArgument, "audio 'snd'");
  CHECK_THROWS_CODE(audio_value("snd", make<float>({0}, Shape{1, 1, 1}), 0.5), Code::InvalidArgument, "sample_rate");
}

}  // namespace
}  // namespace cairn::test
