// Helpers of the d-core C++ tests: temp files, running a dataset, save/restore at every position.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/data/dataset.h"
#include "tests/util/test_util.h"

namespace cairn::test {

inline std::string temp_file(const std::string& name, const std::string& bytes) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  FILE* f = std::fopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  return path;
}

// Component `c` of an element as text: the bytes of a uint8 vector, else the number.
inline std::string text_of(const data::Element& e, size_t c = 0) {
  const Tensor& t = e.at(c);
  if (t.dtype() == DType::UInt8 && t.rank() == 1) return std::string(t.data<char>(), t.nbytes());
  std::string out;
  for (double v : as_doubles(t)) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

// Runs iteration `epoch` of `ds` to the end: the elements as text (component c), joined with '|'.
inline std::string run_all(const data::DatasetPtr& ds, size_t c = 0, uint64_t epoch = 0) {
  auto it = ds->make_iterator(epoch);
  std::string out;
  data::Element e;
  for (bool first = true; it->next(e); first = false) out += (first ? "" : "|") + text_of(e, c);
  return out;
}

// Saves the root iterator before every element, restores each state into a fresh iterator and
// checks that it continues with exactly the rest. Returns the number of elements.
inline size_t check_every_position(const data::DatasetPtr& ds, size_t c = 0) {
  auto it = ds->make_iterator(0);
  std::vector<std::string> states, seen;
  data::Element e;
  for (;;) {
    data::StateWriter w;
    it->save(w);
    states.push_back(w.take());
    if (!it->next(e)) break;
    seen.push_back(text_of(e, c));
  }
  for (size_t p = 0; p < states.size(); ++p) {
    auto fresh = ds->make_iterator(0);
    data::StateReader r(states[p], ds->describe(), ctx());
    fresh->restore(r);
    CHECK(r.done());
    for (size_t k = p; k < seen.size(); ++k) {
      REQUIRE(fresh->next(e));
      CHECK(text_of(e, c) == seen[k]);
    }
    CHECK_FALSE(fresh->next(e));
  }
  return seen.size();
}

}  // namespace cairn::test
