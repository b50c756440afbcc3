#include "runtime/summary/values.h"

#include <png.h>

#include <csetjmp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/core/convert.h"
#include "runtime/core/error.h"

namespace cairn::summary {

namespace {

void check_host(const Tensor& t, const char* kind, const std::string& tag) {
  if (!t.valid()) raise(Code::InvalidArgument, "{} '{}': the tensor is empty (NULL)", kind, tag);
  if (!t.device()->is_host())
    raise(Code::InvalidArgument, "{} '{}': the tensor is on {}; summaries read host tensors", kind, tag,
          t.device()->name());
}

void check_real(const Tensor& t, const char* kind, const std::string& tag) {
  if (!dtype_in(dtypes::kReal | dtypes::kBool, t.dtype()))
    raise(Code::InvalidArgument, "{} '{}': unsupported dtype {} (expected a real number or bool tensor)", kind, tag,
          dtype_name(t.dtype()));
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  visit_dtype(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (size_t i = 0; i < out.size(); ++i) out[i] = convert<double>(p[i]);
  });
  return out;
}

template <class T>
void append_le(std::string& out, T v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);  // little-endian hosts only (as the rest of the runtime)
  out.append(b, sizeof v);
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) out += (i ? ", " : "") + std::to_string(s.dim(i));
  return out + "]";
}

}  // namespace

std::vector<double> histogram_buckets(const double* data, size_t n, int64_t buckets) {
  const size_t k = static_cast<size_t>(std::max<int64_t>(0, buckets));
  std::vector<double> out(3 * k, 0.0);
  if (n == 0 || k == 0) return out;
  double lo = data[0], hi = data[0];
  for (size_t i = 1; i < n; ++i) {
    lo = std::min(lo, data[i]);
    hi = std::max(hi, data[i]);
  }
  const double range = hi - lo;
  if (range == 0) {
    for (size_t b = 0; b < k; ++b) out[3 * b] = out[3 * b + 1] = hi;
    out[3 * (k - 1) + 2] = static_cast<double>(n);
    return out;
  }
  const double width = range / static_cast<double>(k);
  for (size_t i = 0; i < n; ++i) {
    // floor((x - min) / width) clamped to the last bucket, as TF's int32 cast then minimum.
    double idx = std::floor((data[i] - lo) / width);
    size_t b = idx >= static_cast<double>(k - 1) ? k - 1 : static_cast<size_t>(std::max(0.0, idx));
    out[3 * b + 2] += 1;
  }
  // TF's linspace(min, max, k + 1): start + i * step, with the last edge forced to max.
  const double step = range / static_cast<double>(k);
  for (size_t b = 0; b < k; ++b) {
    out[3 * b] = lo + step * static_cast<double>(b);
    out[3 * b + 1] = b + 1 == k ? hi : lo + step * static_cast<double>(b + 1);
  }
  return out;
}

Value scalar_tensor_value(std::string tag, const Tensor& t) {
  check_host(t, "scalar", tag);
  check_real(t, "scalar", tag);
  if (t.rank() != 0)
    raise(Code::InvalidArgument, "scalar '{}': expected a rank-0 tensor, got shape {}", tag, shape_str(t.shape()));
  return scalar_value(std::move(tag), static_cast<float>(as_doubles(t)[0]));
}

Value histogram_value(std::string tag, const Tensor& t, int64_t buckets) {
  check_host(t, "histogram", tag);
  check_real(t, "histogram", tag);
  if (buckets < 0) raise(Code::InvalidArgument, "histogram '{}': buckets is {}; expected >= 0", tag, buckets);
  std::vector<double> data = as_doubles(t);
  for (double d : data)
    if (!std::isfinite(d))
      raise(Code::InvalidArgument, "histogram '{}': the data holds a NaN or infinite value", tag);
  std::vector<double> rows = histogram_buckets(data.data(), data.size(), buckets);
  Value v;
  v.tag = std::move(tag);
  v.plugin = Plugin::Histograms;
  v.tensor.dtype = DType::Float64;
  v.tensor.shape = {static_cast<int64_t>(rows.size() / 3), 3};
  v.tensor.content.assign(reinterpret_cast<const char*>(rows.data()), rows.size() * sizeof(double));
  return v;
}

