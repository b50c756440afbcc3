// zip, enumerate, select and parse_example: transformations of the element's structure.
//
// enumerate, select and parse_example are element-wise (output i is a function of input i and
// i), so they are indexable over an indexable input; over a stream their iterator counts the input
// elements (a failed one counts too, as in TensorFlow, where enumerate is a zip with a range) and
// saves that count with the input's state. zip is indexable when every input is; over streams it
// pulls one element from every input per next(), even after one of them fails, so the inputs stay
// aligned, and then reports the first failure.
#include <exception>
#include <set>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/transforms.h"
#include "runtime/data/transforms_internal.h"

namespace cairn::data {
namespace {

using xform::UnaryDataset;

// ---- zip ----

class ZipDataset final : public Dataset {
 public:
  ZipDataset(std::vector<DatasetPtr> inputs, ElementSpec spec)
      : Dataset(inputs[0]->context(), std::move(spec)), inputs_(std::move(inputs)) {}

  std::string describe() const override {
    std::string out = "zip(";
    for (size_t k = 0; k < inputs_.size(); ++k) out += (k ? ", " : "") + inputs_[k]->describe();
    return out + ")";
  }

  int64_t cardinality() const override {
    int64_t n = kInfinite;
    for (const DatasetPtr& in : inputs_) {
      const int64_t m = in->cardinality();
      if (m == kUnknown) return kUnknown;
      if (m >= 0) n = n == kInfinite ? m : std::min(n, m);
    }
    return n;
  }

  bool random_access() const override {
    for (const DatasetPtr& in : inputs_)
      if (!in->random_access() || in->cardinality() == kUnknown) return false;
    return true;
  }
  int parallelism() const override {
    int p = 1;
    for (const DatasetPtr& in : inputs_) p = std::max(p, in->parallelism());
    return p;
  }
  int64_t prefetch_depth() const override {
    int64_t p = 0;
    for (const DatasetPtr& in : inputs_) p = std::max(p, in->prefetch_depth());
    return p;
  }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    out.clear();
    Element part;
    for (const DatasetPtr& in : inputs_) {
      in->get(index, epoch, part);
      for (Tensor& t : part) out.push_back(std::move(t));
    }
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  const std::vector<DatasetPtr>& inputs() const { return inputs_; }

 private:
  const std::vector<DatasetPtr> inputs_;
};

class ZipIterator final : public Iterator {
 public:
  ZipIterator(std::shared_ptr<const ZipDataset> ds, uint64_t epoch) : ds_(std::move(ds)) {
    for (const DatasetPtr& in : ds_->inputs()) its_.push_back(in->make_iterator(epoch));
  }

  bool next(Element& out) override {
    if (ended_) return false;
    Element all, part;
    std::exception_ptr error;
    for (auto& it : its_) {
      try {
        if (!it->next(part)) {
          ended_ = true;
          return false;
        }
        for (Tensor& t : part) all.push_back(std::move(t));
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    out = std::move(all);
    return true;
  }

  void save(StateWriter& w) override {
    w.put_bool(ended_);
    for (auto& it : its_) it->save(w);
  }
  void restore(StateReader& r) override {
    ended_ = r.get_bool();
    for (auto& it : its_) it->restore(r);
  }
  void cancel() override {
    for (auto& it : its_) it->cancel();
  }

 private:
  const std::shared_ptr<const ZipDataset> ds_;
  std::vector<std::unique_ptr<Iterator>> its_;
  bool ended_ = false;
};

std::unique_ptr<Iterator> ZipDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<ZipIterator>(*this, epoch);
}

// ---- element-wise transformations ----

class ElementwiseDataset : public UnaryDataset {
 public:
  using UnaryDataset::UnaryDataset;
  int64_t cardinality() const override { return in_->cardinality(); }
  bool random_access() const override { return input_indexable(); }
  void get(int64_t index, uint64_t epoch, Element& out) const override {
    Element e;
    in_->get(index, epoch, e);
    apply(index, std::move(e), out);
  }
  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;
  // Output element `index` from input element `index`.
  virtual void apply(int64_t index, Element in, Element& out) const = 0;
};

class ElementwiseIterator final : public xform::InputIterator<ElementwiseDataset> {
 public:
  using InputIterator::InputIterator;
  bool next(Element& out) override {
    Element e;
    if (!input_.next(e)) return false;
    ds_->apply(input_.count() - 1, std::move(e), out);
    return true;
  }
};

std::unique_ptr<Iterator> ElementwiseDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<ElementwiseIterator>(*this, epoch);
}

class EnumerateDataset final : public ElementwiseDataset {
 public:
  EnumerateDataset(DatasetPtr in, ElementSpec spec, int64_t start)
      : ElementwiseDataset(std::move(in), std::move(spec)), start_(start) {}
  std::string describe() const override { return fmt::format("{}.enumerate({})", in_->describe(), start_); }
  void apply(int64_t index, Element in, Element& out) const override {
    Tensor i = Tensor::allocate(context().cpu(), DType::Int64, Shape{});
    *i.mutable_data<int64_t>() = start_ + index;
    out.clear();
    out.reserve(in.size() + 1);
    out.push_back(std::move(i));
    for (Tensor& t : in) out.push_back(std::move(t));
  }

