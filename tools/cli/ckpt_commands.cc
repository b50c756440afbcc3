#include "tools/cli/ckpt_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "runtime/core/object_kind.h"
#include "runtime/checkpoint/reader.h"
#include "runtime/checkpoint/tf_object_graph.h"
#include "runtime/core/convert.h"
#include "runtime/checkpoint/weights_file.h"

namespace cairn::cli {

using ckpt::WeightsEntry;
using ckpt::WeightsFile;
using ckpt::WeightsFormat;
using ckpt::WeightsValue;

namespace {

constexpr int64_t kSummarizeAbove = 1000;  // NumPy's default threshold
constexpr int64_t kEdgeItems = 3;

std::string kind_name(uint32_t kind) {
  const char* name = object_kind_name(static_cast<ObjectKind>(kind));
  return std::string(name) == "unknown" ? fmt::format("kind {}", kind) : name;
}

template <class T>
std::string element_string(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, complex64>) {
    return fmt::format("{}{:+}j", v.real(), v.imag());
  } else if constexpr (is_half<T>::value) {
    return fmt::format("{}", static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return fmt::format("{}", static_cast<int>(v));
  } else {
    return fmt::format("{}", v);
  }
}

// Prints like NumPy: nested brackets, right-aligned elements, and with more than
// kSummarizeAbove elements only the first and last kEdgeItems along each axis.
template <class T>
void print_values(const Tensor& t, std::ostream& out) {
  const T* p = t.data<T>();
  const Shape& s = t.shape();
  if (s.rank() == 0) {
    out << element_string(p[0]) << "\n";
    return;
  }
  const bool summarize = t.num_elements() > kSummarizeAbove;
  std::vector<int64_t> strides(static_cast<size_t>(s.rank()), 1);
  for (int d = s.rank() - 2; d >= 0; --d) strides[d] = strides[d + 1] * s.dim(d + 1);

  size_t width = 0;
  std::string text;
  std::function<void(int, int64_t, bool)> emit = [&](int axis, int64_t base, bool measure) {
    const int64_t n = s.dim(axis);
    const bool cut = summarize && n > 2 * kEdgeItems;
    const bool last_axis = axis + 1 == s.rank();
    const std::string sep = last_axis ? ", "
                                      : "," + std::string(static_cast<size_t>(s.rank() - axis - 1), '\n') +
                                            std::string(static_cast<size_t>(axis + 1), ' ');
    if (!measure) text += '[';
    for (int64_t i = 0; i < n; ++i) {
      if (cut && i == kEdgeItems) {
        if (!measure) text += "..." + sep;
        i = n - kEdgeItems;
      }
      if (last_axis) {
        std::string e = element_string(p[base + i]);
        if (measure) width = std::max(width, e.size());
        else text += std::string(width - e.size(), ' ') + e;
      } else {
        emit(axis + 1, base + i * strides[axis], measure);
      }
      if (!measure && i + 1 < n) text += sep;
    }
    if (!measure) text += ']';
  };
  emit(0, 0, true);
  emit(0, 0, false);
  out << text << "\n";
}

std::string escape_bytes(const std::string& s, size_t limit) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c >= 0x20 && c < 0x7f) out += static_cast<char>(c);
    else out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > limit) out += "...";
  return out;
}

void print_graph(const ckpt::ObjectGraph& g, std::ostream& out) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ckpt::Node& n = g.nodes[i];
    out << fmt::format("node {} ({}){}\n", i, kind_name(n.kind), i == 0 ? " root" : "");
    for (const auto& c : n.children) out << fmt::format("  child {} -> node {}\n", c.name, c.node_id);
    for (const auto& a : n.attributes) out << fmt::format("  attribute {} = {}\n", a.name, a.key);
    for (const auto& s : n.slots)
      out << fmt::format("  slot {}: optimizer node {}, variable node {} -> node {}\n", s.slot_name, s.optimizer_node,
                         s.variable_node, s.slot_node);
  }
}

// Element-wise comparison of two tensors of the same dtype and shape.
struct ValueDiff {
  int64_t count = 0;
  double max_abs = 0;
};

