// The graph-level search scored under the executor a placement will run with, against the search
// scored sequentially: for each executor setting (sequential, waves, auto), the placement the
// two-level search chooses, its score in the search, and its artifact's sequential and wave
// executor latencies measured alternately at compile time. Not a test: it never fails on a timing.
//
//   side_by_side_bench [--budget S] [--runs N] [MODEL...]
//     no model: the two-branch graph of the simulated backends (tests/waves/side_by_side): per branch
//       a kernel with a 2-thread team (2.8 ms) or a single-threaded one (4 ms), on 2 simulated
//       cores; every one of its four placements is measured too
//     MODEL: a model of ~/.cache/collage/models (googlenet_small, inceptionv3_small, ...) placed
//       on eigen, dnnl and native, searched for S seconds (default 30) per executor setting; the
//       candidates' costs are measured once (a cost database shared by the three searches)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "artifact/artifact.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "side_by_side/simulated_backends.h"

using namespace collage;

namespace {

struct Setting {
  const char* name;
  PlacementExecutor executor;
};
constexpr Setting kSettings[] = {{"sequential", PlacementExecutor::sequential},
                                 {"waves", PlacementExecutor::waves},
                                 {"auto", PlacementExecutor::automatic}};

// "left:team right:solo" for a few groups, else the group count per backend.
std::string describe(const Graph& g, const Placement& p) {
  std::string out;
  if (p.groups.size() <= 4) {
    for (const PlacedGroup& group : p.groups) {
      std::string nodes;
      for (NodeId n : group.nodes.to_vector()) nodes += (nodes.empty() ? "" : "+") + g.node(n).name;
      out += (out.empty() ? "" : " ") + nodes + ":" + group.backend;
    }
    return out;
  }
  std::map<std::string, int> count;
  for (const PlacedGroup& group : p.groups) ++count[group.backend];
  for (const auto& [backend, n] : count)
    out += (out.empty() ? "" : ", ") + backend + " " + std::to_string(n);
  return out + " groups";
}

std::vector<std::pair<NodeSet, std::string>> groups_of(const Placement& p) {
  std::vector<std::pair<NodeSet, std::string>> v;
  for (const PlacedGroup& group : p.groups) v.push_back({group.nodes, group.backend});
  std::sort(v.begin(), v.end());
  return v;
}

// Groups of `a` that `b` does not have (same nodes on the same backend).
size_t groups_not_in(const Placement& a, const Placement& b) {
  const auto x = groups_of(a), y = groups_of(b);
  size_t n = 0;
  for (const auto& group : x) n += !std::binary_search(y.begin(), y.end(), group);
  return n;
}

struct Measured {
  double sequential_ms = -1, waves_ms = -1;
  uint32_t exclusive = 0, waves = 0;
};

// The placement's artifact with a wave schedule: both executors measured alternately, `runs`
// whole runs each (medians).
Measured measure(const Context& ctx, const BackendRegistry& backends, const Graph& g,
                 const Placement& p, int workers, int runs) {
  ArtifactOptions options;
  options.build.num_threads = workers;
  options.waves.executor = waves::ExecutorChoice::automatic;
  options.waves.workers = static_cast<uint32_t>(workers);
  options.waves.measure_runs = runs;
  ArtifactSummary summary;
  auto bytes = compile_artifact(ctx, backends, g, p, options, &summary);
  if (!bytes.ok()) {
    std::printf("    artifact failed: %s\n", std::string(bytes.status().message()).c_str());
    return {};
  }
  return {summary.sequential_ms, summary.waves_ms, summary.exclusive_kernels, summary.num_waves};
}

void print_measured(const char* label, const std::string& placement, double score,
                    const Measured& m) {
  std::printf("  %-24s %9.3f %9.3f %9.3f %4u/%-4u  %s\n", label, score, m.sequential_ms,
              m.waves_ms, m.exclusive, m.waves, placement.c_str());
}

// The two-level search once per executor setting, then each chosen placement measured.
void compare_settings(const Context& ctx, const BackendRegistry& backends, const Graph& g,
                      const PlacementOptions& base, int runs) {
  std::vector<Placement> chosen;
  for (const Setting& s : kSettings) {
    PlacementOptions options = base;
    options.executor = s.executor;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = optimize_detailed(ctx, backends, g, options);
    const double search_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      std::printf("  %-10s search failed: %s\n", s.name, std::string(r.status().message()).c_str());
      return;
    }
    std::printf("  search scored %-10s %5.1f s, %3zu placements measured end to end\n", s.name,
                search_s, r->evaluations);
    chosen.push_back(std::move(r->placement));
  }
  std::printf("  %-24s %9s %9s %9s %9s  %s\n", "chosen by the search", "score ms", "seq ms",
              "waves ms", "excl/wav", "placement");
  for (size_t i = 0; i < chosen.size(); ++i)
    print_measured(kSettings[i].name, describe(g, chosen[i]), chosen[i].estimated_ms,
                   measure(ctx, backends, g, chosen[i], base.num_threads, runs));
  const size_t differ = groups_not_in(chosen[1], chosen[0]);
  std::printf("  waves-scored placement: %s (%zu of its %zu groups not in the sequential-scored one)\n",
              differ ? "DIFFERENT" : "the same", differ, chosen[1].groups.size());
}