Value image_value(std::string tag, const Tensor& images, int64_t max_outputs) {
  check_host(images, "image", tag);
  const Shape& s = images.shape();
  if (s.rank() != 4 || (s.dim(3) != 1 && s.dim(3) != 3 && s.dim(3) != 4))
    raise(Code::InvalidArgument, "image '{}': expected a [k, height, width, channels] batch with 1, 3 or 4 channels, got shape {}",
          tag, shape_str(s));
  if (images.dtype() != DType::UInt8 && !dtype_is_floating(images.dtype()))
    raise(Code::InvalidArgument, "image '{}': unsupported dtype {} (expected uint8 or a float type)", tag,
          dtype_name(images.dtype()));
  if (max_outputs < 0) raise(Code::InvalidArgument, "image '{}': max_outputs is {}; expected >= 0", tag, max_outputs);
  const int64_t k = std::min(s.dim(0), max_outputs), h = s.dim(1), w = s.dim(2);
  const int c = static_cast<int>(s.dim(3));
  if (k > 0 && (h <= 0 || w <= 0 || h > (1 << 24) || w > (1 << 24)))
    raise(Code::InvalidArgument, "image '{}': height and width must be in [1, 2^24], got shape {}", tag, shape_str(s));
  Value v;
  v.tag = std::move(tag);
  v.plugin = Plugin::Images;
  v.tensor.dtype = DType::String;
  v.tensor.shape = {k + 2};
  v.tensor.strings = {std::to_string(w), std::to_string(h)};
  const size_t per_image = static_cast<size_t>(h * w * c);
  std::vector<uint8_t> pixels(images.dtype() == DType::UInt8 ? 0 : per_image);
  for (int64_t i = 0; i < k; ++i) {
    const uint8_t* p;
    if (images.dtype() == DType::UInt8) {
      p = images.data<uint8_t>() + i * static_cast<int64_t>(per_image);
    } else {
      visit_dtype(images.dtype(), [&](auto t) {
        using T = typename decltype(t)::type;
        if constexpr (std::is_floating_point_v<compute_t<T>>) {
          const T* src = images.data<T>() + i * static_cast<int64_t>(per_image);
          for (size_t j = 0; j < per_image; ++j) {
            double x = static_cast<double>(widen(src[j])) * 255.5;
            pixels[j] = std::isnan(x) ? 0 : static_cast<uint8_t>(std::clamp(x, 0.0, 255.0));
          }
        }
      });
      p = pixels.data();
    }
    v.tensor.strings.push_back(encode_png(p, h, w, c));
  }
  return v;
}

Value audio_value(std::string tag, const Tensor& audio, double sample_rate, int64_t max_outputs) {
  check_host(audio, "audio", tag);
  const Shape& s = audio.shape();
  if (s.rank() != 3)
    raise(Code::InvalidArgument, "audio '{}': expected a [k, frames, channels] batch, got shape {}", tag, shape_str(s));
  if (!dtype_is_floating(audio.dtype()))
    raise(Code::InvalidArgument, "audio '{}': unsupported dtype {} (expected a float type in [-1, 1])", tag,
          dtype_name(audio.dtype()));
  if (!(sample_rate >= 1 && sample_rate <= 1e7) || sample_rate != std::floor(sample_rate))
    raise(Code::InvalidArgument, "audio '{}': sample_rate {} is not a whole number of Hz in [1, 1e7]", tag, sample_rate);
  if (max_outputs < 0) raise(Code::InvalidArgument, "audio '{}': max_outputs is {}; expected >= 0", tag, max_outputs);
  if (s.dim(2) < 1 || s.dim(2) > 65535)
    raise(Code::InvalidArgument, "audio '{}': {} channels; expected 1 to 65535", tag, s.dim(2));
  const int64_t k = std::min(s.dim(0), max_outputs), frames = s.dim(1);
  const int c = static_cast<int>(s.dim(2));
  std::vector<double> all = as_doubles(audio);
  Value v;
  v.tag = std::move(tag);
  v.plugin = Plugin::Audio;
  v.tensor.dtype = DType::String;
  v.tensor.shape = {k, 2};
  std::vector<float> clip(static_cast<size_t>(frames * c));
  for (int64_t i = 0; i < k; ++i) {
    for (size_t j = 0; j < clip.size(); ++j) clip[j] = static_cast<float>(all[static_cast<size_t>(i) * clip.size() + j]);
    v.tensor.strings.push_back(encode_wav(clip.data(), frames, c, static_cast<int32_t>(sample_rate)));
    v.tensor.strings.emplace_back();  // the label: TF2 writes ""
  }
  return v;
}

