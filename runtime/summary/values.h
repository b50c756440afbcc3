// Summary values from tensors, as TensorFlow 2's tf.summary writes them (tensorboard
// plugins/*/summary_v2.py): a scalar is a rank-0 float32; a histogram a [k, 3] float64 tensor of
// (left edge, right edge, count); an image batch a string tensor [width, height, png, ...]; audio a
// string tensor [k, 2] of (wav, label); text a string tensor. Inputs are host tensors; every error
// names the summary kind and the tag.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/summary/event.h"
#include "runtime/tensor/tensor.h"

namespace cairn::summary {

constexpr int64_t kDefaultBuckets = 30;
constexpr int64_t kDefaultMaxOutputs = 3;

// TF2's bucketing of `n` values into `buckets` rows of (left, right, count), row-major:
// equal-width buckets from the minimum to the maximum (the last edge is the maximum, the maximum
// falls in the last bucket); all values equal: `buckets` rows (v, v, 0) with the count in the
// last; no values: `buckets` rows of zeros; buckets == 0: no rows.
std::vector<double> histogram_buckets(const double* data, size_t n, int64_t buckets);

// A rank-0 tensor of any real dtype (bool included), as float32. InvalidArgument otherwise.
Value scalar_tensor_value(std::string tag, const Tensor& t);
// Any real tensor; buckets >= 0.
Value histogram_value(std::string tag, const Tensor& t, int64_t buckets = kDefaultBuckets);
// A [k, h, w, c] batch, c in {1, 3, 4}: uint8, or floats clamped to [0, 1] and scaled by 255.5
// (TF's convert_image_dtype with saturation); the first max_outputs images become PNGs.
Value image_value(std::string tag, const Tensor& images, int64_t max_outputs = kDefaultMaxOutputs);
// A [k, t, c] batch of float samples in [-1, 1] (clamped); the first max_outputs clips become
// 16-bit PCM WAV files at sample_rate.
Value audio_value(std::string tag, const Tensor& audio, double sample_rate, int64_t max_outputs = kDefaultMaxOutputs);
// A rank-0 string tensor.
Value text_value(std::string tag, std::string_view text);

// PNG (libpng, 8 bits per channel; 1 = gray, 3 = RGB, 4 = RGBA) of `height` x `width` pixels, rows
// of width * channels bytes.
std::string encode_png(const uint8_t* pixels, int64_t height, int64_t width, int channels);
// A RIFF/WAVE file: 16-bit PCM, interleaved `channels`, samples clamped to [-1, 1].
std::string encode_wav(const float* samples, int64_t frames, int channels, int32_t sample_rate);

}  // namespace cairn::summary
