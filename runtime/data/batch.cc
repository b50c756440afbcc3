// batch, padded_batch and unbatch.
//
// batch/padded_batch over an indexable input are indexable: batch b is input elements
// [b * B, min(n, (b + 1) * B)) assembled, so the state stays one index. Over a stream, their
// iterator pulls B elements per next() and saves only its input's state (a batch is never half
// gathered between two calls). When an input element fails mid-batch, the error propagates and
// the elements gathered for that batch are dropped with it (as TensorFlow's batch does).
//
// unbatch is indexable when its input is and the batch dimension B is known in the spec (element
// i is row i % B of input element i / B; the last input element is kept in a one-slot cache so
// that consecutive rows do not recompute it); otherwise it is a stream that saves the current
// input element and the next row explicitly.
#include <algorithm>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "runtime/core/error.h"
#include "runtime/data/transforms.h"
#include "runtime/data/transforms_internal.h"

namespace cairn::data {
namespace {

using xform::dims_text;
using xform::UnaryDataset;

std::string shape_text(const Shape& s) { return s.str(); }

// Copies a row of shape `sdims` into a (larger or equal) row of shape `ddims`, both row-major,
// at the origin; `rank` dims, `elem` bytes per value.
void copy_block(const uint8_t* src, const int64_t* sdims, uint8_t* dst, const int64_t* ddims, int rank, size_t elem) {
  if (rank == 0) {
    std::memcpy(dst, src, elem);
    return;
  }
  size_t sinner = elem, dinner = elem;
  for (int d = 1; d < rank; ++d) {
    sinner *= static_cast<size_t>(sdims[d]);
    dinner *= static_cast<size_t>(ddims[d]);
  }
  if (sinner == dinner) {  // the inner dims agree: one copy for the whole block
    std::memcpy(dst, src, static_cast<size_t>(sdims[0]) * sinner);
    return;
  }
  for (int64_t i = 0; i < sdims[0]; ++i)
    copy_block(src + static_cast<size_t>(i) * sinner, sdims + 1, dst + static_cast<size_t>(i) * dinner, ddims + 1,
               rank - 1, elem);
}

// batch and padded_batch: B elements assembled into one, each component gaining a leading dim.
class BatchDataset final : public UnaryDataset {
 public:
  // target[c][d]: -1 pads dim d of component c to the batch's largest, n >= 0 to n (padded only).
  BatchDataset(DatasetPtr in, ElementSpec spec, int64_t batch_size, bool drop, bool padded,
               std::vector<std::vector<int64_t>> target, std::vector<Tensor> pads)
      : UnaryDataset(std::move(in), std::move(spec)),
        batch_size_(batch_size),
        drop_(drop),
        padded_(padded),
        target_(std::move(target)),
        pads_(std::move(pads)) {}

  const char* name() const { return padded_ ? "padded_batch" : "batch"; }

  std::string describe() const override {
    return fmt::format("{}.{}({}{})", in_->describe(), name(), batch_size_, drop_ ? ", drop_remainder=true" : "");
  }

  int64_t cardinality() const override {
    const int64_t n = in_->cardinality();
    if (n < 0) return n;
    return drop_ ? n / batch_size_ : n / batch_size_ + (n % batch_size_ != 0 ? 1 : 0);
  }

  bool random_access() const override { return input_indexable(); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const int64_t n = in_->cardinality();
    const int64_t begin = index * batch_size_;
    const int64_t end = n < 0 ? begin + batch_size_ : std::min(n, begin + batch_size_);
    std::vector<Element> rows(static_cast<size_t>(std::max<int64_t>(end - begin, 0)));
    for (size_t k = 0; k < rows.size(); ++k) in_->get(begin + static_cast<int64_t>(k), epoch, rows[k]);
    assemble(rows, begin, out);
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_; }

