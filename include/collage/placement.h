// Placement: which backend runs which group of nodes, how it was chosen, and the optimizer that
// chooses it (Collage: op-level dynamic programming, then graph-level evolutionary search).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/backend.h"
#include "collage/graph.h"
#include "collage/subgraph.h"

namespace collage {

// A cost the optimizer considered for a group and did not choose (for explanations).
struct Alternative {
  std::string backend;
  std::string origin;
  double cost_ms = -1;  // -1: not measured
  std::string note;     // e.g. why it was rejected ("build failed: ...")
};

// One group: nodes run as one kernel by one backend.
struct PlacedGroup {
  NodeSet nodes;
  std::string backend;
  std::string origin;   // the pattern or rule that produced the candidate
  double cost_ms = -1;  // measured (or modelled) cost of the kernel; -1 when unknown
  std::vector<Alternative> alternatives;
};

// A partition of every node of a graph into groups, in an executable (topological) order.
struct Placement {
  std::string strategy;  // "op-level", "two-level", "single:dnnl", "greedy", ...
  std::vector<PlacedGroup> groups;
  double estimated_ms = -1;  // sum of group costs (op-level) or measured end to end (two-level)
  std::vector<std::string> notes;  // search caps hit, budgets exhausted, seeds used

  // JSON with a top-level "groups" list (nodes by name, backend, cost, alternatives); the same
  // text `collage compile --report` writes.
  std::string to_json(const Graph& g) const;
};

// Checks that `p` covers every node of `g` exactly once with convex groups whose backends exist,
// and orders the groups topologically. Errors name the group at fault.
absl::Status validate_placement(const Graph& g, const BackendRegistry& backends, Placement& p);

// ---- The Collage optimizer (placement/) ----

// The cost of running one candidate group as one kernel on its backend.
struct Cost {
  double ms = 0;            // median wall time of one run, in milliseconds
  int samples = 0;          // timed samples behind the median; 0 for a modelled (unmeasured) cost
  double spread = 0;        // (90th - 10th percentile) / median of those samples
  bool from_cache = false;  // taken from the cost database or an earlier identical group
};

// What the op-level search asks for the cost of a candidate. The measurer (placement/measurer.h)
// builds and times kernels; tests plug in deterministic fakes.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // Cost of `candidate`, whose group is cut out of the graph as `group`. An error (the backend
  // cannot build or run it) excludes the candidate; the message is kept as an explanation.
  virtual absl::StatusOr<Cost> cost(const Candidate& candidate, const ExtractedSubgraph& group) = 0;
  // Extra time a value of type `type` costs when it crosses a group boundary (it is written to
  // memory by one kernel and read back by the next instead of staying inside a fused kernel), in
  // milliseconds. 0 unless the model measures it.
  virtual double boundary_ms(const TensorType& type) { return 0; }
  // A hint that cost() is about to be asked for each of `batch` (candidates compared with each
  // other); a measurer times them interleaved. Default: nothing.
  virtual void prefetch(
      std::span<const std::pair<const Candidate*, const ExtractedSubgraph*>> batch) {}
};

// End-to-end latency of a whole placed model (the graph-level search's fitness).
class PlacementEvaluator {
 public:
  virtual ~PlacementEvaluator() = default;
  // Median latency in milliseconds of one run of the model placed as `p`. Errors (a group fails to
  // build or run) make the placement unusable.
  virtual absl::StatusOr<double> latency_ms(const Placement& p) = 0;
};

struct PlacementProgress {
  // "candidates", "measure", "op-level", "seeds" (the graph-level search's seeds placed, their new
  // candidates costed and the seeds measured), "evolve", "finalists", "done", "compare"
  std::string phase;
  size_t measured = 0;  // candidates costed so far (measure), placements evaluated (evolve)
  size_t total = 0;     // candidates to cost (measure)
  int generation = 0;   // evolve
  double best_ms = -1;  // best end-to-end latency so far (evolve, finalists)
};

// The executor a placement will run under (artifacts: the wave executor of inter-operator
// parallelism, or one kernel after another); the graph-level search scores placements with it.
// `automatic`: the faster of the two, as the artifact writer chooses.
enum class PlacementExecutor : uint8_t { sequential, waves, automatic };
// "waves", "sequential" or "auto"; InvalidArgument naming `name` otherwise.
absl::StatusOr<PlacementExecutor> parse_executor(std::string_view name);