 private:
  const int64_t start_;
};

class SelectDataset final : public ElementwiseDataset {
 public:
  SelectDataset(DatasetPtr in, ElementSpec spec, std::vector<int> picks, std::string text)
      : ElementwiseDataset(std::move(in), std::move(spec)), picks_(std::move(picks)), text_(std::move(text)) {}
  std::string describe() const override { return in_->describe() + ".select(" + text_ + ")"; }
  void apply(int64_t index, Element in, Element& out) const override {
    if (in.size() != in_->spec().size()) in_->spec().check(in, "select", index);
    out.clear();
    for (int p : picks_) out.push_back(in[static_cast<size_t>(p)]);
  }

 private:
  const std::vector<int> picks_;
  const std::string text_;
};

class ParseExampleDataset final : public ElementwiseDataset {
 public:
  ParseExampleDataset(DatasetPtr in, ElementSpec spec, int component, std::vector<io::FeatureSpec> specs)
      : ElementwiseDataset(std::move(in), std::move(spec)), component_(component), specs_(std::move(specs)) {}

  std::string describe() const override {
    std::string keys;
    for (const io::FeatureSpec& s : specs_) keys += (keys.empty() ? "'" : ", '") + s.key + "'";
    return fmt::format("{}.parse_example('{}', [{}])", in_->describe(),
                       in_->spec().components[static_cast<size_t>(component_)].name, keys);
  }

  void apply(int64_t index, Element in, Element& out) const override {
    const auto c = static_cast<size_t>(component_);
    std::vector<Tensor> parsed = with_element_context("parse_example", index, [&] {
      if (c >= in.size() || !in[c].valid() || in[c].dtype() != DType::UInt8 || in[c].rank() != 1)
        in_->spec().check(in, "parse_example", index);
      const Tensor record = host_values(in[c], context().cpu(), "parse_example");
      const std::string_view view(static_cast<const char*>(record.raw_data()),
                                  static_cast<size_t>(record.num_elements()));
      return io::parse_examples(context().cpu(), &view, 1, specs_);
    });
    out.clear();
    for (size_t k = 0; k < in.size(); ++k) {
      if (k != c) {
        out.push_back(std::move(in[k]));
        continue;
      }
      size_t p = 0;
      for (const io::FeatureSpec& s : specs_) {
        if (s.kind == io::SpecKind::FixedLen) {  // [1, shape...] -> [shape...]
          out.push_back(parsed[p++].reshaped(s.shape));
          continue;
        }
        Tensor values = std::move(parsed[p]);  // [n]; parsed[p + 1] is row_lengths [1] == {n}
        p += 2;
        const int64_t n = values.num_elements();
        Tensor indices = Tensor::allocate(context().cpu(), DType::Int64, Shape{n, 1});
        for (int64_t i = 0; i < n; ++i) indices.mutable_data<int64_t>()[i] = i;
        out.push_back(std::move(indices));
        out.push_back(std::move(values));
      }
    }
  }

