// The evolutionary graph-level search: seeds, crossover, mutation, tournament selection,
// end-to-end fitness with a cache, and alternating re-measurement of the finalists.
#include "placement/evolutionary_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_format.h"
#include "core/str_cat.h"
#include "placement/timing.h"

namespace collage {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Runs a re-measurement samples, at most about (EndToEndOptions::sampling: a warm-up and up to
// 15 samples), until an evaluation measured how many it takes (runs_per_remeasure).
constexpr double kRunsPerRemeasure = 16;
using Genes = std::vector<size_t>;

struct Member {
  Genes genes;
  double fitness = kInf;
};

class Evolution {
 public:
  Evolution(const Graph& g, const BackendRegistry& backends, const CandidateSet& cands,
            const std::vector<double>& costs, PlacementEvaluator& evaluator,
            const EvolutionOptions& options,
            const std::function<void(const PlacementProgress&)>& progress)
      : g_(g),
        backends_(backends),
        cands_(cands),
        costs_(costs),
        evaluator_(evaluator),
        options_(options),
        progress_(progress),
        rng_(options.seed) {
    const auto& users = g.users();
    succ_.resize(g.nodes().size());
    for (size_t n = 0; n < g.nodes().size(); ++n)
      for (ValueId out : g.node(static_cast<NodeId>(n)).outputs)
        for (NodeId u : users[out]) succ_[n].push_back(u);
    deadline_ms_ = now_ms() + options.time_budget_s * 1000;
  }

  absl::StatusOr<EvolutionResult> run(const std::vector<EvolutionSeed>& seeds) {
    EvolutionResult result;
    if (absl::Status s = measure_seeds(seeds, result); !s.ok()) return s;
    fill_population();
    evolve(result);
    choose(seeds, result);
    result.evaluations = evaluations_;
    result.slowdown = slowdown_;
    best_ms_ = result.ms;
    report("done");
    return result;
  }

 private:
  // Seeds first: the result is compared with them. The early ones (EvolutionSeed::early) are
  // measured first, whatever the budget, then the others in order while the budget lasts; the
  // first seed, the first forced_seeds of them, and every one until one could be measured,
  // whatever the search's budget says.
  absl::Status measure_seeds(const std::vector<EvolutionSeed>& seeds, EvolutionResult& result) {
    num_seeds_ = static_cast<int>(seeds.size());
    std::vector<size_t> order;
    for (size_t i = 0; i < seeds.size(); ++i) {
      seed_genes_.push_back(canonical(seeds[i].genes));
      order.push_back(i);
    }
    std::stable_partition(order.begin(), order.end(), [&](size_t i) { return seeds[i].early; });
    result.seeds.resize(seeds.size());
    for (size_t i : order) {
      const Genes& genes = seed_genes_[i];
      const bool force =
          best_seed_ < 0 || seeds[i].early || static_cast<int>(i) < options_.forced_seeds;
      // An early seed while the first, measured whatever the deadline, waits: measured only when
      // both are predicted to end before the deadline (GoogLeNet, AVX2 host: three early seeds
      // took 3.8 s of the 2.3 s predicted, and the op-level evaluation after them ended 8 s past
      // the deadline). The first early seed is measured whatever (nothing is measured yet).
      const bool first_waits = seeds[i].early && i != 0 && !seeds[0].early && options_.predict_ms &&
                               !fitness_.count(seed_genes_[0]);
      const double reserve_ms = first_waits ? options_.predict_ms(seed_genes_[0]) : 0;
      const double f = evaluate(genes, force,
                                /*always=*/i == 0 || (seeds[i].early && !first_waits), reserve_ms);
      const bool skipped = !fitness_.count(genes);
      result.seeds[i] = {seeds[i].name, std::isfinite(f) ? f : -1,
                         std::isfinite(f) ? ""
                         : skipped        ? "the time budget was spent"
                                          : failure_of(genes)};
      if (std::isfinite(f) && (best_seed_ < 0 || f < fitness_.at(seed_genes_[best_seed_])))
        best_seed_ = static_cast<int>(i);
    }
    for (size_t i = 0; i < seeds.size(); ++i)
      if (std::none_of(population_.begin(), population_.end(),
                       [&](const Member& m) { return m.genes == seed_genes_[i]; }))
        population_.push_back({seed_genes_[i], fitness_.count(seed_genes_[i])
                                                   ? fitness_.at(seed_genes_[i])
                                                   : kInf});
    if (best_seed_ >= 0) return absl::OkStatus();
    std::string why;
    for (const MeasuredPlacement& m : result.seeds) why += str_cat("; ", m.strategy, ": ", m.note);
    return absl::FailedPreconditionError(
        str_cat("graph-level search: no seed placement could be measured", why));
  }

  // Mutants of the seeds, until the population is full.
  void fill_population() {
    for (int tries = 0; static_cast<int>(population_.size()) < options_.population &&
                        tries < 4 * options_.population && within_budget();
         ++tries) {
      const Member& parent = population_[pick(population_.size())];
      std::optional<Genes> child = mutate(parent.genes);
      if (!child || fitness_.count(*child)) continue;
      const double f = evaluate(*child);
      if (!fitness_.count(*child)) break;  // the budget ran out
      population_.push_back({*child, f});
    }
  }

  void evolve(EvolutionResult& result) {
    int stale = 0;  // generations in a row that bred nothing new
    while (within_budget() &&
           (options_.max_generations <= 0 || result.generations < options_.max_generations)) {
      generation_ = ++result.generations;
      std::vector<Member> children;
      for (int tries = 0; static_cast<int>(children.size()) < options_.population &&
                          tries < 4 * options_.population && within_budget();
           ++tries) {
        const Genes& a = tournament(population_);
        std::optional<Genes> child;
        if (uniform() < options_.crossover_rate) child = crossover(a, tournament(population_));
        if (!child || *child == a) child = mutate(a);
        if (!child || fitness_.count(*child)) continue;
        const double f = evaluate(*child);
        if (!fitness_.count(*child)) break;  // the budget ran out
        children.push_back({*child, f});
      }
      population_.insert(population_.end(), children.begin(), children.end());
      std::stable_sort(
          population_.begin(), population_.end(), [](const Member& x, const Member& y) {
            return x.fitness < y.fitness || (x.fitness == y.fitness && x.genes < y.genes);
          });
      if (population_.size() > static_cast<size_t>(options_.population))
        population_.resize(static_cast<size_t>(options_.population));
      report("evolve");
      stale = children.empty() ? stale + 1 : 0;
      if (stale == 3) {
        result.notes.push_back(str_cat("graph-level search: nothing new to breed after ",
                                       result.generations, " generations"));
        break;
      }
    }
    if (options_.max_generations <= 0 || result.generations < options_.max_generations)
      if (stale < 3 && !within_budget())
        result.notes.push_back(absl::StrFormat(
            "graph-level search stopped by the time budget (%g s)", options_.time_budget_s));
  }

  // Finalists: every seed (a seed's first measurement may have been unlucky) and the best evolved
  // placements that measured faster than the best seed, re-measured alternately; the fastest
  // wins, so an evolved placement wins only when it beat every seed.
  void choose(const std::vector<EvolutionSeed>& seeds, EvolutionResult& result) {
    const Genes& best_seed_genes = seed_genes_[best_seed_];
    const double seed_ms = fitness_.at(best_seed_genes);
    std::vector<Genes> finalists;
    std::vector<std::string> names;
    for (size_t i = 0; i < seed_genes_.size(); ++i) {
      if (!fitness_.count(seed_genes_[i]) || !std::isfinite(fitness_.at(seed_genes_[i])) ||
          std::find(finalists.begin(), finalists.end(), seed_genes_[i]) != finalists.end())
        continue;
      finalists.push_back(seed_genes_[i]);
      names.push_back(seeds[i].name);
    }
    std::set<Genes> seed_set(seed_genes_.begin(), seed_genes_.end());
    std::vector<std::pair<double, Genes>> evolved;
    for (const auto& [genes, f] : fitness_)
      if (!seed_set.count(genes) && f < seed_ms) evolved.push_back({f, genes});
    std::stable_sort(evolved.begin(), evolved.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (size_t i = 0; i < evolved.size() && i < static_cast<size_t>(options_.finalists); ++i) {
      finalists.push_back(evolved[i].second);
      names.push_back("evolved");
    }
    // The fastest by first measurement first: when the time allows fewer re-measurements than
    // finalists, they go to the placements likeliest to win.
    std::vector<size_t> order(finalists.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return fitness_.at(finalists[a]) < fitness_.at(finalists[b]);
    });

    result.genes = best_seed_genes;
    result.ms = seed_ms;
    result.origin = seeds[best_seed_].name;
    if (finalists.size() > 1) {
      std::vector<Placement> placements;
      std::vector<double> predicted;  // what re-measuring each takes: its runs, kernels built
      double round_ms = 0;
      for (size_t i : order) {
        placements.push_back(*placement_of(g_, backends_, cands_, costs_, finalists[i]));
        predicted.push_back(fitness_.at(finalists[i]) * runs_per_remeasure());
        round_ms += predicted.back();
      }
      report("finalists");
      // Two alternated rounds at least, past the deadline if need be (up to final_grace_s):
      // after the deadline one round, one sample each, decided (GoogLeNet, AVX2 host:
      // single:openvino kept once over a single:native that ran 1.3x faster in the bench). A
      // re-measurement is started only when it is predicted to end within that time (BERT-base:
      // two finalists of 4.3 s each, started 2 s before the deadline, took the compile 6.5 s
      // past its budget).
      const double end_ms =
          std::max(deadline_ms_, now_ms() + std::min(2 * round_ms, 1000 * options_.final_grace_s));
      std::vector<double> again =
          remeasure_alternately(placements, evaluator_, options_.final_rounds, end_ms,
                                &evaluations_, SIZE_MAX, &predicted);
      std::string line = "finalists re-measured:";
      int best = -1;
      std::vector<double> figure(again.size());
      for (size_t k = 0; k < order.size(); ++k) {
        const size_t i = order[k];
        const double first = fitness_.at(finalists[i]);
        // One the time left out competes with its first measurement.
        figure[k] = again[k] == kNotMeasured ? first : again[k];
        line += again[k] == kNotMeasured
                    ? absl::StrFormat(" %s not re-measured (first %.3f);", names[i], first)
                    : absl::StrFormat(" %s %.3f ms (first %.3f);", names[i], again[k], first);
        if (figure[k] >= 0 && (best < 0 || figure[k] < figure[best])) best = static_cast<int>(k);
      }
      line.pop_back();
      result.notes.push_back(line);
      if (best >= 0) {
        result.genes = finalists[order[best]];
        result.ms = figure[best];
        result.origin = names[order[best]];
      }
    }
    result.notes.push_back(absl::StrFormat(
        "graph-level search: %d generations, %d placements measured end to end, best seed %s "
        "%.3f ms",
        result.generations, evaluations_, seeds[best_seed_].name, seed_ms));
  }

  // ---- randomness (deterministic for the seed) ----
  size_t pick(size_t n) { return n <= 1 ? 0 : static_cast<size_t>(rng_() % n); }
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  // ---- individuals ----
  Genes canonical(Genes genes) const {
    std::sort(genes.begin(), genes.end(), [&](size_t a, size_t b) {
      return cands_[a].nodes.first() < cands_[b].nodes.first();
    });
    return genes;
  }

  bool usable(size_t c) const { return costs_[c] >= 0 && std::isfinite(costs_[c]); }

  bool runnable(const Genes& genes) const {
    std::vector<NodeSet> groups;
    NodeSet all(g_.nodes().size());
    size_t count = 0;
    for (size_t c : genes) {
      groups.push_back(cands_[c].nodes);
      all |= cands_[c].nodes;
      count += cands_[c].nodes.count();
    }
    return all.first_missing() < 0 && count == g_.nodes().size() && groups_acyclic(g_, groups);
  }

  // `keep` plus the op-level search's cheapest cover of the nodes they leave.
  std::optional<Genes> complete(Genes keep) const {
    std::vector<NodeSet> fixed;
    for (size_t c : keep) fixed.push_back(cands_[c].nodes);
    auto filled = op_level_search(g_, cands_, costs_, fixed, options_.repair);
    if (!filled.ok()) return std::nullopt;
    keep.insert(keep.end(), filled->chosen.begin(), filled->chosen.end());
    Genes out = canonical(std::move(keep));
    if (!runnable(out)) return std::nullopt;
    return out;
  }

  // ---- fitness ----
  // Whether there is time for another evaluation, keeping a reserve for the finalists'
  // re-measurements. Those only run placements whose kernels are already built, so the reserve is
  // counted in runs of the best placement (a re-measurement samples at most about
  // kRunsPerRemeasure runs), not in the mean evaluation time, which includes the kernel builds
  // of the first evaluations (seconds for a seed of generated code) and would use the whole
  // budget up before the first generation.
  bool within_budget() const {
    const double per_remeasure = best_ms_ > 0 ? best_ms_ * runs_per_remeasure() : 0;
    const double reserve = per_remeasure * static_cast<double>(options_.finalists + num_seeds_) *
                           std::max(options_.final_rounds, 1);
    // And the next evaluation itself, at least as long as the shortest so far took (one whose
    // kernels were all built already: a run of the placement, scored).
    const double next = std::isfinite(shortest_evaluation_ms_) ? shortest_evaluation_ms_ : 0;
    return now_ms() + reserve + next < deadline_ms_;
  }

  // The runs a re-measurement of a placement whose kernels are built takes, as measured.
  double runs_per_remeasure() const {
    return std::isfinite(runs_per_evaluation_) ? runs_per_evaluation_ : kRunsPerRemeasure;
  }

  // `force`: whatever within_budget says; `always`: whatever the deadline says too.
  // `reserve_ms`: predicted time of an evaluation that must still follow this one before the
  // deadline (scaled by the slowdown as this one's prediction).
  double evaluate(const Genes& genes, bool force = false, bool always = false,
                  double reserve_ms = 0) {
    if (auto it = fitness_.find(genes); it != fitness_.end()) return it->second;
    if (!force && !within_budget()) return kInf;
    const double predicted = options_.predict_ms ? options_.predict_ms(genes) : 0;
    if (!always && predicted > 0 && best_seed_ >= 0 &&
        now_ms() + (predicted + reserve_ms) * slowdown_ > deadline_ms_)
      return kInf;
    auto p = placement_of(g_, backends_, cands_, costs_, genes);
    double f = kInf;
    if (!p.ok()) {
      failures_[genes] = std::string(p.status().message());
    } else {
      const double start = now_ms();
      auto ms = evaluator_.latency_ms(*p);
      shortest_evaluation_ms_ = std::min(shortest_evaluation_ms_, now_ms() - start);
      if (ms.ok() && *ms > 0)
        runs_per_evaluation_ = std::min(runs_per_evaluation_, (now_ms() - start) / *ms);
      if (predicted > 0) slowdown_ = std::max(slowdown_, (now_ms() - start) / predicted);
      ++evaluations_;
      if (ms.ok())
        f = *ms;
      else
        failures_[genes] = std::string(ms.status().message());
    }
    fitness_[genes] = f;
    if (std::isfinite(f) && (best_ms_ < 0 || f < best_ms_)) best_ms_ = f;
    report("evolve");
    return f;
  }

  std::string failure_of(const Genes& genes) const {
    auto it = failures_.find(genes);
    return it == failures_.end() ? "not measured" : it->second;
  }

  void report(const char* phase) {
    if (!progress_) return;
    PlacementProgress p;
    p.phase = phase;
    p.measured = evaluations_;
    p.generation = generation_;
    p.best_ms = best_ms_;
    progress_(p);
  }

  const Genes& tournament(const std::vector<Member>& population) {
    size_t best = pick(population.size());
    for (int i = 1; i < options_.tournament; ++i) {
      size_t other = pick(population.size());
      if (population[other].fitness < population[best].fitness) best = other;
    }
    return population[best].genes;
  }

  // ---- operators ----
  std::optional<Genes> crossover(const Genes& a, const Genes& b) {
    // Shared groups with different backends: each from either parent.
    std::map<NodeSet, size_t> in_b;
    for (size_t c : b) in_b[cands_[c].nodes] = c;
    Genes child = a;
    bool changed = false;
    for (size_t& c : child) {
      auto it = in_b.find(cands_[c].nodes);
      if (it != in_b.end() && it->second != c && uniform() < 0.5) {
        c = it->second;
        changed = true;
      }
    }
    if (changed) return canonical(std::move(child));
    // One parent's groups before a cut node, the other's after it, the gap filled.
    const size_t n = g_.nodes().size();
    if (n < 2) return std::nullopt;
    const NodeId cut = static_cast<NodeId>(1 + pick(n - 1));
    Genes keep;
    for (size_t c : a)
      if (cands_[c].nodes.to_vector().back() < cut) keep.push_back(c);
    for (size_t c : b)
      if (cands_[c].nodes.first() >= cut) keep.push_back(c);
    return complete(std::move(keep));
  }

  std::optional<Genes> mutate(const Genes& genes) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::optional<Genes> child;
      switch (pick(4)) {
        case 0:
          child = merge(genes);
          break;
        case 1:
          child = split(genes);
          break;
        case 2:
          child = move(genes);
          break;
        default:
          child = insert(genes);
          break;
      }
      if (child && *child != genes) return child;
    }
    return std::nullopt;
  }

