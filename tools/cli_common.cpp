// Model loading, error reporting and table formatting shared by the `collage` subcommands.
#include "cli_common.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "absl/strings/str_format.h"
#include "collage/onnx.h"
#include "core/str_cat.h"

namespace collage::cli {

void ModelArgs::declare(ArgParser& parser) {
  parser.positional("MODEL", "the model: ONNX, XGBoost JSON or LightGBM text", &model);
  parser.option("--format", "FORMAT",
                "model format: auto (detected from the content), onnx, xgboost or lightgbm",
                &format);
  parser.repeated("--input-shape", "NAME=DIMS",
                  "shape of graph input NAME, e.g. input=1x3x224x224 (NAME= for a scalar);\n"
                  "needed for inputs with symbolic dimensions; repeat for several inputs.\n"
                  "compile: a batch range, input=1..32x3x224x224, makes an artifact that\n"
                  "runs any batch from 1 to 32",
                  &input_shape_specs);
  parser.option("--zipmap", "MODE",
                "what an ai.onnx.ml ZipMap node (a sequence of maps) becomes: refuse (the\n"
                "default: an error naming the node) or probabilities (its input, the\n"
                "f32 [batch, classes] probability tensor, is the output)",
                &zipmap);
  parser.check([this]() -> std::optional<std::string> {
    if (zipmap != "refuse" && zipmap != "probabilities")
      return "--zipmap must be refuse or probabilities, not '" + zipmap + "'";
    auto parsed = parse_input_shapes(input_shape_specs, &ranges);
    if (!parsed.ok()) return std::string(parsed.status().message());
    shapes = *std::move(parsed);
    return std::nullopt;
  });
}

absl::Status refuse_ranges(const ModelArgs& args, std::string_view command) {
  if (args.ranges.empty()) return absl::OkStatus();
  const auto& [name, r] = *args.ranges.begin();
  return absl::InvalidArgumentError(
      str_cat("--input-shape ", name, ": a range of sizes (", r.min, "..", r.max, ") is for "
              "`collage compile -o`, which compiles the batch range into one artifact; `collage ",
              command, "` takes one size"));
}

absl::StatusOr<ModelImportOptions> ModelArgs::import_options() const {
  ModelImportOptions options;
  options.onnx.input_shapes = shapes;
  options.onnx.zipmap =
      zipmap == "probabilities" ? ZipMapMode::probabilities : ZipMapMode::refuse;
  auto parsed = parse_model_format(format);
  if (!parsed.ok()) return parsed.status();
  options.format = *parsed;
  return options;
}

absl::StatusOr<Graph> load_model(const Context& ctx, const ModelArgs& args) {
  if (absl::Status s = refuse_ranges(args, "this command"); !s.ok()) return s;
  auto options = args.import_options();
  if (!options.ok()) return options.status();
  return import_model_file(ctx, args.model, *options);
}

absl::Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) return absl::UnavailableError(str_cat(path, ": cannot write"));
  return absl::OkStatus();
}

int report_failure(std::string_view command, const absl::Status& status) {
  std::fprintf(stderr, "collage %s: error: %s\n", std::string(command).c_str(),
               std::string(status.message()).c_str());
  return kExitFailure;
}

std::string with_commas(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? str_cat(bytes, " B") : absl::StrFormat("%.1f %s", v, units[u]);
}

std::string TextTable::render(int indent) const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool right = c < right_.size() && right_[c];
      if (c) line += "  ";
      line += right ? pad + row[c] : (c + 1 == row.size() ? row[c] : row[c] + pad);
    }
    out += line + '\n';
  }
  return out;
}

}  // namespace collage::cli
