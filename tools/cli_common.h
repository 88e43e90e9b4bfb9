// Pieces shared by the `collage` subcommands: loading the model named on the command line, error
// reporting, and aligned text tables.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli_args.h"
#include "collage/graph.h"
#include "collage/trees.h"

namespace collage::cli {

// The MODEL argument and the --input-shape options that every model-taking command accepts.
// declare() registers them on a parser; after a successful parse `shapes` holds the parsed
// --input-shape values (a bad spec is a usage error). The parser refers to this object.
struct ModelArgs {
  std::string model;
  std::vector<std::string> input_shape_specs;
  std::map<std::string, Shape> shapes;  // a range's dimension holds its largest size
  std::map<std::string, ShapeRange> ranges;  // dimensions given as MIN..MAX (compile only)
  std::string format = "auto";  // auto|onnx|xgboost|lightgbm
  std::string zipmap = "refuse";  // refuse|probabilities (OnnxImportOptions::zipmap)
  void declare(ArgParser& parser);
  // --format, --input-shape and --zipmap as import options; InvalidArgument for an unknown
  // format or ZipMap mode.
  absl::StatusOr<ModelImportOptions> import_options() const;
};

// InvalidArgument when args.ranges is not empty: `command` takes one size per dimension.
absl::Status refuse_ranges(const ModelArgs& args, std::string_view command);

// Imports args.model with args.shapes (refusing ranges). Errors are the importer's.
absl::StatusOr<Graph> load_model(const Context& ctx, const ModelArgs& args);

// Writes `text` to `path`; Unavailable naming the path when it cannot.
absl::Status write_text_file(const std::string& path, const std::string& text);

// Prints "collage <command>: error: <message>" to stderr and returns kExitFailure.
int report_failure(std::string_view command, const absl::Status& status);

// 1234567 -> "1,234,567".
std::string with_commas(int64_t v);
// 46747648 -> "44.6 MiB".
std::string human_bytes(int64_t bytes);

// Rows of cells printed with each column padded to its widest cell; columns listed in
// `right_aligned` are aligned right (numbers), the others left.
class TextTable {
 public:
  explicit TextTable(std::vector<bool> right_aligned) : right_(std::move(right_aligned)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Every row indented by `indent` spaces, columns two spaces apart, one row per line.
  std::string render(int indent) const;

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace collage::cli