  std::optional<Genes> move(const Genes& genes) {
    const size_t i = pick(genes.size());
    std::vector<size_t> others;
    for (size_t c : cands_.with_nodes(cands_[genes[i]].nodes))
      if (c != genes[i] && usable(c)) others.push_back(c);
    if (others.empty()) return std::nullopt;
    Genes child = genes;
    child[i] = others[pick(others.size())];
    if (!runnable(child)) return std::nullopt;
    return child;
  }

  std::optional<Genes> merge(const Genes& genes) {
    const size_t i = pick(genes.size());
    std::vector<int> owner(g_.nodes().size(), -1);
    for (size_t k = 0; k < genes.size(); ++k)
      for (NodeId m : cands_[genes[k]].nodes.to_vector()) owner[m] = static_cast<int>(k);
    std::set<size_t> neighbours;
    for (size_t m = 0; m < g_.nodes().size(); ++m)
      for (NodeId u : succ_[m]) {
        const int a = owner[m], b = owner[u];
        if (a == b) continue;
        if (static_cast<size_t>(a) == i) neighbours.insert(static_cast<size_t>(b));
        if (static_cast<size_t>(b) == i) neighbours.insert(static_cast<size_t>(a));
      }
    std::vector<size_t> order(neighbours.begin(), neighbours.end());
    std::shuffle(order.begin(), order.end(), rng_);
    const Candidate& ci = cands_[genes[i]];
    for (size_t j : order) {
      const Candidate& cj = cands_[genes[j]];
      if (cj.backend != ci.backend) continue;
      const int merged = cands_.find(ci.nodes | cj.nodes, ci.backend);
      if (merged < 0 || !usable(static_cast<size_t>(merged))) continue;
      Genes child;
      for (size_t k = 0; k < genes.size(); ++k)
        if (k != i && k != j) child.push_back(genes[k]);
      child.push_back(static_cast<size_t>(merged));
      child = canonical(std::move(child));
      if (runnable(child)) return child;
    }
    return std::nullopt;
  }

