// The measured strategy of a tree model compiled by the driver (an XGBoost or LightGBM file, or
// each ai.onnx.ml tree-ensemble node of an ONNX file): every strategy the trees can use is placed
// and costed by the placement's own measurer (and cost database) at the batch compiled for, and
// the cheapest is built; the fixed depth rule only when nothing could be measured. The mode and
// the report are public (collage/compiler.h); this is how the driver gets them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/compiler.h"
#include "collage/placement.h"
#include "collage/trees.h"

namespace collage {

struct TreeCompileOptions {
  TreeStrategyMode mode;
  // The placement the model will be compiled with: its backends, fallback, cost database,
  // threads and device. The candidates are placed with its "op-level" search.
  PlacementOptions placement;
  bool passes = true;  // run_passes on each candidate, as compile does
  // The model will be written as an artifact: a candidate placed with a group on the reference
  // backend, which has no runtime module, is skipped with that reason.
  bool artifact = false;
  // Candidates holding a larger tensor at the batch are skipped unmeasured: GEMM on 500 trees of
  // depth 8 builds a 1.02 GB tensor at batch 1,000, runs for seconds, took minutes to cost and
  // is never the fastest.
  int64_t max_value_bytes = int64_t{256} << 20;
  // Replaces the placement measurer (tests inject timings); empty: placement_tree_measurer.
  TreeStrategyMeasurer measure;
  // Told the label of each candidate before it is placed and costed (may be empty).
  std::function<void(const std::string& label)> progress;
};

// A model to compile and how the strategy of its trees was chosen: one report for an XGBoost or
// LightGBM file, one per tree-ensemble node (in graph order) for an ONNX file, none otherwise.
struct CompileModel {
  Graph graph;
  std::vector<TreeStrategyReport> trees;
};

// Imports the model at `path` as import_model_file does with `import` (its format, and the shape
// of "input" that sets a tree model's batch, see tree_model_batch), except that the strategy of a
// tree model, and of each tree-ensemble node of an ONNX model (at the batch of the node's input),
// follows options.mode: in measured mode, the choose_tree_strategy fastest of
// default_tree_strategy_candidates() at the batch, each candidate placed on `backends` (borrowed
// for the call). Errors are the importer's; a failed measurement falls back to the fixed rule
// with a note.
absl::StatusOr<CompileModel> import_compile_model(const Context& ctx,
                                                  const BackendRegistry& backends,
                                                  const std::filesystem::path& path,
                                                  const ModelImportOptions& import,
                                                  const TreeCompileOptions& options);

// The chooser import_compile_model gives the ONNX importer (for collage_compile_memory, which
// imports a buffer): each tree-ensemble node's strategy is chosen per options.mode at the node's
// batch and its report appended to `reports`. Everything is borrowed for the chooser's life.
TreeStrategyChooser compile_tree_strategy_chooser(const Context& ctx,
                                                  const BackendRegistry& backends,
                                                  const TreeCompileOptions& options,
                                                  std::vector<TreeStrategyReport>& reports);

// A TreeStrategyMeasurer that costs a candidate's graph as compile would place it: run_passes
// (when `passes`), then optimize_detailed with `placement` in "op-level" mode, and returns the
// placement's summed group and boundary costs in milliseconds; FailedPrecondition when
// `artifact` and a group is placed on the reference backend. `ctx` and `backends` are borrowed;
// `report` (may be null) accumulates the kernels measured and the costs reused.
TreeStrategyMeasurer placement_tree_measurer(const Context& ctx, const BackendRegistry& backends,
                                             PlacementOptions placement, bool passes, bool artifact,
                                             TreeStrategyReport* report);

// The reports' "tree_strategies" JSON array, an object per report: node, mode, batch, chosen,
// kernels_measured, costs_reused, note, "candidates" ([{"strategy", "ms" (-1: skipped), "skipped"
// (the reason, "" when measured)}]).
std::string tree_strategy_json(const std::vector<TreeStrategyReport>& reports);

}  // namespace collage
