// One BundleReader shared by several threads: every load gives the same values as a lone reader
// (reads are positional; nothing in the reader changes after open). ThreadSanitizer runs it too.
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "runtime/checkpoint/tf_bundle.h"
#include "tests/runtime/tf_checkpoint/tf_test_util.h"
#include "tests/util/test_util.h"

namespace cairn::tfckpt {
namespace {

std::vector<std::string> all_values(const BundleReader& r) {
  std::vector<std::string> out;
  for (const BundleEntry& e : r.entries()) {
    std::string v;
    if (e.tf_dtype == 7) {
      for (const std::string& s : r.load_strings(e)) v += std::to_string(s.size()) + ":" + s;
    } else if (e.dtype != DType::Invalid) {
      Tensor t = r.load(e, cairn::test::ctx().cpu());
      v.assign(static_cast<const char*>(t.raw_data()), t.nbytes());
    } else {
      r.verify(e);
    }
    out.push_back(std::move(v));
  }
  return out;
}

TEST_CASE("one reader, many threads") {
  for (const std::string name : {"dtypes_strings", "large_value", "tf1_partitioned_wide"}) {
    CAPTURE(name);
    auto r = BundleReader::open(tftest::golden_prefix(name));
    const auto want = all_values(*r);
    std::vector<std::vector<std::string>> got(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
      threads.emplace_back([&, i] {
        for (int k = 0; k < 3; ++k) got[i] = all_values(*r);
      });
    for (auto& t : threads) t.join();
    for (const auto& g : got) CHECK(g == want);
  }
}

}  // namespace
}  // namespace cairn::tfckpt