  // The batch of `rows` (input elements first, first + 1, ...) into `out`.
  void assemble(const std::vector<Element>& rows, int64_t first, Element& out) const {
    const ElementSpec& in_spec = in_->spec();
    out.assign(in_spec.size(), Tensor());
    std::vector<Tensor> host(rows.size());
    for (size_t c = 0; c < in_spec.size(); ++c) {
      const ComponentSpec& cs = in_spec.components[c];
      for (size_t k = 0; k < rows.size(); ++k) {
        const Element& e = rows[k];
        if (e.size() != in_spec.size() || !e[c].valid() || e[c].dtype() != cs.dtype ||
            e[c].rank() != static_cast<int>(cs.dims.size()))
          in_spec.check(e, name(), first + static_cast<int64_t>(k));  // names what is wrong
        host[k] = host_values(e[c], context().cpu(), name());
      }
      out[c] = padded_ ? pad_component(c, host, first) : stack_component(c, host, first);
    }
  }

 private:
  Tensor stack_component(size_t c, const std::vector<Tensor>& host, int64_t first) const {
    const ComponentSpec& cs = in_->spec().components[c];
    const Shape& row = host[0].shape();
    for (size_t k = 1; k < host.size(); ++k)
      if (host[k].shape() != row)
        raise(Code::InvalidArgument,
              "batch: component '{}' of element {} has shape {}, but element {} (the first of its batch) has shape "
              "{}; batch needs equal shapes (use padded_batch to pad them)",
              cs.name, first + static_cast<int64_t>(k), shape_text(host[k].shape()), first, shape_text(row));
    Shape shape;
    shape.push_back(static_cast<int64_t>(host.size()));
    for (int d = 0; d < row.rank(); ++d) shape.push_back(row.dim(d));
    Tensor t = Tensor::allocate(context().cpu(), cs.dtype, shape);
    auto* dst = static_cast<uint8_t*>(t.raw_mutable_data());
    const size_t row_bytes = static_cast<size_t>(row.num_elements()) * dtype_size(cs.dtype);
    for (size_t k = 0; k < host.size(); ++k)
      if (row_bytes) std::memcpy(dst + k * row_bytes, host[k].raw_data(), row_bytes);
    return t;
  }

  Tensor pad_component(size_t c, const std::vector<Tensor>& host, int64_t first) const {
    const ComponentSpec& cs = in_->spec().components[c];
    const std::vector<int64_t>& target = target_[c];
    const int rank = static_cast<int>(target.size());
    std::vector<int64_t> dims(target);
    for (int d = 0; d < rank; ++d)
      if (target[d] < 0) {
        dims[d] = 0;
        for (const Tensor& h : host) dims[d] = std::max(dims[d], h.shape().dim(d));
      }
    for (size_t k = 0; k < host.size(); ++k)
      for (int d = 0; d < rank; ++d)
        if (host[k].shape().dim(d) > dims[d])
          raise(Code::InvalidArgument,
                "padded_batch: component '{}' of element {} has shape {}, larger than its padded shape {}", cs.name,
                first + static_cast<int64_t>(k), shape_text(host[k].shape()), dims_text(target));
    Shape shape;
    shape.push_back(static_cast<int64_t>(host.size()));
    for (int64_t d : dims) shape.push_back(d);
    Tensor t = Tensor::allocate(context().cpu(), cs.dtype, shape);
    auto* dst = static_cast<uint8_t*>(t.raw_mutable_data());
    const size_t elem = dtype_size(cs.dtype);
    const size_t total = static_cast<size_t>(shape.num_elements());
    if (pads_[c].valid()) {
      for (size_t i = 0; i < total; ++i) std::memcpy(dst + i * elem, pads_[c].raw_data(), elem);
    } else if (total) {
      std::memset(dst, 0, total * elem);
    }
    size_t row_values = 1;
    for (int64_t d : dims) row_values *= static_cast<size_t>(d);
    for (size_t k = 0; k < host.size(); ++k)
      if (host[k].num_elements() > 0)
        copy_block(static_cast<const uint8_t*>(host[k].raw_data()), host[k].shape().dims(), dst + k * row_values * elem,
                   dims.data(), rank, elem);
    return t;
  }

