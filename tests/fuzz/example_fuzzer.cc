// libFuzzer target for tf.train.Example / SequenceExample parsing (runtime/io/example.h): any bytes
// must parse or raise cairn::Error, a parsed message must survive serialize -> parse unchanged, and
// batched parsing into tensors must do the same over a batch of records. Build and run with
// tests/fuzz/run_example_fuzzer.sh (clang), or replay the corpus under gcc with
// //tests/fuzz:example_corpus_test.
//
// Input: byte 0 picks the message kind (bit 0: SequenceExample) and the specs' dtypes (bits 1-7);
// then up to 256 records, each a 2-byte little-endian length and that many bytes (the last takes what is
// left); more than 64 records parse in parallel blocks.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "runtime/core/allocator.h"
#include "runtime/cpu/cpu_device.h"
#include "runtime/io/example.h"

namespace {

using namespace cairn;
using namespace cairn::io;

Device& host() {
  static Device* d = new CpuDevice(default_allocator());
  return *d;
}

// Batches of more than 64 records parse in parallel blocks on it.
ThreadPool& pool() {
  static ThreadPool* p = new ThreadPool(2);
  return *p;
}

// parse(serialize(m)) == m, and serialization is a fixed point from there.
template <class Message, class Parse>
void round_trip(std::string_view record, Parse parse) {
  Message m;
  try {
    m = parse(record);
  } catch (const Error&) {
    return;
  }
  const std::string bytes = serialize(m);
  const Message again = parse(bytes);
  if (!(again == m) || serialize(again) != bytes) std::abort();
}

DType pick(uint8_t bits) {
  static const DType dtypes[] = {DType::Float32, DType::Int64, DType::UInt8, DType::Float32};
  return dtypes[bits & 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::vector<std::string_view> records;
  for (size_t p = 1; p < size && records.size() < 256;) {
    size_t len = size - p;
    if (len >= 2) {
      len = std::min<size_t>(data[p] | size_t{data[p + 1]} << 8, size - p - 2);
      p += 2;
    }
    records.emplace_back(reinterpret_cast<const char*>(data + p), len);
    p += len;
  }
  const bool sequence = flags & 1;
  for (std::string_view r : records) {
    if (sequence) {
      round_trip<SequenceExample>(r, parse_sequence_example);
    } else {
      round_trip<Example>(r, parse_example);
    }
  }

  std::vector<FeatureSpec> specs;
  specs.push_back({"a", SpecKind::FixedLen, pick(flags >> 1), Shape{2}, std::nullopt});
  specs.push_back({"b", SpecKind::VarLen, pick(flags >> 3), Shape{}, std::nullopt});
  if (flags & 0x80) {
    Tensor d = Tensor::allocate(host(), specs[0].dtype, Shape{});
    std::memset(d.raw_mutable_data(), 0x11, d.nbytes());
    specs[0].default_value = d;
  }
  if (sequence) {
    specs.push_back({"c", SpecKind::FixedLenSequence, pick(flags >> 5), Shape{2}, std::nullopt});
    specs.push_back({"d", SpecKind::VarLenSequence, pick(flags >> 3), Shape{}, std::nullopt});
  } else {
    specs.push_back({"c", SpecKind::VarLen, pick(flags >> 5), Shape{}, std::nullopt});
  }
  try {
    std::vector<Tensor> out = sequence ? parse_sequence_examples(host(), records.data(), records.size(), specs, &pool())
                                       : parse_examples(host(), records.data(), records.size(), specs, &pool());
    if (out.size() != (sequence ? 1u + 2 + 2 + 3 : 1u + 2 + 2)) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
