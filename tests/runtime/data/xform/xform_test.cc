// The transformations of transforms.h against TensorFlow's documented examples (tf.data.Dataset API
// docs), their specs and cardinalities, indexable vs stream, and bad input.
#include <algorithm>

#include "runtime/data/transforms.h"
#include "tests/runtime/data/xform/xform_test_util.h"

namespace cairn::data::test {
namespace {

using S = std::vector<std::string>;
using cairn::test::scalar;

// Range(start, stop) as our ints: x = start .. stop-1, via skip/take so it stays indexable.
DatasetPtr range(int64_t start, int64_t stop, bool indexable = true) {
  return take(skip(ints(stop, indexable), start), stop - start);
}

DatasetPtr renamed(DatasetPtr d, const std::string& name) { return select(std::move(d), {"x"}, {name}); }

S sorted(S v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST_CASE("batch: TensorFlow's example, with and without drop_remainder") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    DatasetPtr d = batch(ints(8, indexable), 3, false);
    CHECK(run(d) == S{"[3]0,1,2", "[3]3,4,5", "[2]6,7"});
    CHECK(d->random_access() == indexable);
    CHECK(d->spec().text() == "x: int64[-1]");
    CHECK(d->cardinality() == (indexable ? 3 : kUnknown));
    DatasetPtr dr = batch(ints(8, indexable), 3, true);
    CHECK(run(dr) == S{"[3]0,1,2", "[3]3,4,5"});
    CHECK(dr->spec().text() == "x: int64[3]");
    if (indexable) CHECK(dr->cardinality() == 2);
  }
  CHECK(batch(ints(kInfinite), 4, false)->cardinality() == kInfinite);
  CHECK(run(batch(ints(kInfinite), 2, true), 2) == S{"[2]0,1", "[2]2,3"});
  CHECK(batch(ints(6), 3, false)->describe() == "table(6).batch(3)");
}

TEST_CASE("batch: bad input") {
  CHECK_THROWS_CODE(batch(ints(8), 0, false), Code::InvalidArgument, "batch: batch_size is 0, expected >= 1");
  CHECK_THROWS_CODE(batch(ints(8), -3, false), Code::InvalidArgument, "batch_size is -3");
  CHECK_THROWS_CODE(batch(nullptr, 2, false), Code::InvalidArgument, "batch: the input dataset is null");
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    // elements 0..3 have lengths 2, 2, 3, 3: batch 1 is fine, batch 0 fine, but batch(3) mixes
    DatasetPtr d = batch(vectors({2, 2, 3, 3}, {1, 2, 3, 4}, indexable), 3, false);
    CHECK(run(d) ==
          S{"error: batch: component 'v' of element 2 has shape [3], but element 0 (the first of its batch) has shape "
            "[2]; batch needs equal shapes (use padded_batch to pad them)",
            "[1,3]4,4,4"});
  }
}

TEST_CASE("batch: a failed input element fails its batch; the next batch continues") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    const S got = run(batch(ints(7, indexable, {1}), 3, false));
    REQUIRE(got.size() == 3);
    CHECK(got[0] == "error: table (element 1): broken");
    // indexable: batch 1 is elements 3..5; stream: the partial batch is dropped with the error and
    // the next batch starts after the failed element.
    CHECK(got[1] == (indexable ? "[3]3,4,5" : "[3]2,3,4"));
    CHECK(got[2] == (indexable ? "[1]6" : "[2]5,6"));
  }
}

