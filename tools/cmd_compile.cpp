// `collage compile`: the driver (collage/compiler.h) places a model on the backends (Collage) and,
// with -o, writes the artifact that `collage run` and the runtime library load; this prints the
// placement with its costs and the speedup over each single-backend placement, and writes the
// report.
#include <cstdio>
#include <fstream>

#include "absl/strings/str_format.h"
#include "collage/compiler.h"
#include "cli_common.h"
#include "compile_batch.h"
#include "core/str_cat.h"
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
              ? (s.waves_ms > 0 || s.sequential_ms > 0
                     ? absl::StrFormat("  wave schedule: %u waves on %u workers; measured waves "
                                       "%.2f ms, sequential %.2f ms: runs with the %s executor by "
                                       "default\n",
                                       s.num_waves, s.workers, s.waves_ms, s.sequential_ms,
                                       s.executor)
                     : absl::StrFormat("  wave schedule: %u waves on %u workers, not measured: "
                                       "runs with the %s executor by default\n",
                                       s.num_waves, s.workers, s.executor))
              : std::string());
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

  auto compiler = make_compiler(
      args.placement.plugins,
      args.placement.no_winograd ? NativeWinograd::off : NativeWinograd::measure);
  if (!compiler.ok()) return report_failure("compile", compiler.status());
  CompileOptions options;
  auto import = args.model.import_options();
  if (!import.ok()) return report_failure("compile", import.status());
  options.import = *std::move(import);
  auto tree_mode = parse_tree_strategy_mode(args.tree_strategy);
  if (!tree_mode.ok()) {
    const std::string message = str_cat("--tree-strategy: ", tree_mode.status().message());
    return report_failure("compile", absl::InvalidArgumentError(message));
  }
  options.tree_strategy = *tree_mode;
  options.tree_progress = [](const std::string& label) {
    std::fprintf(stderr, "tree strategy: placing and costing %s\n", label.c_str());
  };
  options.passes = !args.no_passes;
  options.artifact = !args.output.empty();
  options.placement = args.placement.options();
  options.placement.compare_baselines = !args.no_compare;
  auto executor = parse_executor(args.executor);
  if (!executor.ok())
    return report_failure("compile", absl::InvalidArgumentError(
                                         str_cat("--", executor.status().message())));
  options.placement.executor = *executor;
  auto batch = batch_range(args.model, args.batch_sizes);
  if (!batch.ok()) return report_failure("compile", batch.status());
  options.batch = *std::move(batch);
  options.batch_progress = [](int64_t batch, size_t i, size_t n) {
    std::fprintf(stderr, "batch %lld (%zu of %zu): placing\n", static_cast<long long>(batch),
                 i + 1, n);
  };
  ProgressLine line;
  options.placement.progress = with_progress_line(line, nullptr);
  const ModelSource model = ModelSource::file(args.model.model);
  auto compiled = args.output.empty() ? compiler->compile(model, options)
                                      : compiler->compile_to_file(model, options, args.output);
  line.finish();
  if (!compiled.ok()) return report_failure("compile", compiled.status());
  if (!compiled->batches.empty()) {
    std::fputs(batch_summary(args.model.model, *compiled).c_str(), stdout);
    std::fputs(artifact_summary(args.output, compiled->summary).c_str(), stdout);
    return kExitOk;
  }
  const Graph* g = &compiled->graph;
  const OptimizeResult& r = compiled->optimized;
  const Placement& p = r.placement;

  std::string out = absl::StrFormat("%s: %d nodes in %d groups, placement %s\n", args.model.model,
                                    g->nodes().size(), p.groups.size(), p.strategy);
  if (r.candidates)
    out += absl::StrFormat(
        "  %d candidates: %d kernels measured, %d costs reused (cost database%s or an\n"
        "  identical group)\n",
        r.candidates, r.measured, r.cached,
        options.placement.cost_db_path.empty() ? " (none)" : " " + options.placement.cost_db_path);
  out += absl::StrFormat("  placement took %.1f s", compiled->placement_s - compiled->compare_s);
  out += r.compared.empty()
             ? "\n"
             : absl::StrFormat(", the comparison below %.1f s\n", compiled->compare_s);
  out += absl::StrFormat(
      "  %d choices measured (Winograd or direct, wave schedule), %d remembered\n",
      compiled->choices_measured, compiled->choices_reused);
  if (compiled->kernels_built || compiled->kernels_reused)
    out += absl::StrFormat(
        "  %d regions compiled (openvino; %d of them by the artifact build), %d builds reused "
        "one\n",
        compiled->kernels_built, compiled->kernels_built_by_build, compiled->kernels_reused);
  if (!compiled->phases.empty()) {
    out += "  time:";
    double total = 0;
    for (const auto& [step, s] : compiled->phases) {
      out += absl::StrFormat(" %s %.1f s,", step, s);
      total += s;
    }
    out += absl::StrFormat(" total %.1f s (budget %g s)\n", total,
                           options.placement.time_budget_s);
  }
  if (!compiled->builds.empty()) {
    out += "  kernels built:";
    std::string step;
    for (const KernelBuilds& k : compiled->builds) {
      out += absl::StrFormat("%s %s %d in %.1f s", k.step == step ? "," : step.empty() ? "" : ";",
                             k.step == step ? k.backend : str_cat(k.step, ": ", k.backend),
                             k.builds, k.s);
      step = k.step;
    }
    out += "\n";
  }
  if (!compiled->cut.empty()) {
    out += "  cut by the time budget:\n";
    for (const std::string& c : compiled->cut) out += "    " + c + "\n";
  }
  for (const TreeStrategyReport& t : compiled->trees) out += tree_strategy_summary(t);
  out += placement_table(*g, p);
  out += comparison_table(r.compared);
  if (!p.notes.empty()) {
    out += "notes:\n";
    for (const std::string& n : p.notes) out += "  " + n + "\n";
  }
  std::fputs(out.c_str(), stdout);
  if (!args.report.empty()) {
    if (absl::Status s = write_text_file(args.report, compiled->report_json()); !s.ok())
      return report_failure("compile", s);
    std::printf("wrote %s\n", args.report.c_str());
  }
  if (!args.output.empty())
    std::fputs(artifact_summary(args.output, compiled->summary).c_str(), stdout);
  return kExitOk;
}

}  // namespace

extern const Command kCompileCommand;
const Command kCompileCommand{"compile",
                              "place a model on the backends and write it as an artifact",
                              run_compile};

}  // namespace collage::cli