// The latency in milliseconds of placement `p` of `g` as the runtime's executor `executor` (waves
// or automatic: the faster of waves and sequential) would run its artifact, its kernels built with
// `backends` and `build` (threads, target, code cache); nullopt when it cannot be scored that way (then the placement
// is measured in process, one kernel after another). The compile driver supplies one that writes
// the artifact's wave schedule (artifact_executor_latency, collage/compiler.h): the placement
// search itself links no artifact writer.
using ExecutorLatency = std::function<std::optional<double>(
    const BackendRegistry& backends, const Graph& g, const Placement& p, const BuildOptions& build,
    PlacementExecutor executor)>;

struct PlacementOptions {
  // Backends that may take part, by name; empty means every registered backend. The fallback is
  // always added.
  std::vector<std::string> backends;
  // The backend that can run any node (BaselineOptions::fallback).
  std::string fallback = "reference";
  // "op-level" (dynamic programming over measured candidate costs), "two-level" (op-level, then
  // the evolutionary search over measured end-to-end latencies), "single:NAME" or "greedy".
  std::string strategy = "two-level";
  // Wall-clock budget of the whole placement in seconds: candidate measurement (sampled briefly
  // once half of it is spent; once 75% is spent, or when a kernel's build and timing would end
  // after that, as the kernels measured so far tell, nothing more is built: the fallback
  // backend's candidates get estimates from their work, the others are left out), the
  // graph-level search (what is left, less a reserve for the comparison), and compare_baselines
  // (while it lasts). The op-level seed of the graph-level search and the single-backend seed
  // estimated fastest are measured when their evaluations, as estimated, fit in what is left of
  // the budget; without the op-level one the search is not run and the op-level placement stands.
  // Whatever was cut is said in OptimizeResult::cut; the result is remembered all the same (the
  // budget is part of its key: a larger budget searches again). The compile driver gives the
  // placement 90% of the compile's budget (10% is for building the artifact), the import's time
  // counted as spent (spent_s).
  double time_budget_s = 60;
  // Seconds of time_budget_s already spent when the placement starts. Unlike the budget, not part
  // of the key under which a search's result is remembered.
  double spent_s = 0;
  uint64_t seed = 0;
  // Persistent cost database (JSON lines); empty: costs live only as long as the call.
  std::string cost_db_path;
  // Device fingerprint that keys the database; empty: device_fingerprint() of this machine.
  std::string device;
  // Database records whose spread ((p90 - p10) / median) exceeds this were measured on a busy
  // machine; they are measured once more and replaced (a record measured twice is kept).
  double trusted_spread = 0.5;
  // Candidates: largest node count of one candidate (also passed to pattern rules), and the most
  // candidates kept in all (0: no limit; the largest are dropped first). Cuts are noted.
  int max_depth = 8;
  size_t max_candidates = 0;
  // Largest number of states the op-level search may memoise before it gives up.
  size_t max_states = 2000000;
  // Charge CostModel::boundary_ms for every value a candidate reads from another group.
  bool charge_boundaries = true;
  // Graph-level search: population size and a bound on generations (0: only the time budget).
  int population = 16;
  int max_generations = 0;
  // Threads a kernel may use while measured and run (0: one per core).
  int num_threads = 0;
  // The CPU generated code is compiled for (BuildOptions::target; "" or "host": this machine).
  // A named target also keys the cost database: `device` gets "|target=CPU" appended.
  std::string target;
  // BuildOptions::code_cache of every kernel built ("": none): compiled code kept between
  // compiles, beside the cost database (code_cache_dir).
  std::string code_cache;
  // Channel block of the blocked layouts groups pass each other, as the placement will be
  // compiled (BuildOptions::channel_block): candidates and placements are measured with them.
  int32_t channel_block = -1;
  PlacementExecutor executor = PlacementExecutor::sequential;
  // How placements are scored under `executor` when it is not sequential; empty: in process, one
  // kernel after another (noted in the placement).
  ExecutorLatency executor_latency;
  // Measure the chosen placement and every single-backend baseline end to end, interleaved, and
  // report the figures (OptimizeResult::compared).
  bool compare_baselines = false;
  std::function<void(const PlacementProgress&)> progress;
  // Replacements for the measurers (not owned; tests use deterministic fakes): candidate costs and
  // end-to-end latencies.
  CostModel* cost_model = nullptr;
  PlacementEvaluator* evaluator = nullptr;
  // Where the kernels built decide by measurement (BuildOptions::choices; not owned): the
  // compile driver passes the store its artifact is built with too. Null: the optimizer keeps
  // one over the cost database for the call.
  MeasuredChoices* choices = nullptr;
  // Where the kernels built keep and find each other (BuildOptions::shelf; not owned): the
  // compile driver passes the shelf its artifact is built with, so that the artifact takes the
  // kernels measurement built. Null: none kept.
  KernelShelf* shelf = nullptr;
};