TEST_CASE("padded_batch: TensorFlow's examples") {
  // A = range(1, 5).map(lambda x: tf.fill([x], x))
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    DatasetPtr a = vectors({1, 2, 3, 4}, {1, 2, 3, 4}, indexable);
    CHECK(run(padded_batch(a, 2, false, {}, {})) == S{"[2,2]1,0,2,2", "[2,4]3,3,3,0,4,4,4,4"});
    DatasetPtr c = padded_batch(a, 2, false, {std::vector<int64_t>{5}}, {});
    CHECK(run(c) == S{"[2,5]1,0,0,0,0,2,2,0,0,0", "[2,5]3,3,3,0,0,4,4,4,4,0"});
    CHECK(c->spec().text() == "v: int64[-1,5]");
    DatasetPtr d = padded_batch(a, 2, true, {std::vector<int64_t>{5}}, {scalar<int64_t>(-1)});
    CHECK(run(d) == S{"[2,5]1,-1,-1,-1,-1,2,2,-1,-1,-1", "[2,5]3,3,3,-1,-1,4,4,4,4,-1"});
    CHECK(d->spec().text() == "v: int64[2,5]");
  }
  // elements = [([1, 2, 3], [10]), ([4, 5], [11, 12])]; padded_shapes=([4], [None]), padding_values=(-1, 100)
  ElementSpec spec{{{"a", DType::Int32, {-1}}, {"b", DType::Int32, {-1}}}};
  DatasetPtr two = table(spec, {{make<int32_t>({1, 2, 3}, Shape{3}), make<int32_t>({10}, Shape{1})},
                                {make<int32_t>({4, 5}, Shape{2}), make<int32_t>({11, 12}, Shape{2})}});
  DatasetPtr p = padded_batch(two, 2, false, {std::vector<int64_t>{4}, std::vector<int64_t>{-1}},
                              {scalar<int32_t>(-1), scalar<int32_t>(100)});
  CHECK(run(p) == S{"[2,4]1,2,3,-1,4,5,-1,-1; [2,2]10,100,11,12"});
  // rank 2, padding in both dims, nullopt = the batch's largest
  ElementSpec m{{{"m", DType::Float32, {-1, -1}}}};
  DatasetPtr mats = table(m, {{make<float>({1, 2}, Shape{1, 2})}, {make<float>({3, 4, 5}, Shape{3, 1})}});
  CHECK(run(padded_batch(mats, 2, false, {std::nullopt}, {})) == S{"[2,3,2]1,2,0,0,0,0,3,0,4,0,5,0"});
}

TEST_CASE("padded_batch: bad input") {
  DatasetPtr a = vectors({1, 2, 6, 4}, {1, 2, 3, 4});
  CHECK_THROWS_CODE(padded_batch(a, 0, false, {}, {}), Code::InvalidArgument, "padded_batch: batch_size is 0");
  CHECK_THROWS_CODE(padded_batch(a, 2, false, {std::vector<int64_t>{5, 1}}, {}), Code::InvalidArgument,
                    "padded_batch: component 'v' is int64[-1], but its padded shape [5,1] has rank 2");
  CHECK_THROWS_CODE(padded_batch(a, 2, false, {}, {scalar<float>(1)}), Code::InvalidArgument,
                    "the padding value of component 'v' (int64[-1]) is float32[], expected a int64 scalar");
  CHECK_THROWS_CODE(padded_batch(a, 2, false, {std::nullopt, std::nullopt}, {}), Code::InvalidArgument,
                    "padded_batch: 2 padded shapes for 1 components");
  ElementSpec fixed{{{"w", DType::Int64, {6}}}};
  CHECK_THROWS_CODE(padded_batch(table(fixed, {}), 2, false, {std::vector<int64_t>{5}}, {}), Code::InvalidArgument,
                    "padded_batch: component 'w' is int64[6], larger than its padded shape [5]");
  // element 2 has 6 values, more than the padded 5: that batch fails naming it; the next is fine
  CHECK(run(padded_batch(a, 2, false, {std::vector<int64_t>{5}}, {})) ==
        S{"[2,5]1,0,0,0,0,2,2,0,0,0",
          "error: padded_batch: component 'v' of element 2 has shape [6], larger than its padded shape [5]"});
}

TEST_CASE("unbatch: TensorFlow's example, indexable when the batch dim is known") {
  // elements = [[1, 2, 3], [1, 2], [1, 2, 3, 4]] (ragged: a stream)
  ElementSpec spec{{{"v", DType::Int64, {-1}}}};
  DatasetPtr ragged = table(spec, {{make<int64_t>({1, 2, 3}, Shape{3})},
                                   {make<int64_t>({1, 2}, Shape{2})},
                                   {make<int64_t>({1, 2, 3, 4}, Shape{4})}});
  DatasetPtr u = unbatch(ragged);
  CHECK(!u->random_access());
  CHECK(u->cardinality() == kUnknown);
  CHECK(u->spec().text() == "v: int64[]");
  CHECK(run(u) == S{"[]1", "[]2", "[]3", "[]1", "[]2", "[]1", "[]2", "[]3", "[]4"});
  // batch then unbatch gives back the input; static batch dim -> indexable
  DatasetPtr b = unbatch(batch(ints(9), 3, true));
  CHECK(b->random_access());
  CHECK(b->cardinality() == 9);
  CHECK(run(b) == run(ints(9)));
  // two components, rank 2
  ElementSpec two{{{"a", DType::Float32, {2, 2}}, {"b", DType::Int32, {2}}}};
  DatasetPtr t = table(two, {{make<float>({1, 2, 3, 4}, Shape{2, 2}), make<int32_t>({7, 8}, Shape{2})}});
  CHECK(run(unbatch(t)) == S{"[2]1,2; []7", "[2]3,4; []8"});
}

