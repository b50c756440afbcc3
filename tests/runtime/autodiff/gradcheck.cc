#include "tests/runtime/autodiff/gradcheck.h"

#include <fmt/format.h>

#include <cmath>
#include <random>

#include "runtime/autodiff/tape.h"
#include "runtime/eager/ops.h"
#include "tests/util/test_util.h"

namespace cairn::test {

namespace {
// Case makers run on first use, not at static initialisation: they build tensors.
std::vector<std::function<std::vector<GradCase>()>>& makers() {
  static std::vector<std::function<std::vector<GradCase>()>> m;
  return m;
}
}  // namespace

std::vector<GradCase>& grad_cases() {
  static std::vector<GradCase> cases = [] {
    std::vector<GradCase> all;
    for (auto& make : makers())
      for (GradCase& c : make()) all.push_back(std::move(c));
    return all;
  }();
  return cases;
}

GradCaseRegistration::GradCaseRegistration(std::function<std::vector<GradCase>()> make) {
  makers().push_back(std::move(make));
}

namespace {
std::mt19937_64& rng() {
  static std::mt19937_64 r(1234);
  return r;
}

// L = sum_k sum(w_k * y_k) over the floating outputs.
Tensor weighted_loss(Context& ctx, const std::vector<Tensor>& outputs, const std::vector<Tensor>& weights) {
  std::vector<Tensor> terms;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!weights[k].valid()) continue;
    terms.push_back(op::all_sum(ctx, op::mul(ctx, outputs[k], weights[k])));
  }
  return op::add_n(ctx, terms);
}

double scalar_value(const Tensor& t) { return as_doubles(t)[0]; }
}  // namespace

Tensor uniform(const Shape& shape, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.num_elements()));
  for (double& x : v) x = d(rng());
  return make<double>(v, shape);
}

Tensor f64(const std::vector<double>& values, const Shape& shape) { return make<double>(values, shape); }

NamedAttr CaseAttr::named() const {
  NamedAttr a{name, {}};
  a.value.kind = kind;
  a.value.i = i;
  a.value.f = f;
  a.value.dtype = dtype;
  a.value.s = s;
  a.value.ints = ints.data();
  a.value.n_ints = ints.size();
  a.value.floats = floats.data();
  a.value.n_floats = floats.size();
  return a;
}

CaseAttr a_int(std::string name, int64_t v) { CaseAttr a{std::move(name)}; a.kind = AttrKind::Int; a.i = v; return a; }
CaseAttr a_bool(std::string name, bool v) { CaseAttr a{std::move(name)}; a.kind = AttrKind::Bool; a.i = v; return a; }
CaseAttr a_float(std::string name, double v) { CaseAttr a{std::move(name)}; a.kind = AttrKind::Float; a.f = v; return a; }
CaseAttr a_dtype(std::string name, DType v) { CaseAttr a{std::move(name)}; a.kind = AttrKind::DType; a.dtype = v; return a; }
CaseAttr a_str(std::string name, std::string v) {
  CaseAttr a{std::move(name)};
  a.kind = AttrKind::String;
  a.s = std::move(v);
  return a;
}
CaseAttr a_ints(std::string name, std::vector<int64_t> v) {
  CaseAttr a{std::move(name)};
  a.kind = AttrKind::Ints;
  a.ints = std::move(v);
  return a;
}

OpFn op_fn(std::string name, std::vector<CaseAttr> attrs) {
  return [name, attrs](Context& ctx, const std::vector<Tensor>& in) {
    std::vector<NamedAttr> named;
    for (const CaseAttr& a : attrs) named.push_back(a.named());
    return run_op(ctx, name, in, named);
  };
}

GradReport check_gradient(Context& ctx, const GradCase& c) {
  std::vector<int> wrt = c.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.inputs[i].dtype() == DType::Float64) wrt.push_back(static_cast<int>(i));

  std::vector<Tensor> base = c.fn(ctx, c.inputs);
  std::vector<Tensor> weights(base.size());
  for (size_t k = 0; k < base.size(); ++k)
    if (base[k].dtype() == DType::Float64) weights[k] = uniform(base[k].shape(), 0.5, 1.5);

  // Analytic.
  std::vector<Tensor> analytic;
  {
    GradientTape tape(ctx);
    std::vector<Tensor> sources;
    for (int i : wrt) {
      tape.watch(c.inputs[static_cast<size_t>(i)]);
      sources.push_back(c.inputs[static_cast<size_t>(i)]);
    }
    Tensor loss = weighted_loss(ctx, c.fn(ctx, c.inputs), weights);
    analytic = tape.gradient(loss, sources, nullptr, Unconnected::Zero);
  }

  // Numeric, one element at a time.
  GradReport report;
  for (size_t s = 0; s < wrt.size(); ++s) {
    const Tensor& x = c.inputs[static_cast<size_t>(wrt[s])];
    std::vector<double> xv = as_doubles(x);
    std::vector<double> got = as_doubles(analytic[s]);
    for (size_t e = 0; e < xv.size(); ++e) {
      auto loss_at = [&](double delta) {
        std::vector<double> moved = xv;
        moved[e] += delta;
        std::vector<Tensor> in = c.inputs;
        in[static_cast<size_t>(wrt[s])] = make<double>(moved, x.shape());
        return scalar_value(weighted_loss(ctx, c.fn(ctx, in), weights));
      };
      double numeric = (loss_at(c.step) - loss_at(-c.step)) / (2 * c.step);
      double err = std::fabs(got[e] - numeric) / std::max(1.0, std::fabs(numeric));
      if (!(err <= report.max_error)) {  // also catches NaN
        report.max_error = std::isnan(err) ? INFINITY : err;
        report.worst = fmt::format("input {} element {}: tape {} vs finite difference {}", wrt[s], e, got[e], numeric);
      }
    }
  }
  return report;
}

}  // namespace cairn::test