  // A random candidate replaces every group it overlaps; what those leave is filled.
  std::optional<Genes> insert(const Genes& genes) {
    const size_t c = pick(cands_.size());
    if (!usable(c)) return std::nullopt;
    Genes keep;
    for (size_t k : genes)
      if (!cands_[k].nodes.intersects(cands_[c].nodes)) keep.push_back(k);
    keep.push_back(c);
    return complete(std::move(keep));
  }

  std::optional<Genes> split(const Genes& genes) {
    std::vector<size_t> multi;
    for (size_t k = 0; k < genes.size(); ++k)
      if (cands_[genes[k]].nodes.count() > 1) multi.push_back(k);
    if (multi.empty()) return std::nullopt;
    const size_t i = multi[pick(multi.size())];
    const NodeSet& whole = cands_[genes[i]].nodes;
    std::vector<size_t> parts;
    for (size_t c : cands_.starting_at(whole.first()))
      if (usable(c) && cands_[c].nodes != whole && cands_[c].nodes.is_subset_of(whole))
        parts.push_back(c);
    if (parts.empty()) return std::nullopt;
    Genes keep;
    for (size_t k = 0; k < genes.size(); ++k)
      if (k != i) keep.push_back(genes[k]);
    keep.push_back(parts[pick(parts.size())]);
    return complete(std::move(keep));
  }