TEST_CASE("unbatch: bad input") {
  CHECK_THROWS_CODE(unbatch(ints(3)), Code::InvalidArgument,
                    "unbatch: component 'x' is a scalar (int64[]); every component needs a batch dimension");
  ElementSpec bad{{{"a", DType::Int64, {2}}, {"b", DType::Int64, {3}}}};
  CHECK_THROWS_CODE(unbatch(table(bad, {})), Code::InvalidArgument,
                    "unbatch: components 'a' (int64[2]) and 'b' (int64[3]) differ in their first dimension");
  ElementSpec loose{{{"a", DType::Int64, {-1}}, {"b", DType::Int64, {-1}}}};
  DatasetPtr d = table(loose, {{make<int64_t>({1, 2}, Shape{2}), make<int64_t>({3}, Shape{1})},
                               {make<int64_t>({5}, Shape{1}), make<int64_t>({6}, Shape{1})}});
  CHECK(run(unbatch(d)) ==
        S{"error: unbatch (element 0): component 'b' has shape [1], but the batch has 2 rows (component 'a' has shape "
          "[2])",
          "[]5; []6"});
}

TEST_CASE("shard: TensorFlow's example") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    CHECK(run(shard(ints(10, indexable), 3, 0)) == S{"[]0", "[]3", "[]6", "[]9"});
    CHECK(run(shard(ints(10, indexable), 3, 1)) == S{"[]1", "[]4", "[]7"});
    CHECK(run(shard(ints(10, indexable), 3, 2)) == S{"[]2", "[]5", "[]8"});
  }
  CHECK(shard(ints(10), 3, 0)->cardinality() == 4);
  CHECK(shard(ints(10), 3, 2)->cardinality() == 3);
  CHECK(shard(ints(2), 3, 2)->cardinality() == 0);
  CHECK_THROWS_CODE(shard(ints(10), 0, 0), Code::InvalidArgument, "shard: num_shards is 0, expected >= 1");
  CHECK_THROWS_CODE(shard(ints(10), 3, 3), Code::InvalidArgument, "shard: index is 3, expected in [0, 3)");
  CHECK_THROWS_CODE(shard(ints(10), 3, -1), Code::InvalidArgument, "shard: index is -1");
  // a failed element of another shard is not this shard's business
  for (bool indexable : {true, false})
    CHECK(run(shard(ints(6, indexable, {1, 2}), 2, 0)) == S{"[]0", "error: table (element 2): broken", "[]4"});
}

TEST_CASE("zip: TensorFlow's examples") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    DatasetPtr a = renamed(range(1, 4, indexable), "a");
    DatasetPtr b = renamed(range(4, 7, indexable), "b");
    CHECK(run(zip({a, b})) == S{"[]1; []4", "[]2; []5", "[]3; []6"});
    DatasetPtr c = renamed(batch(range(7, 13, indexable), 2, false), "c");
    CHECK(run(zip({a, b, c})) == S{"[]1; []4; [2]7,8", "[]2; []5; [2]9,10", "[]3; []6; [2]11,12"});
    DatasetPtr d = renamed(range(13, 15, indexable), "d");
    CHECK(run(zip({a, d})) == S{"[]1; []13", "[]2; []14"});
    CHECK(zip({a, d})->random_access() == indexable);
  }
  CHECK(zip({renamed(range(1, 4), "a"), renamed(range(13, 15), "d")})->cardinality() == 2);
  CHECK(zip({renamed(ints(kInfinite), "a"), renamed(range(13, 15), "d")})->cardinality() == 2);
  CHECK_THROWS_CODE(zip({}), Code::InvalidArgument, "zip: no input datasets");
  CHECK_THROWS_CODE(zip({ints(3), ints(3)}), Code::InvalidArgument, "zip: component 'x' is in two inputs");
  // a failure in one input keeps the inputs aligned
  CHECK(run(zip({renamed(ints(3, false, {1}), "a"), renamed(ints(3, false), "b")})) ==
        S{"[]0; []0", "error: table (element 1): broken", "[]2; []2"});
}

