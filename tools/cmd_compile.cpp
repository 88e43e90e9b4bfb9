// `collage compile`: places a model on the backends (Collage), prints the placement with its
// costs and the speedup over each single-backend placement, writes the report and, with -o, the
// artifact that `collage run` and the runtime library load.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "artifact/artifact.h"
#include "cli_common.h"
#include "compile_batch.h"
#include "collage/passes.h"
#include "core/str_cat.h"
#include "placement/timing.h"
#include "placement_cli.h"
#include "tree_strategy_cli.h"

namespace collage::cli {
namespace {

struct CompileArgs {
  ModelArgs model;
  PlacementArgs placement;
  std::string report;
  std::string output;
  bool no_passes = false;
  bool no_compare = false;
  std::string executor = "auto";
  std::string tree_strategy = "measured";
  std::string batch_sizes;
};

std::string group_nodes(const Graph& g, const PlacedGroup& group) {
  std::string s;
  std::vector<NodeId> nodes = group.nodes.to_vector();
  for (size_t i = 0; i < nodes.size() && i < 3; ++i)
    s += str_cat(i ? ", " : "", g.node(nodes[i]).name, " (", g.node(nodes[i]).op_name(), ")");
  if (nodes.size() > 3) s += str_cat(" +", nodes.size() - 3);
  return s;
}

std::string placement_table(const Graph& g, const Placement& p) {
  TextTable t({true, false, false, true});
  t.add({"group", "nodes", "backend", "cost ms"});
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const PlacedGroup& group = p.groups[i];
    t.add({std::to_string(i), group_nodes(g, group), group.backend,
           group.cost_ms >= 0 ? absl::StrFormat("%.4f", group.cost_ms) : "-"});
  }
  return t.render(2);
}

std::string comparison_table(const std::vector<MeasuredPlacement>& compared) {
  if (compared.empty()) return "";
  const double chosen = compared[0].ms;
  TextTable t({false, true, true, false});
  t.add({"placement", "ms", "speedup", ""});
  for (const MeasuredPlacement& m : compared) {
    const bool ok = m.ms >= 0;
    t.add({m.strategy, ok ? absl::StrFormat("%.3f", m.ms) : "-",
           ok && chosen > 0 && &m != &compared[0] ? absl::StrFormat("%.2fx", m.ms / chosen) : "",
           m.note});
  }
  return "end to end, median, measured alternately in this run (speedup of the chosen "
         "placement):\n" +
         t.render(2);
}

// The artifact's figures, two lines.
std::string artifact_summary(const std::string& path, const ArtifactSummary& s) {
  std::string modules;
  for (const std::string& m : s.modules) modules += str_cat(modules.empty() ? "" : ", ", m);
  return absl::StrFormat(
      "wrote %s: %s (constants %s, native code %s), %d kernels on %s\n"
      "  arena %s per run (%s without buffer reuse)\n",
      path, human_bytes(static_cast<int64_t>(s.file_bytes)),
      human_bytes(static_cast<int64_t>(s.constant_bytes)),
      human_bytes(static_cast<int64_t>(s.native_code_bytes)), s.kernels,
      modules.empty() ? "no module" : modules, human_bytes(static_cast<int64_t>(s.arena_bytes)),
      human_bytes(static_cast<int64_t>(s.unshared_bytes))) +
         (s.has_schedule
              ? absl::StrFormat("  wave schedule: %u waves on %u workers; measured waves %.2f ms, "
                                "sequential %.2f ms: runs with the %s executor by default\n",
                                s.num_waves, s.workers, s.waves_ms, s.sequential_ms, s.executor)
              : std::string());
}

// write_artifact_for, after checking that every group has a runtime module to go to: the
// reference fallback has none, so a group only it can run is named with the way out.
// `selected` is --backends (empty: every registered backend).
absl::StatusOr<ArtifactSummary> write_artifact(const Context& ctx, const PlacedModel& placed,
                                               const Graph& g, const std::string& path,
                                               const std::vector<std::string>& selected,
                                               const PlacementOptions& placement) {
  const Placement& p = placed.result.placement;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    if (p.groups[i].backend != kReferenceBackend) continue;
    std::vector<std::string> names = selected;
    if (names.empty())
      for (const Backend* b : placed.backends->all()) names.push_back(b->name());
    std::string others;
    for (const std::string& name : names)
      if (name != kReferenceBackend) others += str_cat(others.empty() ? "" : ", ", name);
    return absl::InvalidArgumentError(str_cat(
        path, ": group ", i, " (", group_nodes(g, p.groups[i]),
        ") is placed on the reference backend, which has no runtime module: an artifact needs "
        "every group on a backend with one (taking part: ", others,
        "). The generated-code backend (native), which runs any operator, takes the reference's "
        "place in artifacts where it is built in; without it, run the placement in process "
        "(collage run MODEL --placement ...)"));
  }
  ArtifactOptions options;
  options.waves.executor = wave_choice(placement.executor);
  options.build.target = placement.target;
  options.build.code_cache = placement.code_cache;
  options.build.channel_block = placement.channel_block;
  return write_artifact_for(ctx, *placed.backends, g, p, path, options);
}

