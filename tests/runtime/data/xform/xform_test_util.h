// Test datasets and helpers for the transformation tests: a table of elements served as an
// indexable dataset or as a stream (optionally failing at chosen positions), readable renderings
// of elements, and the save/restore-at-every-position check.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "tests/util/test_util.h"

namespace cairn::data::test {

using cairn::test::ctx;
using cairn::test::make;

// The elements `rows` (with `spec`): indexable, or a stream whose iterator's state is its position.
// Positions in `failing` throw InvalidArgument "table (element i): broken" (the element is skipped).
// epoch_offset adds 100 * epoch to int64 component 0 of every element, so tests see which
// iteration an element came from.
DatasetPtr table(ElementSpec spec, std::vector<Element> rows, bool indexable = true, std::set<int64_t> failing = {},
                 bool epoch_offset = false);

// int64 scalars "x" = 0, 1, ..., n - 1 (n = kInfinite: endless).
DatasetPtr ints(int64_t n, bool indexable = true, std::set<int64_t> failing = {}, bool epoch_offset = false);

// int64 vectors "v": element i is lens[i] copies of values[i] (spec [-1]).
DatasetPtr vectors(const std::vector<int64_t>& lens, const std::vector<int64_t>& values, bool indexable = true);

// "x: [1,2,3]" for each component, joined by "; "; values printed as doubles.
std::string show(const Element& e);
// dtype, shape and bytes of each component, for bit-for-bit comparison.
std::string bits(const Element& e);

// Every element (as show()) until the end or `limit`; failed elements as "error: <message>".
std::vector<std::string> run(const DatasetPtr& ds, size_t limit = 1000, uint64_t epoch = 0);

// The uninterrupted sequence (as bits(), errors included) of at most `limit` elements; then, for
// every position k, a fresh iterator restored from the state saved after k elements continues with
// exactly the same tail (and ends where the original does). Returns the largest state size seen.
size_t check_every_cut(const DatasetPtr& ds, size_t limit = 200);

}  // namespace cairn::data::test