  const int64_t batch_size_;
  const bool drop_;
  const bool padded_;
  const std::vector<std::vector<int64_t>> target_;
  const std::vector<Tensor> pads_;  // host scalars, or invalid for zeros
};

// batch over a stream: B input elements per next(); the state is the input's.
class BatchIterator final : public xform::InputIterator<BatchDataset> {
 public:
  using InputIterator::InputIterator;

  bool next(Element& out) override {
    std::vector<Element> rows;
    const int64_t first = input_.count();
    Element e;
    while (static_cast<int64_t>(rows.size()) < ds_->batch_size() && input_.next(e)) rows.push_back(std::move(e));
    if (rows.empty() || (ds_->drop_remainder() && static_cast<int64_t>(rows.size()) < ds_->batch_size()))
      return false;
    ds_->assemble(rows, first, out);
    return true;
  }
};

std::unique_ptr<Iterator> BatchDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<BatchIterator>(*this, epoch);
}

void check_batch_size(int64_t batch_size, const char* who) {
  if (batch_size < 1) raise(Code::InvalidArgument, "{}: batch_size is {}, expected >= 1", who, batch_size);
}

ComponentSpec batched(const ComponentSpec& c, int64_t lead, const std::vector<int64_t>& dims) {
  ComponentSpec out{c.name, c.dtype, {lead}};
  out.dims.insert(out.dims.end(), dims.begin(), dims.end());
  return out;
}

// ---- unbatch ----

class UnbatchDataset final : public UnaryDataset {
 public:
  // rows: the batch dimension when the spec knows it, else -1.
  UnbatchDataset(DatasetPtr in, ElementSpec spec, int64_t rows)
      : UnaryDataset(std::move(in), std::move(spec)), rows_(rows) {}

  std::string describe() const override { return in_->describe() + ".unbatch()"; }

  int64_t cardinality() const override {
    const int64_t n = in_->cardinality();
    if (rows_ == 0) return 0;
    if (n == kInfinite) return rows_ > 0 ? kInfinite : kUnknown;
    if (n == kUnknown || rows_ < 0) return kUnknown;
    return n * rows_;
  }

  bool random_access() const override { return rows_ >= 0 && input_indexable(); }

  void get(int64_t index, uint64_t epoch, Element& out) const override {
    const int64_t j = index / rows_;
    Element e;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_ && cached_epoch_ == epoch && cached_index_ == j) e = cached_element_;
    }
    if (e.empty()) {
      in_->get(j, epoch, e);
      e = checked(std::move(e), j);
      std::lock_guard<std::mutex> lock(mu_);
      cached_ = true;
      cached_epoch_ = epoch;
      cached_index_ = j;
      cached_element_ = e;
    }
    slice(e, index % rows_, out);
  }

  std::unique_ptr<Iterator> make_iterator(uint64_t epoch) const override;

  // `e` (input element `index`) on the host, after checking that its components have the same
  // number of rows (and rows_ when known).
  Element checked(Element e, int64_t index) const {
    const ElementSpec& s = in_->spec();
    if (e.size() != s.size()) s.check(e, "unbatch", index);
    for (size_t c = 0; c < e.size(); ++c) {
      if (!e[c].valid() || e[c].rank() < 1 || e[c].dtype() != s.components[c].dtype) s.check(e, "unbatch", index);
      e[c] = host_values(e[c], context().cpu(), "unbatch");
    }
    const int64_t rows = rows_ >= 0 ? rows_ : e[0].shape().dim(0);
    for (size_t c = 0; c < e.size(); ++c)
      if (e[c].shape().dim(0) != rows)
        raise(Code::InvalidArgument,
              "unbatch (element {}): component '{}' has shape {}, but the batch has {} rows (component '{}' has "
              "shape {})",
              index, s.components[c].name, shape_text(e[c].shape()), rows, s.components[0].name,
              shape_text(e[0].shape()));
    return e;
  }

  // Row `k` of host element `e`.
  void slice(const Element& e, int64_t k, Element& out) const {
    out.assign(e.size(), Tensor());
    for (size_t c = 0; c < e.size(); ++c) {
      const Shape& s = e[c].shape();
      Shape row;
      for (int d = 1; d < s.rank(); ++d) row.push_back(s.dim(d));
      Tensor t = Tensor::allocate(context().cpu(), e[c].dtype(), row);
      const size_t bytes = static_cast<size_t>(row.num_elements()) * dtype_size(e[c].dtype());
      if (bytes)
        std::memcpy(t.raw_mutable_data(), static_cast<const uint8_t*>(e[c].raw_data()) + static_cast<size_t>(k) * bytes,
                    bytes);
      out[c] = std::move(t);
    }
  }

 private:
  const int64_t rows_;
  mutable std::mutex mu_;
  mutable bool cached_ = false;
  mutable uint64_t cached_epoch_ = 0;
  mutable int64_t cached_index_ = -1;
  mutable Element cached_element_;
};