TEST_CASE("concatenate: TensorFlow's example and specs") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    DatasetPtr d = concatenate(range(1, 4, indexable), range(4, 8, indexable));
    CHECK(run(d) == S{"[]1", "[]2", "[]3", "[]4", "[]5", "[]6", "[]7"});
    CHECK(d->random_access() == indexable);
  }
  CHECK(concatenate(range(1, 4), range(4, 8))->cardinality() == 7);
  CHECK(concatenate(range(1, 4), ints(kInfinite))->cardinality() == kInfinite);
  CHECK(concatenate(batch(ints(4), 2, true), batch(ints(3), 3, true))->spec().text() == "x: int64[-1]");
  CHECK_THROWS_CODE(concatenate(ints(3), renamed(ints(3), "y")), Code::InvalidArgument,
                    "concatenate: component 0 is 'x' int64[] in the first input but 'y' int64[] in the second");
  CHECK_THROWS_CODE(concatenate(ints(3), batch(ints(3), 2, false)), Code::InvalidArgument,
                    "'x' int64[-1] in the second");
}

TEST_CASE("enumerate: TensorFlow's example") {
  for (bool indexable : {true, false}) {
    DatasetPtr d = enumerate(range(1, 4, indexable), 5);
    CHECK(run(d) == S{"[]5; []1", "[]6; []2", "[]7; []3"});
    CHECK(d->spec().text() == "index: int64[], x: int64[]");
  }
  CHECK_THROWS_CODE(enumerate(renamed(ints(3), "index"), 0), Code::InvalidArgument,
                    "enumerate: the input already has a component 'index'");
}

TEST_CASE("take, skip, repeat: TensorFlow's examples") {
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    CHECK(run(take(ints(10, indexable), 3)) == S{"[]0", "[]1", "[]2"});
    CHECK(run(skip(ints(10, indexable), 7)) == S{"[]7", "[]8", "[]9"});
    CHECK(run(take(ints(3, indexable), -1)).size() == 3);
    CHECK(run(skip(ints(3, indexable), -1)).empty());
    CHECK(run(take(ints(3, indexable), 10)).size() == 3);
    CHECK(run(repeat(range(1, 4, indexable), 3)) == S{"[]1", "[]2", "[]3", "[]1", "[]2", "[]3", "[]1", "[]2", "[]3"});
    CHECK(run(repeat(ints(2, indexable), -1), 5) == S{"[]0", "[]1", "[]0", "[]1", "[]0"});
    CHECK(run(repeat(ints(0, indexable), -1)).empty());  // ends instead of spinning
    CHECK(run(repeat(ints(2, indexable), 0)).empty());
  }
  CHECK(take(ints(10), 3)->cardinality() == 3);
  CHECK(take(ints(kInfinite), 3)->cardinality() == 3);
  CHECK(skip(ints(10), 7)->cardinality() == 3);
  CHECK(skip(ints(10), 17)->cardinality() == 0);
  CHECK(repeat(ints(3), 3)->cardinality() == 9);
  CHECK(repeat(ints(3), -1)->cardinality() == kInfinite);
  CHECK(repeat(ints(0), -1)->cardinality() == 0);
  CHECK(repeat(ints(3, false), 2)->cardinality() == kUnknown);
  CHECK(repeat(ints(3), 2)->random_access());
  CHECK_THROWS_CODE(take(ints(3), -2), Code::InvalidArgument, "take: count is -2, expected >= -1");
  CHECK_THROWS_CODE(skip(ints(3), -5), Code::InvalidArgument, "skip: count is -5, expected >= -1");
  CHECK_THROWS_CODE(repeat(ints(3), -2), Code::InvalidArgument, "repeat: count is -2, expected >= -1 (-1: forever)");
}

