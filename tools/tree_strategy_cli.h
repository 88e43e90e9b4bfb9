// The tree strategy in `collage compile`: --tree-strategy and --input-shape turned into the
// library's measured choice (driver/tree_strategy.h), and its printed summary.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli_common.h"
#include "driver/tree_strategy.h"

namespace collage::cli {

// Imports args.model with args.shapes and args.format as import_compile_model does, the tree
// candidates placed on the built-in backends and the `plugins` (--plugin libraries).
absl::StatusOr<CompileModel> load_compile_model(const Context& ctx, const ModelArgs& args,
                                                const TreeCompileOptions& options,
                                                const std::vector<std::string>& plugins);

// "tree strategy [of node 'NAME'] at batch N (measured): ..." with one line per candidate, for the
// summary.
std::string tree_strategy_summary(const TreeStrategyReport& r);

}  // namespace collage::cli