absl::Status write_report(const std::string& path, const Graph& g, const CompileArgs& args,
                          const OptimizeResult& r, const std::vector<TreeStrategyReport>& trees) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(r.placement.to_json(g));
  j["model"] = args.model.model;
  j["passes"] = !args.no_passes;
  j["candidates"] = r.candidates;
  j["measured"] = r.measured;
  j["cached"] = r.cached;
  j["evaluations"] = r.evaluations;
  nlohmann::ordered_json compared = nlohmann::ordered_json::array();
  for (const MeasuredPlacement& m : r.compared)
    compared.push_back({{"strategy", m.strategy}, {"ms", m.ms}, {"note", m.note}});
  j["compared"] = std::move(compared);
  if (!trees.empty())
    j["tree_strategies"] = nlohmann::ordered_json::parse(tree_strategy_json(trees));
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) return absl::UnavailableError(str_cat(path, ": cannot write the report"));
  return absl::OkStatus();
}

int run_compile(std::span<const std::string> raw_args) {
  ArgParser parser(
      "compile",
      "Place every part of a model on the backend that runs it fastest (Collage):\n"
      "measure the candidates of every backend, choose by the op-level search, refine\n"
      "by the graph-level search over measured end-to-end latencies; print the\n"
      "placement and its speedup over each single-backend placement; with -o, write\n"
      "the artifact that `collage run` and the runtime library (libcollage_runtime) load.");
  CompileArgs args;
  args.model.declare(parser);
  args.placement.declare(parser, /*with_strategy=*/true);
  parser.option("--report", "FILE",
                "write the placement and its explanation as JSON (for\n"
                "`collage explain`)",
                &args.report);
  parser.option("-o", "FILE.collage",
                "write the compiled model as an artifact (docs/artifact-format.md)",
                &args.output);
  parser.flag("--no-passes", "place the graph as imported, without the optimisation passes",
              &args.no_passes);
  parser.flag("--no-compare",
              "skip the end-to-end comparison with each single-backend placement",
              &args.no_compare);
  parser.option("--executor", "KIND",
                "waves, sequential or auto (default): the executor the model will run\n"
                "under; the graph-level search scores placements with it (auto: the\n"
                "faster of the two, measured)",
                &args.executor);
  parser.option("--tree-strategy", "STRATEGY",
                "tree models (XGBoost, LightGBM, and each ai.onnx.ml tree-ensemble\n"
                "node of an ONNX model): measured (default: every strategy placed\n"
                "and costed at the batch of --input-shape input=BxF, or of the\n"
                "node's input, the cheapest kept), auto (fixed depth rule), fused,\n"
                "ptt, tt or gemm",
                &args.tree_strategy);
  parser.option("--batch-sizes", "LIST",
                "with a batch range (--input-shape x=1..32x...): the batches that get\n"
                "a plan of their own, e.g. 1,8,32 (default: the range's ends and the\n"
                "powers of two between them); a batch without one runs on the next\n"
                "larger plan, padded",
                &args.batch_sizes);
  parser.epilog(
      "Costs are kept in the cost database, keyed by this machine's CPU, the backend and its\n"
      "version, and the group's canonical signature: a second compile of the same model\n"
      "measures no kernel again. Every group of an artifact needs a backend with a runtime\n"
      "module: a group only the reference fallback can run makes -o fail, naming it.");
  if (std::optional<int> exit = parser.parse(raw_args)) return *exit;

  Context ctx;
  PlacementOptions options = args.placement.options();
  options.compare_baselines = !args.no_compare;
  if (!args.output.empty()) keep_reference_out(options);
  auto tree_mode = parse_tree_strategy_mode(args.tree_strategy);
  if (!tree_mode.ok()) {
    const std::string message = str_cat("--tree-strategy: ", tree_mode.status().message());
    return report_failure("compile", absl::InvalidArgumentError(message));
  }
  TreeCompileOptions tree_options;
  tree_options.mode = *tree_mode;
  tree_options.placement = options;
  tree_options.passes = !args.no_passes;
  tree_options.artifact = !args.output.empty();
  tree_options.progress = [&](const std::string& label) {
    std::fprintf(stderr, "tree strategy: placing and costing %s\n", label.c_str());
  };
  if (!args.model.ranges.empty()) {
    auto executor = parse_executor(args.executor);
    if (!executor.ok()) return report_failure("compile", executor.status());
    BatchCompileArgs batch{&args.model, options, args.placement.plugins, tree_options,
                           !args.no_passes, args.output, args.batch_sizes};
    batch.placement.executor = *executor;
    return run_batch_compile(batch);
  }
  auto imported = load_compile_model(ctx, args.model, tree_options, args.placement.plugins);
  if (!imported.ok()) return report_failure("compile", imported.status());
  absl::StatusOr<Graph> g = std::move(imported->graph);
  if (!args.no_passes) {
    g = run_passes(ctx, *g);
    if (!g.ok()) return report_failure("compile", g.status());
  }
  auto executor = parse_executor(args.executor);
  if (!executor.ok()) return report_failure("compile", executor.status());
  options.executor = *executor;
  const double start = now_ms();
  double compare_start = -1;
  options.progress = [&](const PlacementProgress& progress) {
    if (progress.phase == "compare" && compare_start < 0) compare_start = now_ms();
  };
  // The comparison runs the chosen placement in process (alternately with the baselines).
  auto placed = place_model(ctx, *g, options, /*progress=*/true, /*compile=*/false,
                            args.placement.plugins);
  if (!placed.ok()) return report_failure("compile", placed.status());
  const double end = now_ms();
  if (compare_start < 0) compare_start = end;
  const OptimizeResult& r = (*placed)->result;
  const Placement& p = r.placement;

  std::string out = absl::StrFormat("%s: %d nodes in %d groups, placement %s\n", args.model.model,
                                    g->nodes().size(), p.groups.size(), p.strategy);
  if (r.candidates)
    out += absl::StrFormat(
        "  %d candidates: %d kernels measured, %d costs reused (cost database%s or an\n"
        "  identical group)\n",
        r.candidates, r.measured, r.cached,
        options.cost_db_path.empty() ? " (none)" : " " + options.cost_db_path);
  out += absl::StrFormat("  placement took %.1f s", (compare_start - start) / 1000);
  out += r.compared.empty() ? "\n"
                            : absl::StrFormat(", the comparison below %.1f s\n",
                                              (end - compare_start) / 1000);
  for (const TreeStrategyReport& t : imported->trees) out += tree_strategy_summary(t);
  out += placement_table(*g, p);
  out += comparison_table(r.compared);
  if (!p.notes.empty()) {
    out += "notes:\n";
    for (const std::string& n : p.notes) out += "  " + n + "\n";
  }
  std::fputs(out.c_str(), stdout);
  if (!args.report.empty()) {
    if (absl::Status s = write_report(args.report, *g, args, r, imported->trees); !s.ok())
      return report_failure("compile", s);
    std::printf("wrote %s\n", args.report.c_str());
  }
  if (!args.output.empty()) {
    auto summary = write_artifact(ctx, **placed, *g, args.output, options.backends, options);
    if (!summary.ok()) return report_failure("compile", summary.status());
    std::fputs(artifact_summary(args.output, *summary).c_str(), stdout);
  }
  return kExitOk;
}

}  // namespace

extern const Command kCompileCommand;
const Command kCompileCommand{"compile",
                              "place a model on the backends and write it as an artifact",
                              run_compile};

}  // namespace collage::cli
