// Helpers shared by the tree-ensemble files: error messages that name the model, tree and node,
// reading a model file, and strict number parsing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/trees.h"

namespace collage {

// "lightgbm model 'model.txt'" (the source and name that are set).
std::string model_label(const TreeEnsemble& m);
// InvalidArgument "<model>: tree T <message>" and "<model>: tree T node N <message>".
absl::Status tree_error(const TreeEnsemble& m, size_t tree, std::string_view message);
absl::Status node_error(const TreeEnsemble& m, size_t tree, int64_t node, std::string_view message);

// The whole file as text. NotFound / InvalidArgument naming the path.
absl::StatusOr<std::string> read_model_text(const std::filesystem::path& path);

// t rounded to the nearest float32 (ties to even, overflow to +-inf), without the undefined
// behaviour of casting an out-of-range double.
float nearest_float(double t);

// The whole of `s` as a number (leading/trailing blanks allowed, "inf"/"nan" accepted as strtod
// does); nullopt for anything else.
std::optional<double> parse_double(std::string_view s);
std::optional<int64_t> parse_int(std::string_view s);

}  // namespace collage