// unbatch over a stream: the state is the input's, the current input element and its next row.
class UnbatchIterator final : public xform::InputIterator<UnbatchDataset> {
 public:
  using InputIterator::InputIterator;

  bool next(Element& out) override {
    for (;;) {
      if (!current_.empty() && row_ < current_[0].shape().dim(0)) {
        ds_->slice(current_, row_++, out);
        return true;
      }
      current_.clear();
      Element e;
      if (!input_.next(e)) return false;
      current_ = ds_->checked(std::move(e), input_.count() - 1);
      row_ = 0;
    }
  }

  void save(StateWriter& w) override {
    InputIterator::save(w);
    w.put_element(current_);
    w.put_i64(row_);
  }

  void restore(StateReader& r) override {
    InputIterator::restore(r);
    current_ = r.get_element();
    row_ = r.get_i64();
    if (!current_.empty()) {
      if (current_.size() != ds_->input()->spec().size()) r.corrupt("an unbatch element with the wrong components");
      for (const Tensor& t : current_)
        if (t.rank() < 1 || t.shape().dim(0) != current_[0].shape().dim(0)) r.corrupt("a bad unbatch element");
      if (row_ < 0 || row_ > current_[0].shape().dim(0)) r.corrupt("an unbatch row outside its element");
    }
  }


 private:
  Element current_;  // host tensors; empty when none
  int64_t row_ = 0;
};

std::unique_ptr<Iterator> UnbatchDataset::make_iterator(uint64_t epoch) const {
  return xform::iterator_for<UnbatchIterator>(*this, epoch);
}

}  // namespace

DatasetPtr batch(DatasetPtr in, int64_t batch_size, bool drop_remainder) {
  xform::require_input(in, "batch");
  check_batch_size(batch_size, "batch");
  ElementSpec spec;
  for (const ComponentSpec& c : in->spec().components) {
    xform::element_bytes(c.dtype, "batch");
    spec.components.push_back(batched(c, drop_remainder ? batch_size : -1, c.dims));
  }
  return std::make_shared<BatchDataset>(std::move(in), std::move(spec), batch_size, drop_remainder, false,
                                        std::vector<std::vector<int64_t>>{}, std::vector<Tensor>{});
}

