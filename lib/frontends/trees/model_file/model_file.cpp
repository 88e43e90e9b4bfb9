// import_model_file: tells ONNX, XGBoost JSON and LightGBM text models apart by their content and
// imports each with its importer.
#include <fstream>
#include <system_error>

#include "collage/trees.h"
#include "core/str_cat.h"

namespace collage {

std::string_view model_format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::automatic:
      return "auto";
    case ModelFormat::onnx:
      return "onnx";
    case ModelFormat::xgboost:
      return "xgboost";
    case ModelFormat::lightgbm:
      return "lightgbm";
  }
  return "?";
}

absl::StatusOr<ModelFormat> parse_model_format(std::string_view name) {
  for (ModelFormat f :
       {ModelFormat::automatic, ModelFormat::onnx, ModelFormat::xgboost, ModelFormat::lightgbm})
    if (name == model_format_name(f)) return f;
  return absl::InvalidArgumentError(
      str_cat("unknown model format '", name, "' (expected auto, onnx, xgboost or lightgbm)"));
}

absl::StatusOr<ModelFormat> detect_model_format(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return absl::NotFoundError(str_cat("model file '", path.string(), "' does not exist"));
  if (std::filesystem::is_directory(path, ec))
    return absl::InvalidArgumentError(
        str_cat("model file '", path.string(), "': it is a directory"));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(str_cat("cannot open model file '", path.string(), "'"));
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.starts_with("tree\nversion=") || head.starts_with("tree\r\nversion="))
    return ModelFormat::lightgbm;
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && head[first] == '{') {
    if (head.find("\"learner\"") != std::string::npos) return ModelFormat::xgboost;
    return absl::InvalidArgumentError(
        str_cat("model file '", path.string(),
                "' starts like JSON but has no \"learner\" "
                "object near its start; XGBoost models must be saved as JSON "
                "(save_model(\"m.json\"))"));
  }
  return ModelFormat::onnx;
}

absl::StatusOr<int64_t> tree_model_batch(const TreeEnsemble& model,
                                         const std::map<std::string, Shape>& input_shapes) {
  int64_t batch = 1;
  for (const auto& [name, shape] : input_shapes) {
    if (name != "input")
      return absl::InvalidArgumentError(str_cat("tree model '", model.name,
                                                "' has one input, 'input'; a shape was given for '",
                                                name, "'"));
    if (shape.size() != 2 || shape[0] < 1 || shape[1] != model.num_features)
      return absl::InvalidArgumentError(str_cat("tree model '", model.name, "': input shape ",
                                                shape_to_string(shape), " given, expected batchx",
                                                model.num_features));
    batch = shape[0];
  }
  return batch;
}

absl::StatusOr<std::optional<TreeEnsemble>> import_tree_model_file(
    const std::filesystem::path& path, ModelFormat format) {
  if (format == ModelFormat::automatic) {
    auto detected = detect_model_format(path);
    if (!detected.ok()) return detected.status();
    format = *detected;
  }
  absl::StatusOr<TreeEnsemble> model;
  switch (format) {
    case ModelFormat::xgboost:
      model = import_xgboost_json(path);
      break;
    case ModelFormat::lightgbm:
      model = import_lightgbm_text(path);
      break;
    case ModelFormat::onnx:
    case ModelFormat::automatic:
      return std::nullopt;
  }
  if (!model.ok()) return model.status();
  return std::optional<TreeEnsemble>(*std::move(model));
}

absl::StatusOr<Graph> import_model_file(const Context& ctx, const std::filesystem::path& path,
                                        const ModelImportOptions& options) {
  auto model = import_tree_model_file(path, options.format);
  if (!model.ok()) return model.status();
  if (!model->has_value()) {
    OnnxImportOptions onnx = options.onnx;
    if (!onnx.tree_strategy && options.trees.strategy != TreeStrategy::automatic)
      onnx.tree_strategy = [strategy = options.trees.strategy](std::string_view,
                                                               const TreeEnsemble&, int64_t) {
        return absl::StatusOr<TreeStrategy>(strategy);
      };
    return import_onnx_file(ctx, path, onnx);
  }
  auto batch = tree_model_batch(**model, options.onnx.input_shapes);
  if (!batch.ok()) return batch.status();
  return build_tree_graph(ctx, **model, options.trees.strategy, *batch, options.trees);
}

}  // namespace collage