  const Graph& g_;
  const BackendRegistry& backends_;
  const CandidateSet& cands_;
  const std::vector<double>& costs_;
  PlacementEvaluator& evaluator_;
  const EvolutionOptions& options_;
  const std::function<void(const PlacementProgress&)>& progress_;
  std::mt19937_64 rng_;
  std::vector<std::vector<NodeId>> succ_;
  std::map<Genes, double> fitness_;
  std::map<Genes, std::string> failures_;
  size_t evaluations_ = 0;
  double deadline_ms_ = 0, best_ms_ = -1;
  double shortest_evaluation_ms_ = HUGE_VAL;  // wall time of the quickest evaluation so far
  double slowdown_ = 1;  // the largest ratio of an evaluation's time to its prediction
  // The smallest ratio of an evaluation's wall time to the latency it measured: the runs an
  // evaluation of built kernels takes (the executor scorer profiles the kernels and measures
  // both executors: about 23 runs of BERT-base, 2026-11-27).
  double runs_per_evaluation_ = HUGE_VAL;
  int generation_ = 0;
  int num_seeds_ = 1;
  std::vector<Member> population_;
  std::vector<Genes> seed_genes_;
  int best_seed_ = -1;
};

}  // namespace

absl::StatusOr<Placement> placement_of(const Graph& g, const BackendRegistry& backends,
                                       const CandidateSet& candidates,
                                       const std::vector<double>& costs,
                                       const std::vector<size_t>& genes) {
  Placement p;
  for (size_t c : genes) {
    PlacedGroup group;
    group.nodes = candidates[c].nodes;
    group.backend = candidates[c].backend->name();
    group.origin = candidates[c].origin;
    group.cost_ms = c < costs.size() && std::isfinite(costs[c]) ? costs[c] : -1;
    p.groups.push_back(std::move(group));
  }
  if (absl::Status s = validate_placement(g, backends, p); !s.ok()) return s;
  return p;
}