ValueDiff compare_values(const Tensor& a, const Tensor& b) {
  ValueDiff d;
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    for (int64_t i = 0; i < a.num_elements(); ++i) {
      double diff;
      if constexpr (std::is_same_v<T, complex64>) {
        std::complex<double> u(x[i].real(), x[i].imag()), v(y[i].real(), y[i].imag());
        bool both_nan = std::isnan(std::abs(u)) && std::isnan(std::abs(v));
        diff = both_nan ? 0.0 : std::abs(u - v);
      } else {
        double u = convert<double>(x[i]), v = convert<double>(y[i]);
        if (std::isnan(u) && std::isnan(v)) diff = 0.0;
        else if (u == v) diff = 0.0;  // equal infinities too
        else diff = std::fabs(u - v);
      }
      if (diff != 0.0 || std::isnan(diff)) {
        ++d.count;
        if (std::isnan(diff) || diff > d.max_abs) d.max_abs = std::isnan(diff) ? INFINITY : diff;
      }
    }
  });
  return d;
}

}  // namespace

namespace {

// A string value as text: the Cairn object graph decoded, anything else escaped (at most 1 KiB).
void print_strings(const WeightsFile& f, const WeightsEntry& e, const std::string& path, std::ostream& out) {
  const std::vector<std::string> values = f.load_strings(e);
  if (e.key == ckpt::kObjectGraphKey && values.size() == 1 && f.format() != WeightsFormat::Safetensors) {
    const std::string what = path + ": " + e.key;
    print_graph(f.format() == WeightsFormat::Cairn ? ckpt::parse_object_graph(values[0], what)
                                                   : tfckpt::parse_trackable_object_graph(values[0], what).graph,
                out);
    return;
  }
  if (e.shape.rank() == 0 && values.size() == 1) {
    out << '"' << escape_bytes(values[0], 1024) << "\"\n";
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == static_cast<size_t>(kEdgeItems) && values.size() > static_cast<size_t>(2 * kEdgeItems)) {
      out << "...\n";
      i = values.size() - static_cast<size_t>(kEdgeItems);
    }
    out << fmt::format("[{}] \"{}\"\n", i, escape_bytes(values[i], 1024));
  }
}

}  // namespace

int ckpt_ls(const std::string& path, std::ostream& out) {
  auto f = WeightsFile::open(path);
  size_t wkey = 0, wtype = 0, wshape = 0, wsize = 0;
  for (const WeightsEntry& e : f->entries()) {
    wkey = std::max(wkey, e.key.size());
    wtype = std::max(wtype, e.type_text.size());
    wshape = std::max(wshape, e.shape.str().size());
    wsize = std::max(wsize, std::to_string(e.stored_bytes).size());
  }
  for (const WeightsEntry& e : f->entries())
    out << fmt::format("{:<{}}  {:<{}}  {:<{}}  {:>{}}  {}\n", e.key, wkey, e.type_text, wtype, e.shape.str(), wshape,
                       e.stored_bytes, wsize, e.storage);
  return 0;
}

int ckpt_show(const std::string& path, const std::string& key, std::ostream& out) {
  auto f = WeightsFile::open(path);
  const WeightsEntry& e = f->entry(key);
  out << fmt::format("{}: {}{} ({} bytes, stored {} as {})\n", e.key, e.type_text, e.shape.str(), e.raw_bytes,
                     e.stored_bytes, e.storage);
  if (e.dtype == DType::String) {
    print_strings(*f, e, path, out);
    return 0;
  }
  Tensor t = f->load(e);
  visit_dtype(t.dtype(), [&](auto tag) { print_values<typename decltype(tag)::type>(t, out); });
  return 0;
}

