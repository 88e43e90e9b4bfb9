// The graph-level placement search (Collage §4.3): an evolutionary search over placements whose
// fitness is the measured end-to-end latency of the whole model.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/placement.h"
#include "placement/candidates.h"
#include "placement/op_level_search.h"

namespace collage {

struct EvolutionOptions {
  int population = 16;
  int max_generations = 0;  // 0: only the time budget bounds the search
  double time_budget_s = 60;
  uint64_t seed = 0;
  int tournament = 3;
  double crossover_rate = 0.5;
  int finalists = 3;      // best evolved individuals re-measured against the seeds
  int final_rounds = 3;   // alternating re-measurements per finalist
  // How far past the deadline the finalists' re-measurement may go, at most (it takes two rounds
  // when they fit); a finalist's re-measurement is started only when it is predicted to end
  // within it, and one left out competes with its first measurement.
  double final_grace_s = 5;
  // The first seeds measured whatever the search's budget (at least one, and more only as long as
  // none failed to measure): the result is compared with them, so the ones a tight budget must
  // not skip come first (optimize: the op-level placement, then the single-backend placement
  // estimated fastest). The first seed is measured whatever the deadline, too.
  int forced_seeds = 1;
  // What evaluating a placement (candidate indices) should take, in milliseconds; null: not
  // predicted. With it, an evaluation is started only when it is predicted to end before the
  // search's deadline (forced seeds too, but for the first one, the early ones and any before a
  // seed could be measured), the prediction scaled by the largest ratio of an evaluation's time to its
  // prediction so far (on a loaded machine the kernels' builds and runs take longer than the
  // measurer saw).
  std::function<double(const std::vector<size_t>&)> predict_ms;
  OpLevelOptions repair;  // the op-level search that fills the gaps crossover and split leave
};

// A starting placement: candidate indices covering the graph (e.g. the op-level result, each
// single-backend baseline, greedy).
struct EvolutionSeed {
  std::string name;
  std::vector<size_t> genes;
  // Measured before the other seeds, whatever the budget: a seed whose evaluation costs little,
  // or that the result must be compared with (GoogLeNet, AVX2 host: the op-level seed's
  // evaluation built 100 kernels and spent the budget, and single:native, 1.4x faster, was never
  // measured nor chosen). Whatever the deadline too, but for the early seeds after the first
  // while the first seed (measured whatever the deadline) waits: each of them only when it and
  // the first seed are predicted (EvolutionOptions::predict_ms, scaled by the slowdown so far)
  // to end before the deadline.
  bool early = false;
};

struct EvolutionResult {
  std::vector<size_t> genes;  // the chosen placement's candidates, by first node
  double ms = -1;             // its end-to-end latency (re-measured when it was a finalist)
  std::string origin;         // the seed's name, or "evolved"
  size_t evaluations = 0;     // end-to-end measurements, re-measurements included
  int generations = 0;
  std::vector<MeasuredPlacement> seeds;  // each seed's first end-to-end measurement
  std::vector<std::string> notes;
  // The largest ratio of an evaluation's time to EvolutionOptions::predict_ms's figure; 1 when
  // none was predicted.
  double slowdown = 1;
};

// Individuals are sets of candidates that cover every node once and can run in some order. The
// population starts from the seeds (and mutants of them), then each generation breeds
// `population` children: tournament selection; crossover (with probability crossover_rate) that
// either takes each group both parents share from either parent's backend, or joins one parent's
// groups before a random node with the other's after it, the gap filled by the op-level search;
// then mutation (always when crossover did not change anything): merge a group with a
// neighbouring group of the same backend when that backend has a candidate for the union, split a
// group (a smaller candidate holding its first node, the rest filled by the op-level search),
// move a group to another backend with a candidate for exactly its nodes, or insert a random
// candidate in place of the groups it overlaps (what they leave filled by the op-level search).
// Parents and children compete for the next generation by fitness (measured end-to-end latency,
// cached per placement). The search stops at max_generations or when the time budget, less the time
// the finalists need, is spent. The finalists (every seed, since a seed's first measurement may
// have been unlucky, and the best evolved placements that measured faster than the best seed) are
// re-measured in alternating order, and the one with the lowest re-measured median is returned:
// an evolved placement only when it beat every seed, so the result is never slower than the best
// seed as measured. Deterministic for a seed and a sequence of measured values.
absl::StatusOr<EvolutionResult> evolutionary_search(
    const Graph& g, const BackendRegistry& backends, const CandidateSet& candidates,
    const std::vector<double>& costs, const std::vector<EvolutionSeed>& seeds,
    PlacementEvaluator& evaluator, const EvolutionOptions& options,
    const std::function<void(const PlacementProgress&)>& progress = nullptr);

// The placement made of candidates `genes`, validated and in executable order; group costs from
// `costs` (negative when unknown). InvalidArgument when they do not form a runnable partition.
absl::StatusOr<Placement> placement_of(const Graph& g, const BackendRegistry& backends,
                                       const CandidateSet& candidates,
                                       const std::vector<double>& costs,
                                       const std::vector<size_t>& genes);

// Measures each placement `rounds` times, alternating the order every round (forward, then
// backward), and returns each one's median; -1 for a placement that failed, kNotMeasured for one
// the deadline left out.
// The first `always` placements are measured once whatever the time, the others in the first
// round only before `deadline_ms` (now_ms()); a later round measures again those the first did,
// each only when it would end before it as its last measurement took. `evaluations`,
// when given, grows by the measurements made. `predicted_ms`, when given (one per placement):
// what a placement's first measurement is expected to take (its kernels built, its runs); it
// is started only when it is expected to end before the deadline, `always` or not.
inline constexpr double kNotMeasured = -2;
std::vector<double> remeasure_alternately(const std::vector<Placement>& placements,
                                          PlacementEvaluator& evaluator, int rounds,
                                          double deadline_ms = HUGE_VAL,
                                          size_t* evaluations = nullptr,
                                          size_t always = SIZE_MAX,
                                          const std::vector<double>* predicted_ms = nullptr);

}  // namespace collage