Value text_value(std::string tag, std::string_view text) {
  Value v;
  v.tag = std::move(tag);
  v.plugin = Plugin::Text;
  v.tensor.dtype = DType::String;
  v.tensor.strings = {std::string(text)};
  return v;
}

namespace {
void png_append(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void png_no_flush(png_structp) {}
// libpng's error path: keep the message, then longjmp back to encode_png (no exception crosses
// libpng's C frames).
void png_fail(png_structp png, png_const_charp message) {
  *static_cast<std::string*>(png_get_error_ptr(png)) = message;
  png_longjmp(png, 1);
}
void png_ignore_warning(png_structp, png_const_charp) {}

// The libpng part of encode_png, with no C++ objects of its own between setjmp and longjmp.
bool write_png(png_structp png, png_infop info, const uint8_t* pixels, int64_t height, int64_t width, int channels) {
  if (setjmp(png_jmpbuf(png))) return false;
  const int color = channels == 1 ? PNG_COLOR_TYPE_GRAY : channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_RGBA;
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, color,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  // Fast settings: summaries are written often and read rarely. One cheap row filter (Sub) instead
  // of libpng's adaptive choice among all five, which tries each on every row.
  png_set_compression_level(png, 1);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_write_info(png, info);
  const size_t stride = static_cast<size_t>(width) * static_cast<size_t>(channels);
  for (int64_t y = 0; y < height; ++y) png_write_row(png, const_cast<png_bytep>(pixels + static_cast<size_t>(y) * stride));
  png_write_end(png, nullptr);
  return true;
}
}  // namespace

std::string encode_png(const uint8_t* pixels, int64_t height, int64_t width, int channels) {
  std::string error;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &error, png_fail, png_ignore_warning);
  if (!png) raise(Code::ResourceExhausted, "summary: cannot allocate a PNG encoder");
  png_infop info = png_create_info_struct(png);
  std::string out;
  bool ok = false;
  if (info) {
    png_set_write_fn(png, &out, png_append, png_no_flush);
    ok = write_png(png, info, pixels, height, width, channels);
  }
  png_destroy_write_struct(&png, &info);
  if (!ok) raise(Code::Internal, "summary: PNG encoding failed: {}", error.empty() ? "out of memory" : error);
  return out;
}

std::string encode_wav(const float* samples, int64_t frames, int channels, int32_t sample_rate) {
  const uint64_t data_bytes = static_cast<uint64_t>(frames) * static_cast<uint64_t>(channels) * 2;
  if (data_bytes > 0xFFFFFFFFull - 36) raise(Code::InvalidArgument, "summary: audio clip too long for a WAV file");
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  append_le<uint32_t>(out, static_cast<uint32_t>(36 + data_bytes));
  out += "WAVEfmt ";
  append_le<uint32_t>(out, 16);                   // fmt chunk size
  append_le<uint16_t>(out, 1);                    // PCM
  append_le<uint16_t>(out, static_cast<uint16_t>(channels));
  append_le<uint32_t>(out, static_cast<uint32_t>(sample_rate));
  append_le<uint32_t>(out, static_cast<uint32_t>(sample_rate) * static_cast<uint32_t>(channels) * 2);  // byte rate
  append_le<uint16_t>(out, static_cast<uint16_t>(channels * 2));  // block align
  append_le<uint16_t>(out, 16);                                   // bits per sample
  out += "data";
  append_le<uint32_t>(out, static_cast<uint32_t>(data_bytes));
  const size_t n = static_cast<size_t>(frames) * static_cast<size_t>(channels);
  for (size_t i = 0; i < n; ++i) {
    // TF's wav_io: round(x * 2^15), clamped to the int16 range.
    float x = std::isnan(samples[i]) ? 0.0f : std::round(samples[i] * 32768.0f);
    append_le<int16_t>(out, static_cast<int16_t>(std::clamp(x, -32768.0f, 32767.0f)));
  }
  return out;
}

}  // namespace cairn::summary
