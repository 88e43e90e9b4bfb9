// The measured tree strategy of a compile: candidates placed and costed with the placement's
// measurer and cost database, the chosen graph, and the report's JSON.
#include "placement/tree_strategy.h"

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

absl::StatusOr<CompileModel> import_compile_model(const Context& ctx,
                                                  const BackendRegistry& backends,
                                                  const std::filesystem::path& path,
                                                  const ModelImportOptions& import,
                                                  const TreeCompileOptions& options) {
  auto model = import_tree_model_file(path, import.format);
  if (!model.ok()) return model.status();
  if (!model->has_value()) {
    auto g = import_model_file(ctx, path, import);
    if (!g.ok()) return g.status();
    return CompileModel{*std::move(g), std::nullopt};
  }
  const TreeEnsemble& m = **model;
  auto batch = tree_model_batch(m, import.onnx.input_shapes);
  if (!batch.ok()) return batch.status();
  TreeStrategyReport report;
  report.batch = *batch;
  TreeStrategy strategy = options.mode.fixed;
  if (!options.mode.measured) {
    report.mode = tree_strategy_name(options.mode.fixed);
    if (strategy == TreeStrategy::automatic) strategy = pick_tree_strategy(m);
    report.chosen = tree_strategy_name(strategy);
  } else {
    report.mode = "measured";
    TreeStrategyMeasurer measure = options.measure;
    if (!measure)
      measure = placement_tree_measurer(ctx, backends, options.placement, options.passes,
                                        options.artifact, &report);
    if (options.progress)
      measure = [&options, inner = std::move(measure)](const TreeStrategyCandidate& c,
                                                       const Graph& g) {
        options.progress(tree_strategy_label(c));
        return inner(c, g);
      };
    TreeStrategyChoiceOptions choice_options;
    choice_options.max_value_bytes = options.max_value_bytes;
    auto choice = choose_tree_strategy(ctx, m, *batch, default_tree_strategy_candidates(), measure,
                                       choice_options);
    if (choice.ok()) {
      strategy = choice->best.strategy;
      report.chosen = tree_strategy_label(choice->best);
      report.timings = std::move(choice->timings);
    } else if (choice.status().code() == absl::StatusCode::kInvalidArgument) {
      return choice.status();
    } else {
      strategy = pick_tree_strategy(m);
      report.chosen = tree_strategy_name(strategy);
      report.note = str_cat("nothing could be measured, the fixed rule chose ",
                            tree_strategy_name(strategy), ": ", choice.status().message());
    }
  }
  auto g = build_tree_graph(ctx, m, strategy, *batch, import.trees);
  if (!g.ok()) return g.status();
  return CompileModel{*std::move(g), std::move(report)};
}

std::string tree_strategy_json(const TreeStrategyReport& r) {
  nlohmann::ordered_json j;
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
  return j.dump();
}

}  // namespace collage