void simulated_graph(int runs, double budget_s) {
  std::printf("two-branch graph, simulated backends on 2 simulated cores (team 2.8 ms with 2 threads, "
              "solo 4 ms with 1)\n");
  Context ctx;
  testing::SimulatedCores cores(2);
  BackendRegistry backends;
  (void)backends.add(testing::make_simulated_backend({"team", 2, 2.8}, &cores));
  (void)backends.add(testing::make_simulated_backend({"solo", 1, 4.0}, &cores));
  const Graph g = testing::two_branch_graph(ctx);
  PlacementOptions options;
  options.fallback = "solo";
  options.num_threads = 2;
  options.population = 6;
  options.time_budget_s = budget_s;
  compare_settings(ctx, backends, g, options, runs);

  std::printf("  every placement:\n");
  for (const char* left : {"team", "solo"})
    for (const char* right : {"team", "solo"}) {
      Placement p;
      for (NodeId n : {NodeId{0}, NodeId{1}}) {
        PlacedGroup group;
        group.nodes = NodeSet(g.nodes().size());
        group.nodes.insert(n);
        group.backend = n == 0 ? left : right;
        p.groups.push_back(std::move(group));
      }
      if (!validate_placement(g, backends, p).ok()) continue;
      print_measured("", describe(g, p), -1, measure(ctx, backends, g, p, options.num_threads, runs));
    }
}

void model(const std::string& name, int runs, double budget_s) {
  std::printf("%s on eigen, dnnl and native\n", name.c_str());
  Context ctx;
  const char* home = std::getenv("HOME");
  const std::string path =
      std::string(home ? home : ".") + "/.cache/collage/models/" + name + ".onnx";
  auto imported = import_onnx_file(ctx, path);
  if (!imported.ok()) {
    std::printf("  skipped: %s\n", std::string(imported.status().message()).c_str());
    return;
  }
  auto g = run_passes(ctx, *imported);
  if (!g.ok()) {
    std::printf("  skipped: %s\n", std::string(g.status().message()).c_str());
    return;
  }
  BackendRegistry backends;
  (void)register_eigen_backend(backends);
  (void)register_dnnl_backend(backends);
  (void)register_native_backend(backends);
  const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                   ("side_by_side_bench." + std::to_string(getpid()) + ".jsonl");
  PlacementOptions options;
  options.fallback = "native";
  options.num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.time_budget_s = budget_s;
  options.cost_db_path = db.string();
  compare_settings(ctx, backends, *g, options, runs);
  std::filesystem::remove(db);
}

}  // namespace

int main(int argc, char** argv) {
  double budget_s = 30;
  int runs = 15;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--budget" && i + 1 < argc)
      budget_s = std::atof(argv[++i]);
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else
      models.push_back(a);
  }
  std::printf("two-level search scored under each executor setting, %u hardware threads; "
              "score: the search's end-to-end figure; seq / waves: the artifact's executors, %d "
              "alternating runs, medians; excl/wav: exclusive kernels / waves\n",
              std::thread::hardware_concurrency(), runs);
  if (models.empty()) simulated_graph(runs, std::min(budget_s, 20.0));
  for (const std::string& m : models) model(m, runs, budget_s);
  return 0;
}