TEST_CASE("repeat runs each repetition as its own epoch") {
  // epoch_offset adds 100 * epoch: repetition r of a top-level repeat is epoch r
  for (bool indexable : {true, false}) {
    CAPTURE(indexable);
    CHECK(run(repeat(ints(2, indexable, {}, true), 3)) == S{"[]0", "[]1", "[]100", "[]101", "[]200", "[]201"});
  }
  // a nested repeat derives its inner epochs from the outer one's
  const S nested = run(repeat(repeat(ints(1, true, {}, true), 2), 2));
  REQUIRE(nested.size() == 4);
  CHECK(nested[0] == "[]0");
  CHECK(nested[1] == "[]100");
  CHECK(nested[2] != nested[0]);
  CHECK(nested == run(repeat(repeat(ints(1, false, {}, true), 2), 2)));
}

TEST_CASE("shuffle: a seeded permutation of an indexable input") {
  DatasetPtr d = shuffle(ints(100), 1, 7, true);
  CHECK(d->random_access());
  CHECK(d->cardinality() == 100);
  const S once = run(d);
  REQUIRE(once.size() == 100);
  CHECK(sorted(once) == sorted(run(ints(100))));  // a permutation
  CHECK(once != run(ints(100)));  // not the identity
  CHECK(once == run(shuffle(ints(100), 1000, 7, true)));  // buffer_size does not matter
  CHECK(once != run(shuffle(ints(100), 1, 8, true)));     // the seed does
  CHECK(once != run(d, 1000, 1));                         // reshuffle: another epoch, another order
  CHECK(run(shuffle(ints(100), 1, 7, false)) == run(shuffle(ints(100), 1, 7, false), 1000, 5));
  // over repeat: each pass of the repeat reshuffles, or not
  const S passes = run(repeat(shuffle(ints(10), 10, 3, true), 2));
  CHECK(S(passes.begin(), passes.begin() + 10) != S(passes.begin() + 10, passes.end()));
  const S same = run(repeat(shuffle(ints(10), 10, 3, false), 2));
  CHECK(S(same.begin(), same.begin() + 10) == S(same.begin() + 10, same.end()));
  // every size up to 70: a permutation (cycle walking stays inside [0, n))
  for (int64_t n = 1; n <= 70; ++n) {
    CHECK(sorted(run(shuffle(ints(n), 1, n, true))) == sorted(run(ints(n))));
  }
}

TEST_CASE("shuffle: a buffer over a stream") {
  DatasetPtr d = shuffle(ints(50, false), 10, 7, true);
  CHECK(!d->random_access());
  const S once = run(d);
  REQUIRE(once.size() == 50);
  CHECK(sorted(once) == sorted(run(ints(50))));
  CHECK(once != run(ints(50)));
  CHECK(once == run(shuffle(ints(50, false), 10, 7, true)));
  CHECK(once != run(d, 1000, 1));
  // a buffer of 10: the first output is one of the first 10 inputs, element 40 cannot come first
  CHECK(std::stoi(once[0].substr(2)) < 10);
  // buffer 1: the input order
  CHECK(run(shuffle(ints(20, false), 1, 7, true)) == run(ints(20)));
  CHECK_THROWS_CODE(shuffle(ints(5), 0, 1, true), Code::InvalidArgument, "shuffle: buffer_size is 0, expected >= 1");
  CHECK_THROWS_CODE(shuffle(ints(5), -4, 1, true), Code::InvalidArgument, "shuffle: buffer_size is -4");
  // an infinite indexable input is shuffled with the buffer
  DatasetPtr inf = shuffle(ints(kInfinite), 5, 1, true);
  CHECK(!inf->random_access());
  CHECK(run(inf, 20).size() == 20);
}

TEST_CASE("select") {
  ElementSpec spec{{{"a", DType::Int64, {}}, {"b", DType::Float32, {2}}, {"c", DType::Int32, {}}}};
  DatasetPtr t = table(spec, {{scalar<int64_t>(1), make<float>({2, 3}, Shape{2}), scalar<int32_t>(4)}});
  DatasetPtr s = select(t, {"c", "a"}, {"cc", "a"});
  CHECK(s->spec().text() == "cc: int32[], a: int64[]");
  CHECK(run(s) == S{"[]4; []1"});
  CHECK(s->random_access());
  CHECK(select(t, {"b"}, {})->spec().text() == "b: float32[2]");
  CHECK_THROWS_CODE(select(t, {"z"}, {}), Code::NotFound, "select: no component 'z' in a: int64[]");
  CHECK_THROWS_CODE(select(t, {"a", "a"}, {}), Code::InvalidArgument, "select: component 'a' selected twice");
  CHECK_THROWS_CODE(select(t, {"a", "b"}, {"x", "x"}), Code::InvalidArgument, "select: component name 'x' appears twice");
  CHECK_THROWS_CODE(select(t, {"a"}, {""}), Code::InvalidArgument, "select: a component name is empty");
  CHECK_THROWS_CODE(select(t, {"a"}, {"x", "y"}), Code::InvalidArgument, "select: 1 names but 2 new names");
}

