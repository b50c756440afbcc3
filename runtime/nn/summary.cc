// Keras' model.summary() as a fixed-width table.
#include <fmt/format.h>

#include "runtime/nn/layer.h"

namespace cairn::nn {
namespace {

// Column widths (Keras' 65-character line: 29 + 26 + 10).
constexpr size_t kNameWidth = 29, kShapeWidth = 26, kLineWidth = 65;

// "(None, 64)": the recorded output shape with the batch dimension unknown; "?" before the first call.
std::string shape_text(const Layer& layer) {
  std::optional<Shape> s = layer.output_shape();
  if (!s) return "?";
  if (s->rank() == 0) return "()";
  std::string out = "(None";
  for (int i = 1; i < s->rank(); ++i) out += fmt::format(", {}", (*s)[i]);
  return out + ")";
}

SummaryRow row_of(const Layer& layer) {
  return SummaryRow{layer.name(), layer.type_name(), shape_text(layer), layer.count_params()};
}

// 4810 -> "4,810"
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

// One table line: each cell starts at its column, or one space after the previous cell when that
// one overflows its column (later columns line up again once there is room).
std::string line(const std::string& name, const std::string& shape, const std::string& params) {
  std::string out = name;
  for (const auto& [text, column] : {std::pair<const std::string&, size_t>{shape, kNameWidth},
                                     std::pair<const std::string&, size_t>{params, kNameWidth + kShapeWidth}}) {
    out += out.size() < column ? std::string(column - out.size(), ' ') : " ";
    out += text;
  }
  return out;
}

}  // namespace

std::string Summary::table() const {
  const std::string thin(kLineWidth, '_'), thick(kLineWidth, '=');
  std::string out = fmt::format("Model: \"{}\"\n{}\n", name, thin);
  out += line(" Layer (type)", "Output Shape", "Param #") + "\n";
  out += thick + "\n";
  for (const SummaryRow& r : rows) {
    out += line(fmt::format(" {} ({})", r.name, r.type), r.output_shape, std::to_string(r.params)) + "\n";
  }
  out += thick + "\n";
  out += fmt::format("Total params: {}\nTrainable params: {}\nNon-trainable params: {}\n{}\n", with_commas(total),
                     with_commas(trainable), with_commas(non_trainable), thin);
  return out;
}

Summary summarize(const Layer& layer) {
  Summary s;
  s.name = layer.name();
  if (const auto* seq = dynamic_cast<const Sequential*>(&layer)) {
    for (const Ref<Layer>& l : seq->layers()) s.rows.push_back(row_of(*l));
  } else {
    s.rows.push_back(row_of(layer));
  }
  for (const Ref<Variable>& v : layer.weights()) {
    const int64_t n = v->shape().num_elements();
    s.total += n;
    (v->trainable() ? s.trainable : s.non_trainable) += n;
  }
  return s;
}

}  // namespace cairn::nn