int ckpt_verify(const std::string& path, std::ostream& out, std::ostream& err) {
  std::unique_ptr<WeightsFile> f;
  try {
    f = WeightsFile::open(path);
  } catch (const Error& e) {
    if (e.code() != Code::DataLoss) throw;
    err << "DAMAGED " << e.message() << "\n";
    return 1;
  }
  size_t damaged = 0, unchecked = 0;
  for (const WeightsEntry& e : f->entries()) {
    try {
      if (!f->verify(e)) ++unchecked;
    } catch (const Error& ex) {
      if (ex.code() != Code::DataLoss) throw;
      err << "DAMAGED " << e.key << ": " << ex.message() << "\n";
      ++damaged;
    }
  }
  const size_t n = f->entries().size();
  if (damaged) {
    out << fmt::format("{}: {} of {} entries damaged\n", path, damaged, n);
    return 1;
  }
  if (unchecked == 0) {
    out << fmt::format("{}: all {} entries verified ({})\n", path, n, ckpt::format_name(f->format()));
  } else {
    // safetensors keeps no checksums of its own: the structure was checked at open, and only the
    // tensors written with Cairn's opt-in checksums can be checked for damaged bytes.
    out << fmt::format("{}: structure verified; {} of {} entries have checksums and match, {} have none ({})\n", path,
                       n - unchecked, n, unchecked, ckpt::format_name(f->format()));
  }
  return 0;
}

int ckpt_diff(const std::string& path_a, const std::string& path_b, std::ostream& out) {
  auto a = WeightsFile::open(path_a);
  auto b = WeightsFile::open(path_b);
  const auto& ea = a->entries();
  const auto& eb = b->entries();
  int differences = 0;
  size_t i = 0, j = 0;
  while (i < ea.size() || j < eb.size()) {
    if (j == eb.size() || (i < ea.size() && ea[i].key < eb[j].key)) {
      out << "only in A: " << ea[i++].key << "\n";
      ++differences;
      continue;
    }
    if (i == ea.size() || eb[j].key < ea[i].key) {
      out << "only in B: " << eb[j++].key << "\n";
      ++differences;
      continue;
    }
    const WeightsEntry& x = ea[i++];
    const WeightsEntry& y = eb[j++];
    if (x.dtype != y.dtype || x.shape != y.shape || x.dtype == DType::Invalid) {
      out << fmt::format("dtype/shape differ: {}: {}{} vs {}{}\n", x.key, x.type_text, x.shape.str(), y.type_text,
                         y.shape.str());
      ++differences;
      continue;
    }
    if (x.dtype == DType::String) {
      if (a->load_strings(x) != b->load_strings(y)) {
        out << "values differ: " << x.key << " (string bytes)\n";
        ++differences;
      }
      continue;
    }
    Tensor u = a->load(x), v = b->load(y);
    if (u.nbytes() == 0 || std::memcmp(u.raw_data(), v.raw_data(), u.nbytes()) == 0) continue;
    ValueDiff d = compare_values(u, v);
    if (d.count > 0) {
      out << fmt::format("values differ: {}: {} of {} elements, max abs diff {}\n", x.key, d.count, u.num_elements(),
                         d.max_abs);
      ++differences;
    }
  }
  if (differences == 0) out << "no differences\n";
  return differences ? 1 : 0;
}

int ckpt_convert(const std::string& from, const std::string& to, const std::string& format, std::ostream& out,
                 std::ostream& err) {
  auto f = WeightsFile::open(from);
  const WeightsFormat target = ckpt::parse_format(format);
  std::vector<WeightsValue> values;
  for (const WeightsEntry& e : f->entries()) {
    WeightsValue v;
    v.key = e.key;
    if (e.dtype == DType::String) {
      v.is_string = true;
      v.string_shape = e.shape;
      v.strings = f->load_strings(e);
    } else {
      v.tensor = f->load(e);  // a dtype Cairn lacks raises here, naming the key
    }
    values.push_back(std::move(v));
  }
  const std::vector<std::string> skipped = ckpt::write_weights(target, to, values);
  for (const std::string& key : skipped) err << "skipped " << key << " (" << ckpt::format_name(target) << " cannot hold it)\n";
  out << fmt::format("{}: {} of {} entries written as {} ({} -> {})\n", to, values.size() - skipped.size(),
                     values.size(), ckpt::format_name(target), ckpt::format_name(f->format()), ckpt::format_name(target));
  return 0;
}

}  // namespace cairn::cli
