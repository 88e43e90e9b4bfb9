// The measured tree strategy of `collage compile`: candidates placed and costed with the
// placement's measurer and cost database, the report's summary and JSON.
#include "tree_strategy_cli.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "collage/passes.h"
#include "core/str_cat.h"
#include "placement_cli.h"

namespace collage::cli {

absl::StatusOr<TreeStrategyMode> parse_tree_strategy_mode(std::string_view name) {
  if (name == "measured") return TreeStrategyMode{};
  auto fixed = parse_tree_strategy(name);
  if (!fixed.ok())
    return absl::InvalidArgumentError(
        str_cat("--tree-strategy '", name, "': expected measured, auto, fused, ptt, tt or gemm"));
  return TreeStrategyMode{false, *fixed};
}

TreeStrategyMeasurer placement_tree_measurer(const Context& ctx, const BackendRegistry& backends,
                                             PlacementOptions placement, bool passes,
                                             TreeStrategyReport* report) {
  placement.strategy = "op-level";
  placement.compare_baselines = false;
  return [&ctx, &backends, placement = std::move(placement), passes, report](
             const TreeStrategyCandidate&, const Graph& g) -> absl::StatusOr<double> {
    absl::StatusOr<Graph> optimized = passes ? run_passes(ctx, g) : absl::StatusOr<Graph>(g);
    if (!optimized.ok()) return optimized.status();
    auto r = optimize_detailed(ctx, backends, *optimized, placement);
    if (!r.ok()) return r.status();
    if (report) {
      report->measured += r->measured;
      report->cached += r->cached;
    }
    if (r->placement.estimated_ms >= 0) return r->placement.estimated_ms;
    // The op-level search was cut and the greedy placement stood in: its kernels' costs.
    double sum = 0;
    for (const PlacedGroup& group : r->placement.groups) {
      if (group.cost_ms < 0)
        return absl::UnavailableError(str_cat("group on ", group.backend, " has no cost"));
      sum += group.cost_ms;
    }
    return sum;
  };
}

absl::StatusOr<CompileModel> load_compile_model(const Context& ctx, const ModelArgs& args,
                                                const TreeCompileOptions& options) {
  auto format = parse_model_format(args.format);
  if (!format.ok()) return format.status();
  auto model = import_tree_model_file(args.model, *format);
  if (!model.ok()) return model.status();
  if (!model->has_value()) {
    auto g = load_model(ctx, args);
    if (!g.ok()) return g.status();
    return CompileModel{*std::move(g), std::nullopt};
  }
  const TreeEnsemble& m = **model;
  auto batch = tree_model_batch(m, args.shapes);
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
    BackendRegistry backends;
    if (absl::Status s = register_backends(backends, options.plugins); !s.ok()) return s;
    TreeStrategyMeasurer measure = options.measure;
    if (!measure)
      measure = placement_tree_measurer(ctx, backends, options.placement, options.passes, &report);
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
  auto g = build_tree_graph(ctx, m, strategy, *batch);
  if (!g.ok()) return g.status();
  return CompileModel{*std::move(g), std::move(report)};
}

std::string tree_strategy_summary(const TreeStrategyReport& r) {
  std::string out = str_cat("tree strategy at batch ", r.batch, " (", r.mode, "): ", r.chosen);
  if (r.mode == "measured" && r.note.empty())
    out += absl::StrFormat(", the fastest placed candidate (%d kernels measured, %d costs reused)",
                           r.measured, r.cached);
  out += "\n";
  for (const TreeStrategyTiming& t : r.timings) {
    const std::string label = tree_strategy_label(t.candidate);
    if (t.status.ok())
      out += absl::StrFormat("  %-12s %12.4f ms%s\n", label, t.ms,
                             label == r.chosen ? "  chosen" : "");
    else
      out += absl::StrFormat("  %-12s skipped: %s\n", label, t.status.message());
  }
  if (!r.note.empty()) out += str_cat("  ", r.note, "\n");
  return out;
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

}  // namespace collage::cli
