#include "runtime/keras/saving.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/checkpoint/checkpoint.h"
#include "runtime/core/error.h"
#include "runtime/eager/ops.h"
#include "runtime/graph/export.h"
#include "runtime/io/internal/file.h"

namespace cairn::keras {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kFormat = "cairn.model";
constexpr int kVersion = 1;

const char* kind_name(optim::Kind k) {
  switch (k) {
    case optim::Kind::SGD: return "SGD";
    case optim::Kind::Adam: return "Adam";
    case optim::Kind::AdamW: return "AdamW";
    case optim::Kind::RMSprop: return "RMSprop";
  }
  return "?";
}

// The optimizer's structure (its kind and the options that decide its slots); the hyperparameters'
// values come back from the checkpoint.
json optimizer_config(const optim::Optimizer& opt) {
  const optim::OptimizerOptions& o = opt.options();
  if (o.schedule)
    raise(Code::Unimplemented, "save_model: the optimizer has a learning-rate schedule, which cannot be saved yet");
  return {{"kind", kind_name(o.kind)}, {"learning_rate", o.learning_rate}, {"momentum", o.momentum},
          {"nesterov", o.nesterov},    {"beta_1", o.beta_1},               {"beta_2", o.beta_2},
          {"epsilon", o.epsilon},      {"weight_decay", o.weight_decay},   {"rho", o.rho},
          {"centered", o.centered}};
}

Ref<optim::Optimizer> optimizer_from_config(Context& ctx, const json& c, const std::string& file) {
  try {
    optim::OptimizerOptions o;
    const std::string kind = c.at("kind").get<std::string>();
    if (kind == "SGD") o.kind = optim::Kind::SGD;
    else if (kind == "Adam") o.kind = optim::Kind::Adam;
    else if (kind == "AdamW") o.kind = optim::Kind::AdamW;
    else if (kind == "RMSprop") o.kind = optim::Kind::RMSprop;
    else raise(Code::InvalidArgument, "load_model: {}: unknown optimizer kind \"{}\"", file, kind);
    o.learning_rate = c.at("learning_rate").get<double>();
    o.momentum = c.at("momentum").get<double>();
    o.nesterov = c.at("nesterov").get<bool>();
    o.beta_1 = c.at("beta_1").get<double>();
    o.beta_2 = c.at("beta_2").get<double>();
    o.epsilon = c.at("epsilon").get<double>();
    o.weight_decay = c.at("weight_decay").get<double>();
    o.rho = c.at("rho").get<double>();
    o.centered = c.at("centered").get<bool>();
    return optim::Optimizer::create(ctx, o);
  } catch (const json::exception& e) {
    raise(Code::InvalidArgument, "load_model: {}: bad optimizer config: {}", file, e.what());
  }
}

json compile_config(const CompileOptions& o) {
  return {{"optimizer", optimizer_config(*o.optimizer)},
          {"loss", o.loss},
          {"from_logits", o.from_logits},
          {"metrics", o.metrics},
          {"run_eagerly", o.run_eagerly}};
}

CompileOptions compile_from_config(Context& ctx, const json& c, const std::string& file) {
  CompileOptions o;
  try {
    o.optimizer = optimizer_from_config(ctx, c.at("optimizer"), file);
    o.loss = c.at("loss").get<std::string>();
    o.from_logits = c.at("from_logits").get<bool>();
    o.metrics = c.at("metrics").get<std::vector<std::string>>();
    o.run_eagerly = c.at("run_eagerly").get<bool>();
  } catch (const json::exception& e) {
    raise(Code::InvalidArgument, "load_model: {}: bad compile config: {}", file, e.what());
  }
  return o;
}

// Writes `text` to `path` and makes it durable.
void write_durable(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io::internal::raise_errno(errno, path, "open");
  try {
    io::internal::write_all(fd, text.data(), text.size(), path);
    if (::fsync(fd) != 0) io::internal::raise_errno(errno, path, "fsync");
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) io::internal::raise_errno(errno, path, "close");
}

// The model's forward pass at its built input shape, batch dimension -1, traced once and exported.
void export_serving(Model& model, const std::pair<Shape, DType>& input, const std::string& path) {
  Context& ctx = model.context();
  graph::FunctionOptions o;
  TensorSpec spec;
  spec.dtype = input.second;
  spec.shape.push_back(-1);  // any batch size
  for (int i = 1; i < input.first.rank(); ++i) spec.shape.push_back(input.first[i]);
  o.input_signature = {spec};
  o.has_input_signature = true;
  Model* m = &model;
  auto fn = make_ref<graph::Function>(
      ctx, "serving", [m](Context&, const std::vector<Tensor>& in) { return std::vector<Tensor>{(*m)(in[0], false)}; },
      o);
  std::vector<int64_t> one = input.first.to_vector();
  one[0] = 1;
  fn->call(std::vector<Tensor>{op::filled(ctx, ctx.cpu(), input.second, Shape::from(one.data(), one.size(), "save_model"), 0)});
  graph::export_function(*fn, path);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) raise(Code::NotFound, "load_model: cannot read {}", path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

void save_model(Model& model, const std::string& directory) {
  const char* fn = "save_model";
  if (directory.empty()) raise(Code::InvalidArgument, "{}: the directory is empty", fn);
  std::optional<std::pair<Shape, DType>> input = model.build_input();
  if (!input)
    raise(Code::FailedPrecondition, "{}: {} was never called, so its input shape is unknown: call, fit or predict it first",
          fn, model.describe());
  json doc{{"format", kFormat}, {"version", kVersion}, {"model", model.config()}};
  if (model.compiled()) doc["compile"] = compile_config(model.compile_options(fn));

  const fs::path target = fs::path(directory).lexically_normal();
  const fs::path staging = target.string() + ".saving-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(staging, ec);
  fs::create_directories(staging, ec);
  if (ec) raise(Code::Unavailable, "{}: cannot create {}: {}", fn, staging.string(), ec.message());
  try {
    write_durable((staging / kModelConfigFile).string(), doc.dump(2) + "\n");
    ckpt::Checkpoint c(model.context(), {{"model", Ref<Object>::share(&model)}});
    c.write((staging / kModelWeightsFile).string());
    export_serving(model, *input, (staging / kModelServingFile).string());
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  // Swap: the earlier save moves aside only once the new one is complete.
  const fs::path old = target.string() + ".old-" + std::to_string(::getpid());
  const bool had = fs::exists(target);
  if (had) fs::rename(target, old, ec);
  if (!ec) fs::rename(staging, target, ec);
  if (ec) raise(Code::Unavailable, "{}: cannot move the new save to {}: {}", fn, target.string(), ec.message());
  if (had) fs::remove_all(old, ec);
}

Ref<Model> load_model(Context& ctx, const std::string& directory) {
  const std::string file = (fs::path(directory) / kModelConfigFile).string();
  if (!fs::exists(file)) raise(Code::NotFound, "load_model: no saved model in {} (no {})", directory, kModelConfigFile);
  json doc;
  try {
    doc = json::parse(read_text(file));
  } catch (const json::exception& e) {
    raise(Code::InvalidArgument, "load_model: {} is not JSON: {}", file, e.what());
  }
  if (!doc.is_object() || doc.value("format", "") != kFormat || doc.value("version", 0) != kVersion)
    raise(Code::InvalidArgument, "load_model: {} is not a cairn.model file of version {}", file, kVersion);
  const json& config = doc["model"];
  if (!config.is_object() || config.value("class_name", "") != "Sequential")
    raise(Code::InvalidArgument, "load_model: {}: \"model\" must be a Sequential's config", file);
  const json c = config.value("config", json::object());
  Ref<Model> model = Model::create(ctx, c.value("name", ""));
  for (const json& layer : c.value("layers", json::array())) model->add(nn::layer_from_config(ctx, layer));
  if (doc.contains("compile")) model->compile(compile_from_config(ctx, doc["compile"], file));

  // Restore (the optimizer's values at once, the weights and slots when they appear), then build
  // the model at its saved input shape so the weights arrive now.
  ckpt::Checkpoint checkpoint(ctx, {{"model", model}});
  checkpoint.restore((fs::path(directory) / kModelWeightsFile).string())->expect_partial();
  if (config.contains("build_config")) {
    try {
      std::vector<int64_t> dims{1};
      const json& shape = config["build_config"].at("input_shape");
      for (size_t i = 1; i < shape.size(); ++i) dims.push_back(shape[i].get<int64_t>());
      const DType dtype = dtype_from_name(config["build_config"].at("dtype").get<std::string>().c_str());
      (*model)(op::filled(ctx, ctx.cpu(), dtype, Shape::from(dims.data(), dims.size(), "load_model"), 0), false);
    } catch (const json::exception& e) {
      raise(Code::InvalidArgument, "load_model: {}: bad build_config: {}", file, e.what());
    }
  }
  return model;
}

}  // namespace cairn::keras