DatasetPtr padded_batch(DatasetPtr in, int64_t batch_size, bool drop_remainder,
                        std::vector<std::optional<std::vector<int64_t>>> padded_shapes, Element padding_values) {
  const char* who = "padded_batch";
  xform::require_input(in, who);
  check_batch_size(batch_size, who);
  const ElementSpec& in_spec = in->spec();
  const size_t n = in_spec.size();
  if (!padded_shapes.empty() && padded_shapes.size() != n)
    raise(Code::InvalidArgument, "{}: {} padded shapes for {} components ({})", who, padded_shapes.size(), n,
          in_spec.text());
  if (!padding_values.empty() && padding_values.size() != n)
    raise(Code::InvalidArgument, "{}: {} padding values for {} components ({})", who, padding_values.size(), n,
          in_spec.text());
  ElementSpec spec;
  std::vector<std::vector<int64_t>> target(n);
  std::vector<Tensor> pads(n);
  for (size_t c = 0; c < n; ++c) {
    const ComponentSpec& cs = in_spec.components[c];
    xform::element_bytes(cs.dtype, who);
    const std::string have = fmt::format("{}{}", dtype_name(cs.dtype), dims_text(cs.dims));
    target[c].assign(cs.dims.size(), -1);
    if (!padded_shapes.empty() && padded_shapes[c]) {
      const std::vector<int64_t>& p = *padded_shapes[c];
      if (p.size() != cs.dims.size())
        raise(Code::InvalidArgument, "{}: component '{}' is {}, but its padded shape {} has rank {}", who, cs.name,
              have, dims_text(p), p.size());
      for (size_t d = 0; d < p.size(); ++d) {
        if (p[d] < -1)
          raise(Code::InvalidArgument, "{}: padded shape {} of component '{}' has a dim below -1", who, dims_text(p),
                cs.name);
        if (p[d] >= 0 && cs.dims[d] > p[d])
          raise(Code::InvalidArgument, "{}: component '{}' is {}, larger than its padded shape {}", who, cs.name, have,
                dims_text(p));
      }
      target[c] = p;
    }
    if (!padding_values.empty() && padding_values[c].valid()) {
      const Tensor& v = padding_values[c];
      if (v.dtype() != cs.dtype || v.rank() != 0)
        raise(Code::InvalidArgument, "{}: the padding value of component '{}' ({}) is {}{}, expected a {} scalar", who,
              cs.name, have, dtype_name(v.dtype()), shape_text(v.shape()), dtype_name(cs.dtype));
      pads[c] = host_values(v, in->context().cpu(), who);
    }
    std::vector<int64_t> dims(cs.dims);
    for (size_t d = 0; d < dims.size(); ++d)
      if (target[c][d] >= 0) dims[d] = target[c][d];
    spec.components.push_back(batched(cs, drop_remainder ? batch_size : -1, dims));
  }
  return std::make_shared<BatchDataset>(std::move(in), std::move(spec), batch_size, drop_remainder, true,
                                        std::move(target), std::move(pads));
}

DatasetPtr unbatch(DatasetPtr in) {
  xform::require_input(in, "unbatch");
  const ElementSpec& in_spec = in->spec();
  if (in_spec.size() == 0) raise(Code::InvalidArgument, "unbatch: the input has no components");
  ElementSpec spec;
  int64_t rows = -1;
  const ComponentSpec* known = nullptr;
  for (const ComponentSpec& c : in_spec.components) {
    xform::element_bytes(c.dtype, "unbatch");
    if (c.dims.empty())
      raise(Code::InvalidArgument, "unbatch: component '{}' is a scalar ({}[]); every component needs a batch dimension",
            c.name, dtype_name(c.dtype));
    if (c.dims[0] >= 0) {
      if (known && c.dims[0] != rows)
        raise(Code::InvalidArgument, "unbatch: components '{}' ({}{}) and '{}' ({}{}) differ in their first dimension",
              known->name, dtype_name(known->dtype), dims_text(known->dims), c.name, dtype_name(c.dtype),
              dims_text(c.dims));
      known = &c;
      rows = c.dims[0];
    }
    spec.components.push_back(ComponentSpec{c.name, c.dtype, std::vector<int64_t>(c.dims.begin() + 1, c.dims.end())});
  }
  return std::make_shared<UnbatchDataset>(std::move(in), std::move(spec), rows);
}

}  // namespace cairn::data