// One placement measured end to end by the optimizer.
struct MeasuredPlacement {
  std::string strategy;  // "two-level", "single:dnnl", ...
  double ms = -1;        // median end-to-end latency; -1 when it could not be measured
  std::string note;      // why not
};

// Kernels built by one backend in one step of a compile, and the wall time their builds took
// (LLVM for native kernels, OpenVINO's compile for its regions, oneDNN's primitive creation).
struct KernelBuilds {
  std::string step;  // "measure" (candidates), "graph-level", "compare", "build" (the artifact)
  std::string backend;
  size_t builds = 0;
  double s = 0;
};

struct OptimizeResult {
  Placement placement;
  // With compare_baselines: the chosen placement first, then each single-backend baseline.
  std::vector<MeasuredPlacement> compared;
  size_t candidates = 0;   // candidates considered
  size_t measured = 0;     // kernels timed in this call
  size_t cached = 0;       // costs found in the cost database or shared with an identical group
  size_t evaluations = 0;  // end-to-end measurements
  // Choices the kernels built in this call made by timing alternatives (MeasuredChoices), and
  // those found remembered instead.
  size_t choices_measured = 0, choices_reused = 0;
  int generations = 0;     // of the graph-level search (two-level)
  // What the graph-level search chose: "evolved", a seed's name ("op-level", "single:NAME",
  // "greedy"), or "remembered" (an earlier search's placement, from the cost database).
  std::string chosen_by;
  // The steps the time budget cut short, each "STEP: what was left out and what stood in for
  // it" (STEP one of measure, graph-level, compare); empty when none was.
  std::vector<std::string> cut;
  // Seconds building the placement's kernels that were never built (estimated costs) should take,
  // at the build times per node the measurer saw; 0 without a measurer.
  double build_estimate_s = 0;
  // The kernels built to measure candidates (step "measure") and to evaluate placements end to
  // end (the step that evaluated them), with the time their builds took; with a measurer only.
  std::vector<KernelBuilds> builds;
};

// Chooses a backend for every node of `g` (Collage). Errors: an unknown strategy or backend, a
// node no selected backend nor the fallback can run, an unreadable cost database.
absl::StatusOr<OptimizeResult> optimize_detailed(const Context& ctx,
                                                 const BackendRegistry& backends, const Graph& g,
                                                 const PlacementOptions& options);
absl::StatusOr<Placement> optimize(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& g, const PlacementOptions& options);

// The code cache that goes with cost database `cost_db_path`: the folder "kernels" beside it;
// "" for no database.
std::string code_cache_dir(const std::string& cost_db_path);

// The device that keys the cost database for `options`: options.device, else this machine's
// device_fingerprint(), with "|target=CPU" appended for a named target.
absl::StatusOr<std::string> placement_device(const PlacementOptions& options);

// The measured choices (collage/measured_choices.h) of compiles with `options`: kept in its cost
// database for placement_device(options), or in memory without one. Errors: the database exists
// but cannot be read.
absl::StatusOr<std::unique_ptr<MeasuredChoices>> open_measured_choices(
    const PlacementOptions& options);

// "<cpu model name>|<cores> cores|<ISA flags>" of this machine from /proc/cpuinfo (the part of
// every cost-database key that names the device). Errors when /proc/cpuinfo cannot be read.
absl::StatusOr<std::string> device_fingerprint();

}  // namespace collage
