// tf.train.Example and tf.train.SequenceExample: build, serialize (deterministic), parse back, and
// parse batches of serialized records straight into tensors, as tf.io.parse_example and
// tf.io.parse_sequence_example do. The wire format is TensorFlow's (runtime/io/proto/feature.proto,
// example.proto); docs/example.md describes the spec-to-tensor mapping.
//
// Errors: malformed protobuf bytes raise DataLoss; records that parse but do not fit a spec (a
// missing feature without default, a wrong value count, a dtype mismatch) raise InvalidArgument.
// Batched parsing names the example index (and the key; for sequences the step) in every message.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/thread_pool.h"
#include "runtime/tensor/device.h"
#include "runtime/tensor/tensor.h"

namespace cairn::io {

// Which list a feature holds: the field numbers of Feature's oneof (== cairn_feature_kind).
// None is a Feature message with no list set; it reads as an empty list of any dtype.
enum class FeatureKind : int32_t { None = 0, Bytes = 1, Float = 2, Int64 = 3 };
const char* feature_kind_name(FeatureKind kind);  // "none", "bytes", "float", "int64"

// One feature: only the vector that `kind` names is used.
struct Feature {
  FeatureKind kind = FeatureKind::None;
  std::vector<std::string> bytes_list;
  std::vector<float> float_list;
  std::vector<int64_t> int64_list;

  static Feature bytes(std::vector<std::string> values);
  static Feature floats(std::vector<float> values);
  static Feature int64s(std::vector<int64_t> values);
  size_t size() const;  // values in the list that `kind` names
  bool operator==(const Feature& o) const;
  bool operator!=(const Feature& o) const { return !(*this == o); }
};

// Keys sorted bytewise: serialization writes map entries in this order, so it is deterministic.
using FeatureMap = std::map<std::string, Feature, std::less<>>;
using FeatureListMap = std::map<std::string, std::vector<Feature>, std::less<>>;  // key -> steps

struct Example {
  FeatureMap features;
  bool operator==(const Example& o) const { return features == o.features; }
};

struct SequenceExample {
  FeatureMap context;
  FeatureListMap feature_lists;
  bool operator==(const SequenceExample& o) const {
    return context == o.context && feature_lists == o.feature_lists;
  }
};

// Protobuf encoding, byte-identical to protobuf's deterministic serialization of the same message
// (map entries sorted by key; repeated floats and int64s packed; empty maps left out).
std::string serialize(const Example& example);
std::string serialize(const SequenceExample& example);

// Decoding accepts packed and unpacked lists, skips unknown fields, and follows protobuf's merge
// rules (a key given twice: the last entry wins; a oneof set twice to another kind: the last kind).
// Malformed bytes raise DataLoss naming `parse_example` / `parse_sequence_example` and the offset.
Example parse_example(std::string_view bytes);
SequenceExample parse_sequence_example(std::string_view bytes);

// How a spec turns one feature of every record of a batch into tensors (== cairn_feature_spec_kind).
//  FixedLen:          [batch, shape...]                                        1 output
//  VarLen:            values [total], row_lengths int64 [batch]                2 outputs
//  FixedLenSequence:  values [batch, max_steps, shape...], lengths int64 [batch]   2 outputs
//  VarLenSequence:    values [total], step_lengths int64 [total_steps],
//                     steps int64 [batch]                                       3 outputs
// FixedLen and VarLen read Example features (SequenceExample context features); the *Sequence kinds
// read SequenceExample feature lists. dtype float32 reads float lists, int64 int64 lists, uint8 byte
// lists: the bytes of all of a feature's strings concatenated count as its values (so FixedLen uint8
// of shape [784] reads one 784-byte string, VarLen uint8 gives each example's bytes and their count).
enum class SpecKind : int32_t { FixedLen = 1, VarLen = 2, FixedLenSequence = 3, VarLenSequence = 4 };
const char* spec_kind_name(SpecKind kind);
int spec_outputs(SpecKind kind);

struct FeatureSpec {
  std::string key;
  SpecKind kind = SpecKind::FixedLen;
  DType dtype = DType::Float32;  // Float32, Int64 or UInt8
  Shape shape;                   // FixedLen: per example; FixedLenSequence: per step; ignored otherwise
  // FixedLen: the value of a missing feature (none: missing is an error). FixedLenSequence: the
  // padding after an example's last step (none: zeros). Same dtype as the spec, with one element
  // (broadcast) or shape's element count; a host tensor.
  std::optional<Tensor> default_value;
};

// Parses `n` serialized Examples; returns the outputs of every spec, in spec order, as new tensors
// on `host` (a host device). Specs must be FixedLen or VarLen, with keys unique. With a pool of
// more than one thread, blocks of 64 records parse in parallel; the results and the error raised
// (that of the first failing record) are the same as on one thread.
std::vector<Tensor> parse_examples(Device& host, const std::string_view* records, size_t n,
                                   const std::vector<FeatureSpec>& specs, ThreadPool* pool = nullptr);
// Parses `n` serialized SequenceExamples. FixedLen/VarLen specs read context features, the
// *Sequence specs feature lists (a missing feature list has 0 steps); keys unique per group.
std::vector<Tensor> parse_sequence_examples(Device& host, const std::string_view* records, size_t n,
                                            const std::vector<FeatureSpec>& specs, ThreadPool* pool = nullptr);

}  // namespace cairn::io
