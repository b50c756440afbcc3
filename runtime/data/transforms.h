// The structural transformations of tf.data: batch, padded_batch, unbatch, shuffle, repeat, take,
// skip, shard, zip, concatenate, enumerate, select and parse_example.
//
// Each checks its arguments and its input's element spec when it is built (InvalidArgument or
// NotFound naming the transformation and the component) and keeps an indexable input indexable
// where it can (docs/data.md, "Transformations", lists which and what each saves):
//  - batch, padded_batch, repeat (of a finite input), take, skip, shard, zip (all inputs
//    indexable), concatenate, enumerate, select, parse_example: get(i, epoch) of the output is a
//    pure function of the input's get, so the state stays one index.
//  - shuffle of a finite indexable input: a seeded bijective permutation of [0, n) (a Feistel
//    network keyed by Philox), computed per index: nothing to save beyond the index.
//  - unbatch of an indexable input whose batch dimension is known in the spec: index i is row
//    i % B of input element i / B.
// Over streams each has its own iterator, which saves its input's state and its own fields
// (shuffle's buffer explicitly).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "runtime/io/example.h"

namespace cairn::data {

// batch_size consecutive elements stacked on a new leading dimension (Dataset.batch). The last
// batch is smaller unless drop_remainder. Elements of one batch must have equal shapes.
DatasetPtr batch(DatasetPtr in, int64_t batch_size, bool drop_remainder);

// Dataset.padded_batch: padded_shapes is empty (every dim padded to the batch's largest) or one
// entry per component: nullopt (the same) or dims (the component's rank) where -1 pads to the
// batch's largest and n >= 0 to exactly n. padding_values is empty (zeros) or one per component:
// an invalid Tensor (zero) or a scalar of the component's dtype.
DatasetPtr padded_batch(DatasetPtr in, int64_t batch_size, bool drop_remainder,
                        std::vector<std::optional<std::vector<int64_t>>> padded_shapes, Element padding_values);

// Each element split along its first dimension (Dataset.unbatch).
DatasetPtr unbatch(DatasetPtr in);

// Dataset.shuffle: a permutation of the whole input when it is indexable and finite (buffer_size
// then only has to be valid), a buffer of buffer_size elements otherwise. The order depends on
// seed, and with reshuffle_each_iteration on the iteration (epoch) too.
DatasetPtr shuffle(DatasetPtr in, int64_t buffer_size, int64_t seed, bool reshuffle_each_iteration);

// The input `count` times (-1: forever); repetition r runs iteration derive_epoch(epoch, r).
DatasetPtr repeat(DatasetPtr in, int64_t count);
// The first n elements (-1: all).
DatasetPtr take(DatasetPtr in, int64_t n);
// All but the first n elements (-1: none left).
DatasetPtr skip(DatasetPtr in, int64_t n);
// Elements index, index + num_shards, index + 2 * num_shards, ...
DatasetPtr shard(DatasetPtr in, int64_t num_shards, int64_t index);
// The inputs' components side by side; ends with the shortest input. Names must be unique.
DatasetPtr zip(std::vector<DatasetPtr> inputs);
// a's elements, then b's. Same names, dtypes and ranks; dims that differ become -1.
DatasetPtr concatenate(DatasetPtr a, DatasetPtr b);
// Prepends an int64 scalar "index": start, start + 1, ...
DatasetPtr enumerate(DatasetPtr in, int64_t start);
// The components `names`, in that order, renamed to new_names (empty: the same names).
DatasetPtr select(DatasetPtr in, std::vector<std::string> names, std::vector<std::string> new_names);

// Parses component `component` (a uint8 vector: one serialized tf.train.Example) with FixedLen
// and VarLen specs, replacing it by (in spec order):
//   FixedLen: "<key>"          spec.dtype [spec.shape...]
//   VarLen:   "<key>/indices"  int64 [n, 1]: 0, 1, ..., n - 1 (the positions of the values, as
//                              TensorFlow's parse_single_example gives a VarLenFeature's indices)
//             "<key>/values"   spec.dtype [n]
// io::parse_examples of a batch of one gives a VarLen feature as values [n] and row_lengths [1];
// the row length is the values' length, so it is not kept.
DatasetPtr parse_example(DatasetPtr in, std::string component, std::vector<io::FeatureSpec> specs);

}  // namespace cairn::data
