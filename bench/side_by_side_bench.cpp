// The graph-level search scored under the executor a placement will run with, against the search
// scored sequentially: for each executor setting (sequential, waves, auto), the placement the
// two-level search chooses, its score in the search, and then each chosen placement scored again
// under both executors (as the search scores: in process one kernel after another, and the wave
// schedule of its artifact measured on the live kernels), alternately. Not a test: it never
// fails on a timing.
//
//   side_by_side_bench [--budget S] [--rounds N] [MODEL...]
//     no model: the two-branch graph of the simulated backends (tests/waves/side_by_side): per
//     branch
//       a kernel with a 2-thread team (2.8 ms) or a single-threaded one (4 ms), on 2 simulated
//       cores; each of its four placements is measured too
//     MODEL: a model of ~/.cache/collage/models (googlenet_small, inceptionv3_small, ...) placed
//       on eigen, dnnl and native, searched for S seconds (default 30) per executor setting; the
//       candidates' costs are measured once (a cost database shared by the three searches)
//   Run oneDNN with OMP_WAIT_POLICY=passive on a shared machine: its spinning OpenMP threads
//   otherwise make every figure with a dnnl kernel several times slower.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/compiler.h"
#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/placement.h"
#include "collage/thread_pool.h"
#include "core/str_cat.h"
#include "placement/end_to_end.h"
#include "placement/timing.h"
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
};

// Every placement scored as the search scores it (the end-to-end measurer: sequential, in
// process; waves, the artifact's wave schedule measured on the live kernels), `rounds` times,
// alternating placements and executors; medians.
std::vector<Measured> measure_all(const Context& ctx, const BackendRegistry& backends,
                                  const Graph& g, const std::vector<Placement>& placements,
                                  int threads, int rounds) {
  ThreadPool pool(threads);
  EndToEndMeasurer sequential(ctx, backends, g, &pool,
                              EndToEndOptions{.executor = PlacementExecutor::sequential});
  EndToEndMeasurer waves(ctx, backends, g, &pool,
                         EndToEndOptions{.executor = PlacementExecutor::waves,
                                         .executor_latency = artifact_executor_latency(ctx)});
  std::vector<std::vector<double>> seq_ms(placements.size()), wave_ms(placements.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t k = 0; k < placements.size(); ++k) {
      const size_t i = r % 2 ? placements.size() - 1 - k : k;
      if (auto ms = sequential.latency_ms(placements[i]); ms.ok()) seq_ms[i].push_back(*ms);
      if (auto ms = waves.latency_ms(placements[i]); ms.ok()) wave_ms[i].push_back(*ms);
    }
  std::vector<Measured> out;
  for (size_t i = 0; i < placements.size(); ++i)
    out.push_back({seq_ms[i].empty() ? -1 : summarize_samples(seq_ms[i]).median,
                   wave_ms[i].empty() ? -1 : summarize_samples(wave_ms[i]).median});
  return out;
}

void print_table(const char* title, const std::vector<std::string>& labels, const Graph& g,
                 const std::vector<Placement>& placements, const std::vector<Measured>& m) {
  std::printf("  %-22s %9s %9s %9s  %s\n", title, "score ms", "seq ms", "waves ms", "placement");
  for (size_t i = 0; i < placements.size(); ++i)
    std::printf("  %-22s %9s %9.3f %9.3f  %s\n", labels[i].c_str(),
                placements[i].estimated_ms < 0
                    ? "-"
                    : absl::StrFormat("%.3f", placements[i].estimated_ms).c_str(),
                m[i].sequential_ms, m[i].waves_ms, describe(g, placements[i]).c_str());
}

// The two-level search once per executor setting, then the chosen placements measured.
void compare_settings(const Context& ctx, const BackendRegistry& backends, const Graph& g,
                      const PlacementOptions& base, int rounds) {
  std::vector<Placement> chosen;
  std::vector<std::string> labels;
  for (const Setting& s : kSettings) {
    PlacementOptions options = base;
    options.executor = s.executor;
    options.executor_latency = artifact_executor_latency(ctx);
    const auto t0 = std::chrono::steady_clock::now();
    auto r = optimize_detailed(ctx, backends, g, options);
    const double search_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.ok()) {
      std::printf("  %-10s search failed: %s\n", s.name, std::string(r.status().message()).c_str());
      return;
    }
    std::string origin = "chosen: ?";
    for (const std::string& note : r->placement.notes)
      if (note.starts_with("chosen: ")) origin = note;
    std::printf("  search scored %-10s %6.1f s, %3zu end-to-end measurements, %s\n", s.name,
                search_s, r->evaluations, origin.c_str());
    chosen.push_back(std::move(r->placement));
    labels.push_back(str_cat("scored ", s.name));
  }
  print_table("chosen by the search", labels, g, chosen,
              measure_all(ctx, backends, g, chosen, base.num_threads, rounds));
  const size_t differ = groups_not_in(chosen[1], chosen[0]);
  std::printf(
      "  waves-scored placement: %s (%zu of its %zu groups not in the sequential-scored "
      "one)\n",
      differ ? "DIFFERENT" : "the same", differ, chosen[1].groups.size());
}

void simulated_graph(int rounds, double budget_s) {
  std::printf(
      "two-branch graph, simulated backends on 2 simulated cores (team 2.8 ms on 2 cores, solo "
      "4 ms on 1)\n");
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
  compare_settings(ctx, backends, g, options, rounds);

  std::vector<Placement> every;
  std::vector<std::string> labels;
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
      every.push_back(std::move(p));
      labels.push_back("");
    }
  print_table("every placement", labels, g, every,
              measure_all(ctx, backends, g, every, options.num_threads, rounds));
}

void model(const std::string& name, int rounds, double budget_s) {
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
  // The three searches start from the same candidate costs (none is measured again as shaky), so
  // their placements differ by how the graph-level search scored them, not by cost noise.
  options.trusted_spread = std::numeric_limits<double>::infinity();
  compare_settings(ctx, backends, *g, options, rounds);
  std::filesystem::remove(db);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  double budget_s = 30;
  int rounds = 5;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--budget" && i + 1 < argc)
      budget_s = std::atof(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else
      models.push_back(a);
  }
  std::printf(
      "two-level search scored under each executor setting, %u hardware threads\n"
      "score: the chosen placement's figure in its search; seq / waves: it scored as the "
      "search scores\nunder each executor, %d rounds alternating placements and "
      "executors, medians\n",
      std::thread::hardware_concurrency(), rounds);
  if (models.empty()) simulated_graph(rounds, std::min(budget_s, 20.0));
  for (const std::string& m : models) model(m, rounds, budget_s);
  return 0;
}
