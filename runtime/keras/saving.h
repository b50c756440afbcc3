// Saving a whole model (keras model.save / keras.models.load_model): the architecture, the weights
// and the optimizer in one directory, plus the model's forward pass as an exported function.
//
// <directory>/model.json      {"format": "cairn.model", "version": 1, "model": Layer::config() of
//                              the model, "compile": the compile configuration (when compiled)}
// <directory>/weights.ckpt    a checkpoint of {"model": model}: weights, optimizer, slots
// <directory>/serving.cairnfn the forward pass (training=false) traced at the built input shape
//                              with the batch dimension -1 (graph/export.h): cairn_function_load
//                              runs it without the code that built the model
//
// A save writes a new directory beside `directory` and swaps it in with renames, so a failed save
// leaves an earlier one whole. A loaded model predicts, evaluates and continues training (compiled
// as it was, the optimizer's step and slots restored).
#pragma once

#include <string>

#include "runtime/keras/model.h"

namespace cairn::keras {

constexpr const char* kModelConfigFile = "model.json";
constexpr const char* kModelWeightsFile = "weights.ckpt";
constexpr const char* kModelServingFile = "serving.cairnfn";

// FailedPrecondition for a model never called (its input shape is unknown: call it or fit it
// first); Unimplemented for an optimizer with a learning-rate schedule; I/O errors naming the path.
void save_model(Model& model, const std::string& directory);

// NotFound for a directory without model.json; InvalidArgument naming the file and the field for a
// config it cannot read; the checkpoint's errors for damaged weights.
Ref<Model> load_model(Context& ctx, const std::string& directory);

}  // namespace cairn::keras
