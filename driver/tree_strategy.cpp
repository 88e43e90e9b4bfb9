// The measured tree strategy of a compile (the driver): candidates placed and costed with the placement's
// measurer and cost database, the chosen graph, and the report's JSON.
#include "driver/tree_strategy.h"

#include <nlohmann/json.hpp>

#include "collage/executor.h"
#include "collage/passes.h"
#include "core/str_cat.h"

namespace collage {

absl::StatusOr<TreeStrategyMode> parse_tree_strategy_mode(std::string_view name) {
  if (name == "measured") return TreeStrategyMode{};
  auto fixed = parse_tree_strategy(name);
  if (!fixed.ok())
    return absl::InvalidArgumentError(
        str_cat("tree strategy '", name, "': expected measured, auto, fused, ptt, tt or gemm"));
  return TreeStrategyMode{false, *fixed};
}

TreeStrategyMeasurer placement_tree_measurer(const Context& ctx, const BackendRegistry& backends,
                                             PlacementOptions placement, bool passes, bool artifact,
                                             TreeStrategyReport* report) {
  placement.strategy = "op-level";
  placement.compare_baselines = false;
  return [&ctx, &backends, placement = std::move(placement), passes, artifact, report](
             const TreeStrategyCandidate&, const Graph& g) -> absl::StatusOr<double> {
    absl::StatusOr<Graph> optimized = passes ? run_passes(ctx, g) : absl::StatusOr<Graph>(g);
    if (!optimized.ok()) return optimized.status();
    auto r = optimize_detailed(ctx, backends, *optimized, placement);
    if (!r.ok()) return r.status();
    if (report) {
      report->measured += r->measured;
      report->cached += r->cached;
    }
    const std::vector<PlacedGroup>& groups = r->placement.groups;
    for (size_t i = 0; artifact && i < groups.size(); ++i)
      if (groups[i].backend == kReferenceBackend)
        return absl::FailedPreconditionError(
            str_cat("group ", i,
                    " is placed on the reference backend, which has no runtime "
                    "module for an artifact"));
    if (r->placement.estimated_ms >= 0) return r->placement.estimated_ms;
    // The op-level search was cut and the greedy placement stood in: its kernels' costs.
    double sum = 0;
    for (const PlacedGroup& group : groups) {
      if (group.cost_ms < 0)
        return absl::UnavailableError(str_cat("group on ", group.backend, " has no cost"));
      sum += group.cost_ms;
    }
    return sum;
  };
}

namespace {

// The strategy of `m` at `batch` as options.mode asks, and `report` filled with how it was chosen.
absl::StatusOr<TreeStrategy> choose_compile_strategy(const Context& ctx,
                                                     const BackendRegistry& backends,
                                                     const TreeEnsemble& m, int64_t batch,
                                                     const TreeCompileOptions& options,
                                                     TreeStrategyReport& report) {
  report.batch = batch;
  if (!options.mode.measured) {
    report.mode = tree_strategy_name(options.mode.fixed);
    TreeStrategy strategy = options.mode.fixed;
    if (strategy == TreeStrategy::automatic) strategy = pick_tree_strategy(m);
    report.chosen = tree_strategy_name(strategy);
    return strategy;
  }
  report.mode = "measured";
  TreeStrategyMeasurer measure = options.measure;
  if (!measure)
    measure = placement_tree_measurer(ctx, backends, options.placement, options.passes,
                                      options.artifact, &report);
  if (options.progress)
    measure = [&options, &report, inner = std::move(measure)](const TreeStrategyCandidate& c,
                                                              const Graph& g) {
      const std::string label = tree_strategy_label(c);
      options.progress(report.node.empty() ? label : str_cat(report.node, ": ", label));
      return inner(c, g);
    };
  TreeStrategyChoiceOptions choice_options;
  choice_options.max_value_bytes = options.max_value_bytes;
  auto choice = choose_tree_strategy(ctx, m, batch, default_tree_strategy_candidates(), measure,
                                     choice_options);
  if (choice.ok()) {
    report.chosen = tree_strategy_label(choice->best);
    report.timings = std::move(choice->timings);
    return choice->best.strategy;
  }
  if (choice.status().code() == absl::StatusCode::kInvalidArgument) return choice.status();
  const TreeStrategy strategy = pick_tree_strategy(m);
  report.chosen = tree_strategy_name(strategy);
  report.note = str_cat("nothing could be measured, the fixed rule chose ",
                        tree_strategy_name(strategy), ": ", choice.status().message());
  return strategy;
}

}  // namespace

TreeStrategyChooser compile_tree_strategy_chooser(const Context& ctx,
                                                  const BackendRegistry& backends,
                                                  const TreeCompileOptions& options,
                                                  std::vector<TreeStrategyReport>& reports) {
  return [&ctx, &backends, &options, &reports](std::string_view node, const TreeEnsemble& m,
                                               int64_t batch) {
    TreeStrategyReport& report = reports.emplace_back();
    report.node = node;
    return choose_compile_strategy(ctx, backends, m, batch, options, report);
  };
}

absl::StatusOr<CompileModel> import_compile_model(const Context& ctx,
                                                  const BackendRegistry& backends,
                                                  const std::filesystem::path& path,
                                                  const ModelImportOptions& import,
                                                  const TreeCompileOptions& options) {
  auto model = import_tree_model_file(path, import.format);
  if (!model.ok()) return model.status();
  std::vector<TreeStrategyReport> reports;
  if (!model->has_value()) {
    // An ONNX file: each tree-ensemble node is asked for as the importer reaches it.
    ModelImportOptions onnx = import;
    onnx.onnx.tree_strategy = compile_tree_strategy_chooser(ctx, backends, options, reports);
    auto g = import_model_file(ctx, path, onnx);
    if (!g.ok()) return g.status();
    return CompileModel{*std::move(g), std::move(reports)};
  }
  const TreeEnsemble& m = **model;
  auto batch = tree_model_batch(m, import.onnx.input_shapes);
  if (!batch.ok()) return batch.status();
  auto strategy =
      choose_compile_strategy(ctx, backends, m, *batch, options, reports.emplace_back());
  if (!strategy.ok()) return strategy.status();
  auto g = build_tree_graph(ctx, m, *strategy, *batch, import.trees);
  if (!g.ok()) return g.status();
  return CompileModel{*std::move(g), std::move(reports)};
}

std::string tree_strategy_json(const std::vector<TreeStrategyReport>& reports) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const TreeStrategyReport& r : reports) {
    nlohmann::ordered_json j;
    j["node"] = r.node;
    j["mode"] = r.mode;
    j["batch"] = r.batch;
    j["chosen"] = r.chosen;
    j["kernels_measured"] = r.measured;
    j["costs_reused"] = r.cached;
    j["note"] = r.note;
    nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
    for (const TreeStrategyTiming& t : r.timings)
      candidates.push_back({{"strategy", tree_strategy_label(t.candidate)},
                            {"ms", t.status.ok() ? t.ms : -1.0},
                            {"skipped", std::string(t.status.message())}});
    j["candidates"] = std::move(candidates);
    all.push_back(std::move(j));
  }
  return all.dump();
}

}  // namespace collage