Element record(const std::string& bytes) {
  std::vector<uint8_t> v(bytes.begin(), bytes.end());
  return {make<uint8_t>(v, Shape{static_cast<int64_t>(v.size())}), scalar<int64_t>(9)};
}

TEST_CASE("parse_example: FixedLen and VarLen, unbatched") {
  io::Example e0, e1;
  e0.features["f"] = io::Feature::floats({1.5f, 2.5f});
  e0.features["ids"] = io::Feature::int64s({4, 5, 6});
  e1.features["f"] = io::Feature::floats({3.5f, 4.5f});
  e1.features["ids"] = io::Feature::int64s({});
  ElementSpec spec{{{"record", DType::UInt8, {-1}}, {"w", DType::Int64, {}}}};
  DatasetPtr recs = table(spec, {record(io::serialize(e0)), record(io::serialize(e1)), record("\xff\xff")});
  std::vector<io::FeatureSpec> specs(2);
  specs[0].key = "f";
  specs[0].shape = Shape{2};
  specs[1].key = "ids";
  specs[1].kind = io::SpecKind::VarLen;
  specs[1].dtype = DType::Int64;
  DatasetPtr p = parse_example(recs, "record", specs);
  CHECK(p->spec().text() == "f: float32[2], ids/indices: int64[-1,1], ids/values: int64[-1], w: int64[]");
  CHECK(p->random_access());
  const S got = run(p);
  REQUIRE(got.size() == 3);
  CHECK(got[0] == "[2]1.5,2.5; [3,1]0,1,2; [3]4,5,6; []9");
  CHECK(got[1] == "[2]3.5,4.5; [0,1]; [0]; []9");
  CHECK(got[2].find("error: parse_example (element 2): parse_examples: example 0: malformed protobuf") == 0);
  // batching after parsing: padded_batch of the VarLen values
  CHECK(run(padded_batch(select(p, {"ids/values"}, {}), 2, true, {}, {scalar<int64_t>(-1)})) ==
        S{"[2,3]4,5,6,-1,-1,-1"});
  CHECK_THROWS_CODE(parse_example(recs, "nope", specs), Code::NotFound, "parse_example: no component 'nope'");
  CHECK_THROWS_CODE(parse_example(recs, "w", specs), Code::InvalidArgument,
                    "parse_example: component 'w' is int64[], expected a uint8 vector");
  std::vector<io::FeatureSpec> dup = {specs[0], specs[0]};
  CHECK_THROWS_CODE(parse_example(recs, "record", dup), Code::InvalidArgument,
                    "parse_example: parse_examples: spec 1 ('f'): another spec has the same key");
  std::vector<io::FeatureSpec> clash = {specs[0]};
  clash[0].key = "w";
  CHECK_THROWS_CODE(parse_example(recs, "record", clash), Code::InvalidArgument,
                    "parse_example: component name 'w' appears twice");
  std::vector<io::FeatureSpec> seq = {specs[0]};
  seq[0].kind = io::SpecKind::FixedLenSequence;
  CHECK_THROWS_CODE(parse_example(recs, "record", seq), Code::InvalidArgument, "specs are for sequence examples");
}

TEST_CASE("descriptions") {
  DatasetPtr d = enumerate(
      shard(skip(take(repeat(shuffle(batch(ints(10), 2, true), 4, 1, false), 2), 5), 1), 2, 0), 3);
  CHECK(d->describe() ==
        "table(10).batch(2, drop_remainder=true).shuffle(4, seed=1, reshuffle_each_iteration=false).repeat(2).take(5)"
        ".skip(1).shard(2, 0).enumerate(3)");
  CHECK(d->random_access());
}

}  // namespace
}  // namespace cairn::data::test
