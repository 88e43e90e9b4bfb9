// The strategy of a tree model in `collage compile`: every strategy the model can use is placed
// and costed by the placement's own measurer (and cost database) at the batch compiled for, and
// the cheapest is compiled; the fixed depth rule only when nothing could be measured.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "cli_common.h"
#include "collage/placement.h"
#include "collage/trees.h"

namespace collage::cli {

// --tree-strategy: "measured" (the default), "auto" (the fixed rule of pick_tree_strategy) or
// one strategy ("fused", "ptt", "tt", "gemm").
struct TreeStrategyMode {
  bool measured = true;
  TreeStrategy fixed = TreeStrategy::automatic;  // when not measured
};
absl::StatusOr<TreeStrategyMode> parse_tree_strategy_mode(std::string_view name);

// How a tree model's strategy was chosen, for the printed summary and the --report JSON.
struct TreeStrategyReport {
  std::string mode;  // "measured", "auto", or the strategy given
  int64_t batch = 0;
  std::string chosen;                       // the compiled strategy's label ("fused:auto", "ptt")
  std::vector<TreeStrategyTiming> timings;  // measured mode: one per candidate
  size_t measured = 0;                      // kernels timed while costing the candidates
  size_t cached = 0;  // costs the cost database (or an identical group) answered
  std::string note;   // why the fixed rule was used in measured mode
};

struct TreeCompileOptions {
  TreeStrategyMode mode;
  // The placement the model will be compiled with: its backends, fallback, cost database,
  // threads and device. The candidates are placed with its "op-level" search.
  PlacementOptions placement;
  std::vector<std::string> plugins;  // --plugin libraries taking part
  bool passes = true;                // run_passes on each candidate, as compile does
  // Candidates holding a larger tensor at the batch are skipped unmeasured: GEMM on 500 trees of
  // depth 8 builds a 1.02 GB tensor at batch 1,000, runs for seconds, took minutes to cost and
  // is never the fastest.
  int64_t max_value_bytes = int64_t{256} << 20;
  // Replaces the placement measurer (tests inject timings); empty: placement_tree_measurer.
  TreeStrategyMeasurer measure;
  // Told the label of each candidate before it is placed and costed (may be empty).
  std::function<void(const std::string& label)> progress;
};

// A model to compile and, for an XGBoost or LightGBM file, how its strategy was chosen.
struct CompileModel {
  Graph graph;
  std::optional<TreeStrategyReport> trees;
};

// Imports args.model. A tree model in measured mode is built with the strategy of
// choose_tree_strategy over default_tree_strategy_candidates() at the batch of its input shape
// (tree_model_batch). ONNX models (tree-ensemble nodes included) import as load_model does.
// Errors are the importer's; a failed measurement falls back to the fixed rule with a note.
absl::StatusOr<CompileModel> load_compile_model(const Context& ctx, const ModelArgs& args,
                                                const TreeCompileOptions& options);

// A TreeStrategyMeasurer that costs a candidate's graph as compile would place it: run_passes
// (when `passes`), then optimize_detailed with `placement` in "op-level" mode, and returns the
// placement's summed group and boundary costs in milliseconds. `backends` is borrowed; `report`
// (may be null) accumulates the kernels measured and the costs reused.
TreeStrategyMeasurer placement_tree_measurer(const Context& ctx, const BackendRegistry& backends,
                                             PlacementOptions placement, bool passes,
                                             TreeStrategyReport* report);

// "tree strategy at batch N (measured): ..." with one line per candidate, for the summary.
std::string tree_strategy_summary(const TreeStrategyReport& r);
// The report's "tree_strategy" object: mode, batch, chosen, kernels_measured, costs_reused, note,
// "candidates" ([{"strategy", "ms" (-1: skipped), "skipped" (the reason, "" when measured)}]).
std::string tree_strategy_json(const TreeStrategyReport& r);

}  // namespace collage::cli
