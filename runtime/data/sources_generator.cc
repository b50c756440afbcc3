// from_generator: a stream of a host function's elements; its state is the next index.
#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/sources.h"

namespace cairn::data {
namespace {

class Generator final : public Dataset {
 public:
  Generator(Context& ctx, ElementSpec spec, GeneratorFn fn) : Dataset(ctx, std::move(spec)), fn_(std::move(fn)) {}
  std::string describe() const override { return "from_generator(" + spec().text() + ")"; }
  int64_t cardinality() const override { return kUnknown; }
  std::unique_ptr<Iterator> make_iterator(uint64_t) const override {
    return std::make_unique<It>(std::static_pointer_cast<const Generator>(shared_from_this()));
  }

 private:
  class It final : public Iterator {
   public:
    explicit It(std::shared_ptr<const Generator> ds) : ds_(std::move(ds)) {}

    bool next(Element& out) override {
      if (ended_) return false;
      const int64_t index = next_++;  // a failed element is skipped
      Element e;
      const bool got = with_element_context("from_generator", index, [&] { return ds_->fn_(index, e); });
      if (!got) {
        ended_ = true;
        next_ = index;
        return false;
      }
      ds_->spec().check(e, "from_generator", index);
      out = std::move(e);
      return true;
    }
    void save(StateWriter& w) override {
      w.put_i64(next_);
      w.put_bool(ended_);
    }
    void restore(StateReader& r) override {
      const int64_t next = r.get_i64();
      const bool ended = r.get_bool();
      if (next < 0) r.corrupt("a negative generator index");
      next_ = next;
      ended_ = ended;
    }

   private:
    const std::shared_ptr<const Generator> ds_;
    int64_t next_ = 0;
    bool ended_ = false;
  };

  const GeneratorFn fn_;
};

}  // namespace

DatasetPtr from_generator(Context& ctx, ElementSpec spec, GeneratorFn fn) {
  if (!fn) raise(Code::InvalidArgument, "from_generator: no function");
  if (spec.components.empty()) raise(Code::InvalidArgument, "from_generator: the element spec has no components");
  std::vector<std::string> names;
  for (const auto& c : spec.components) {
    names.push_back(c.name);
    if (c.dtype == DType::Invalid || c.dtype == DType::String)
      raise(Code::InvalidArgument, "from_generator: component '{}' has dtype {}", c.name, dtype_name(c.dtype));
  }
  check_component_names(names, "from_generator");
  return std::make_shared<Generator>(ctx, std::move(spec), std::move(fn));
}

}  // namespace cairn::data