 private:
  const int component_;
  const std::vector<io::FeatureSpec> specs_;
};

void check_unique(const ElementSpec& spec, const char* who) {
  std::set<std::string> seen;
  for (const ComponentSpec& c : spec.components) {
    if (c.name.empty()) raise(Code::InvalidArgument, "{}: a component name is empty", who);
    if (!seen.insert(c.name).second)
      raise(Code::InvalidArgument, "{}: component name '{}' appears twice ({})", who, c.name, spec.text());
  }
}

}  // namespace

DatasetPtr zip(std::vector<DatasetPtr> inputs) {
  if (inputs.empty()) raise(Code::InvalidArgument, "zip: no input datasets");
  ElementSpec spec;
  for (const DatasetPtr& in : inputs) {
    xform::require_input(in, "zip");
    for (const ComponentSpec& c : in->spec().components) {
      if (spec.index_of(c.name) >= 0)
        raise(Code::InvalidArgument, "zip: component '{}' is in two inputs (rename one with select)", c.name);
      spec.components.push_back(c);
    }
  }
  return std::make_shared<ZipDataset>(std::move(inputs), std::move(spec));
}

DatasetPtr enumerate(DatasetPtr in, int64_t start) {
  xform::require_input(in, "enumerate");
  if (in->spec().index_of("index") >= 0)
    raise(Code::InvalidArgument, "enumerate: the input already has a component 'index' ({}); rename it with select",
          in->spec().text());
  ElementSpec spec;
  spec.components.push_back(ComponentSpec{"index", DType::Int64, {}});
  for (const ComponentSpec& c : in->spec().components) spec.components.push_back(c);
  return std::make_shared<EnumerateDataset>(std::move(in), std::move(spec), start);
}

DatasetPtr select(DatasetPtr in, std::vector<std::string> names, std::vector<std::string> new_names) {
  xform::require_input(in, "select");
  if (names.empty()) raise(Code::InvalidArgument, "select: no component names");
  if (!new_names.empty() && new_names.size() != names.size())
    raise(Code::InvalidArgument, "select: {} names but {} new names", names.size(), new_names.size());
  ElementSpec spec;
  std::vector<int> picks;
  std::string text;
  std::set<std::string> seen;
  for (size_t k = 0; k < names.size(); ++k) {
    const int i = in->spec().index_of(names[k]);
    if (i < 0) raise(Code::NotFound, "select: no component '{}' in {}", names[k], in->spec().text());
    if (!seen.insert(names[k]).second) raise(Code::InvalidArgument, "select: component '{}' selected twice", names[k]);
    picks.push_back(i);
    ComponentSpec c = in->spec().components[static_cast<size_t>(i)];
    text += (k ? ", '" : "'") + names[k] + "'";
    if (!new_names.empty() && new_names[k] != names[k]) {
      c.name = new_names[k];
      text += " as '" + new_names[k] + "'";
    }
    spec.components.push_back(std::move(c));
  }
  check_unique(spec, "select");
  return std::make_shared<SelectDataset>(std::move(in), std::move(spec), std::move(picks), std::move(text));
}

DatasetPtr parse_example(DatasetPtr in, std::string component, std::vector<io::FeatureSpec> specs) {
  xform::require_input(in, "parse_example");
  const ElementSpec& in_spec = in->spec();
  const int c = in_spec.index_of(component);
  if (c < 0) raise(Code::NotFound, "parse_example: no component '{}' in {}", component, in_spec.text());
  const ComponentSpec& cs = in_spec.components[static_cast<size_t>(c)];
  if (cs.dtype != DType::UInt8 || cs.dims.size() != 1)
    raise(Code::InvalidArgument, "parse_example: component '{}' is {}{}, expected a uint8 vector (one serialized record)",
          component, dtype_name(cs.dtype), xform::dims_text(cs.dims));
  if (specs.empty()) raise(Code::InvalidArgument, "parse_example: no feature specs");
  try {
    io::parse_examples(in->context().cpu(), nullptr, 0, specs);  // checks the specs
  } catch (const Error& e) {
    raise(e.code(), "parse_example: {}", e.what());
  }
  ElementSpec spec;
  for (size_t k = 0; k < in_spec.size(); ++k) {
    if (static_cast<int>(k) != c) {
      spec.components.push_back(in_spec.components[k]);
      continue;
    }
    for (const io::FeatureSpec& s : specs) {
      if (s.kind == io::SpecKind::FixedLen) {
        spec.components.push_back(ComponentSpec{s.key, s.dtype, s.shape.to_vector()});
      } else {
        spec.components.push_back(ComponentSpec{s.key + "/indices", DType::Int64, {-1, 1}});
        spec.components.push_back(ComponentSpec{s.key + "/values", s.dtype, {-1}});
      }
    }
  }
  check_unique(spec, "parse_example");
  return std::make_shared<ParseExampleDataset>(std::move(in), std::move(spec), c, std::move(specs));
}

}  // namespace cairn::data
