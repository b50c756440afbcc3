// In-memory sources: from_tensors, from_tensor_slices, range.
#include "runtime/data/sources.h"

#include <cstring>
#include <set>

#include <fmt/format.h>

#include "runtime/core/error.h"

namespace cairn::data {

Tensor byte_vector(Context& ctx, std::string_view bytes) {
  Tensor t = Tensor::allocate(ctx.cpu(), DType::UInt8, Shape{static_cast<int64_t>(bytes.size())});
  if (!bytes.empty()) std::memcpy(t.raw_mutable_data(), bytes.data(), bytes.size());
  return t;
}

void check_component_names(const std::vector<std::string>& names, std::string_view fn) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) raise(Code::InvalidArgument, "{}: component name {} is empty", fn, i);
    if (!seen.insert(names[i]).second) raise(Code::InvalidArgument, "{}: component name '{}' is given twice", fn, names[i]);
  }
}

namespace {

// Checks names against values and that every value is a usable tensor.
void check_values(const std::vector<std::string>& names, const Element& values, std::string_view fn) {
  if (values.empty()) raise(Code::InvalidArgument, "{}: no tensors", fn);
  if (names.size() != values.size())
    raise(Code::InvalidArgument, "{}: {} names for {} tensors", fn, names.size(), values.size());
  check_component_names(names, fn);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].valid()) raise(Code::InvalidArgument, "{}: tensor '{}' is empty", fn, names[i]);
    if (values[i].dtype() == DType::String)
      raise(Code::InvalidArgument, "{}: tensor '{}' is a string tensor; byte strings are uint8 vectors", fn, names[i]);
  }
}

std::string shapes_text(const std::vector<std::string>& names, const Element& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += names[i] + ": " + dtype_name(values[i].dtype()) + values[i].shape().str();
  }
  return out;
}

class FromTensors final : public Dataset {
 public:
  FromTensors(Context& ctx, ElementSpec spec, Element values, std::string text)
      : Dataset(ctx, std::move(spec)), values_(std::move(values)), text_(std::move(text)) {}
  std::string describe() const override { return "from_tensors(" + text_ + ")"; }
  int64_t cardinality() const override { return 1; }
  bool random_access() const override { return true; }
  void get(int64_t, uint64_t, Element& out) const override { out = values_; }

 private:
  const Element values_;
  const std::string text_;
};

class FromTensorSlices final : public Dataset {
 public:
  FromTensorSlices(Context& ctx, ElementSpec spec, Element values, int64_t rows, std::string text)
      : Dataset(ctx, std::move(spec)), values_(std::move(values)), rows_(rows), text_(std::move(text)) {}
  std::string describe() const override { return "from_tensor_slices(" + text_ + ")"; }
  int64_t cardinality() const override { return rows_; }
  bool random_access() const override { return true; }
  void get(int64_t index, uint64_t, Element& out) const override {
    out.resize(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) {
      const Tensor& v = values_[i];
      std::vector<int64_t> dims = v.shape().to_vector();
      dims.erase(dims.begin());
      Shape row_shape = Shape::from(dims.data(), dims.size(), "from_tensor_slices");
      Tensor t = Tensor::allocate(context().cpu(), v.dtype(), row_shape);
      const size_t n = t.nbytes();
      if (n) std::memcpy(t.raw_mutable_data(), static_cast<const char*>(v.raw_data()) + n * index, n);
      out[i] = std::move(t);
    }
  }

 private:
  const Element values_;  // on the CPU
  const int64_t rows_;
  const std::string text_;
};

class Range final : public Dataset {
 public:
  Range(Context& ctx, int64_t start, int64_t stop, int64_t step)
      : Dataset(ctx, ElementSpec{{{"value", DType::Int64, {}}}}), start_(start), stop_(stop), step_(step) {
    // ceil((stop - start) / step) in 128 bits, clamped at 0.
    const __int128 span = static_cast<__int128>(stop) - start;
    __int128 n = 0;
    if (step > 0 && span > 0) n = (span + step - 1) / step;
    if (step < 0 && span < 0) n = (-span + (-static_cast<__int128>(step)) - 1) / (-static_cast<__int128>(step));
    count_ = static_cast<int64_t>(n);
  }
  std::string describe() const override { return fmt::format("range({}, {}, {})", start_, stop_, step_); }
  int64_t cardinality() const override { return count_; }
  bool random_access() const override { return true; }
  void get(int64_t index, uint64_t, Element& out) const override {
    Tensor t = Tensor::allocate(context().cpu(), DType::Int64, Shape{});
    *t.mutable_data<int64_t>() = static_cast<int64_t>(start_ + static_cast<__int128>(index) * step_);
    out.assign(1, std::move(t));
  }

 private:
  const int64_t start_, stop_, step_;
  int64_t count_ = 0;
};

}  // namespace

DatasetPtr from_tensors(Context& ctx, std::vector<std::string> names, Element values) {
  check_values(names, values, "from_tensors");
  ElementSpec spec;
  for (size_t i = 0; i < values.size(); ++i) spec.components.push_back({names[i], values[i].dtype(), values[i].shape().to_vector()});
  std::string text = shapes_text(names, values);
  return std::make_shared<FromTensors>(ctx, std::move(spec), std::move(values), std::move(text));
}

DatasetPtr from_tensor_slices(Context& ctx, std::vector<std::string> names, Element values) {
  const char* fn = "from_tensor_slices";
  check_values(names, values, fn);
  ElementSpec spec;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i].rank() < 1)
      raise(Code::InvalidArgument, "{}: tensor '{}' is a scalar ({}); slicing needs rank >= 1", fn, names[i],
            values[i].debug_string());
    if (values[i].shape().dim(0) != values[0].shape().dim(0))
      raise(Code::InvalidArgument, "{}: tensors '{}' {} and '{}' {} differ in their first dimension", fn, names[0],
            values[0].shape().str(), names[i], values[i].shape().str());
    std::vector<int64_t> dims = values[i].shape().to_vector();
    dims.erase(dims.begin());
    spec.components.push_back({names[i], values[i].dtype(), std::move(dims)});
  }
  std::string text = shapes_text(names, values);
  const int64_t rows = values[0].shape().dim(0);
  for (Tensor& v : values) v = host_values(v, ctx.cpu(), fn);
  return std::make_shared<FromTensorSlices>(ctx, std::move(spec), std::move(values), rows, std::move(text));
}

DatasetPtr range(Context& ctx, int64_t start, int64_t stop, int64_t step) {
  if (step == 0) raise(Code::InvalidArgument, "range: step is 0");
  return std::make_shared<Range>(ctx, start, stop, step);
}

}  // namespace cairn::data