std::vector<double> remeasure_alternately(const std::vector<Placement>& placements,
                                          PlacementEvaluator& evaluator, int rounds,
                                          double deadline_ms, size_t* evaluations, size_t always,
                                          const std::vector<double>* predicted_ms) {
  std::vector<std::vector<double>> samples(placements.size());
  std::vector<bool> failed(placements.size(), false);
  std::vector<double> took(placements.size(), 0);  // wall time of the last measurement
  for (int r = 0; r < std::max(rounds, 1) && (r == 0 || now_ms() < deadline_ms); ++r) {
    for (size_t k = 0; k < placements.size(); ++k) {
      const size_t i = r % 2 == 0 ? k : placements.size() - 1 - k;
      if (failed[i] || (r == 0 && i >= always && now_ms() >= deadline_ms)) continue;
      if (r == 0 && predicted_ms && now_ms() + (*predicted_ms)[i] > deadline_ms) continue;
      // A later round measures again only what the first measured, when it would end before
      // the deadline as the last measurement took.
      if (r > 0 && (samples[i].empty() || now_ms() + took[i] > deadline_ms)) continue;
      if (evaluations) ++*evaluations;
      const double start = now_ms();
      auto ms = evaluator.latency_ms(placements[i]);
      took[i] = now_ms() - start;
      if (ms.ok())
        samples[i].push_back(*ms);
      else
        failed[i] = true;
    }
  }
  std::vector<double> out;
  for (size_t i = 0; i < placements.size(); ++i)
    out.push_back(failed[i]             ? -1
                  : samples[i].empty() ? kNotMeasured
                                       : summarize_samples(samples[i]).median);
  return out;
}

absl::StatusOr<EvolutionResult> evolutionary_search(
    const Graph& g, const BackendRegistry& backends, const CandidateSet& candidates,
    const std::vector<double>& costs, const std::vector<EvolutionSeed>& seeds,
    PlacementEvaluator& evaluator, const EvolutionOptions& options,
    const std::function<void(const PlacementProgress&)>& progress) {
  if (seeds.empty()) return absl::InvalidArgumentError("graph-level search: no seed placements");
  Evolution evolution(g, backends, candidates, costs, evaluator, options, progress);
  return evolution.run(seeds);
}

}  // namespace collage
