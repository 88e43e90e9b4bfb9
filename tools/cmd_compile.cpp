// `collage compile`: places a model on the backends (Collage), prints the placement with its
// costs and the speedup over each single-backend placement, writes the report, and runs the
// placed model in process.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"
#include "artifact/artifact.h"
#include "cli_common.h"
#include "collage/passes.h"
#include "core/str_cat.h"
#include "placement/timing.h"
#include "placement_cli.h"

namespace collage::cli {
namespace {

struct CompileArgs {
  ModelArgs model;
  PlacementArgs placement;
  std::string report;
  bool no_passes = false;
  std::string executor = "auto";
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

absl::Status write_report(const std::string& path, const Graph& g, const CompileArgs& args,
                          const OptimizeResult& r) {
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
      "placement and its speedup over each single-backend placement, and run it.");
  CompileArgs args;
  args.model.declare(parser);
  args.placement.declare(parser, /*with_strategy=*/true);
  parser.option("--report", "FILE",
                "write the placement and its explanation as JSON (for\n"
                "`collage explain`)",
                &args.report);
  parser.flag("--no-passes", "place the graph as imported, without the optimisation passes",
              &args.no_passes);
  parser.option("--executor", "KIND",
                "waves, sequential or auto (default): the executor the model will run\n"
                "under; the graph-level search scores placements with it (auto: the\n"
                "faster of the two, measured)",
                &args.executor);
  parser.epilog(
      "Costs are kept in the cost database, keyed by this machine's CPU, the backend and its\n"
      "version, and the group's canonical signature: a second compile of the same model\n"
      "measures no kernel again. Until artifacts exist the placement is kept in process and\n"
      "run there.");
  if (std::optional<int> exit = parser.parse(raw_args)) return *exit;

  Context ctx;
  auto imported = load_model(ctx, args.model);
  if (!imported.ok()) return report_failure("compile", imported.status());
  absl::StatusOr<Graph> g = std::move(imported);
  if (!args.no_passes) {
    g = run_passes(ctx, *g);
    if (!g.ok()) return report_failure("compile", g.status());
  }
  PlacementOptions options = args.placement.options();
  auto executor = parse_executor(args.executor);
  if (!executor.ok()) return report_failure("compile", executor.status());
  options.executor = *executor;
  options.compare_baselines = true;
  const double start = now_ms();
  double compare_start = -1;
  options.progress = [&](const PlacementProgress& progress) {
    if (progress.phase == "compare" && compare_start < 0) compare_start = now_ms();
  };
  // The comparison runs the chosen placement in process (alternately with the baselines).
  auto placed = place_model(ctx, *g, options, /*progress=*/true, /*compile=*/false);
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
  out += absl::StrFormat("  placement took %.1f s, the comparison below %.1f s\n",
                         (compare_start - start) / 1000, (end - compare_start) / 1000);
  out += placement_table(*g, p);
  out += comparison_table(r.compared);
  if (!p.notes.empty()) {
    out += "notes:\n";
    for (const std::string& n : p.notes) out += "  " + n + "\n";
  }
  std::fputs(out.c_str(), stdout);
  if (!args.report.empty()) {
    if (absl::Status s = write_report(args.report, *g, args, r); !s.ok())
      return report_failure("compile", s);
    std::printf("wrote %s\n", args.report.c_str());
  }
  return kExitOk;
}

}  // namespace

extern const Command kCompileCommand;
const Command kCompileCommand{"compile", "place a model on the backends and run it in process",
                              run_compile};

}  // namespace collage::cli
