// optimize(): the Collage optimizer's driver — backends, candidates, costs, the op-level search,
// the graph-level search, explanations.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/kernel_shelf.h"
#include "collage/placement.h"
#include "collage/thread_pool.h"
#include "core/str_cat.h"
#include "placement/alternatives.h"
#include "placement/backend_selection.h"
#include "placement/baselines.h"
#include "placement/build_tally.h"
#include "placement/build_tracker.h"
#include "placement/candidates.h"
#include "placement/comparison.h"
#include "placement/cost_database.h"
#include "placement/cost_model.h"
#include "placement/end_to_end.h"
#include "placement/evolutionary_search.h"
#include "placement/measurer.h"
#include "placement/op_level_search.h"
#include "placement/search_memo.h"

namespace collage {
namespace {

// Shares of the placement's time budget: candidates are sampled briefly once this much of it is
// spent, and this much of it is kept for the comparison with the single-backend placements.
constexpr double kMeasureShare = 0.5;
constexpr double kCompareShare = 0.15;
// Once this much of the budget is spent, candidates the cost database lacks are measured only on
// the fallback backend (which covers every node); the others are left to a later compile.
constexpr double kSkipShare = 0.75;
// Whole runs one end-to-end evaluation takes, at most about: a warm-up and up to 15 samples in
// process, or the artifact executor's kernel profiles and its executors' runs (at least 5 of
// each); what a placement's evaluation is predicted to cost before it is started.
constexpr double kRunsPerEvaluation = 20;
// A single-backend seed whose evaluation is predicted to take at most this share of the budget
// (its kernels all built by the measurer: runs only) is measured before the others and whatever
// is left of the budget, so that the search never keeps a placement without the single
// libraries measured beside it (EvolutionSeed::early).
constexpr double kCheapSeedShare = 0.03;
// The op-level search with boundaries charged by backend (its states also hold the backends
// beside the uncovered nodes) gives up after this share of the budget, and the search charging
// every boundary stands in (Inception-v3: 176,000 states in 1.1 s; BERT-base: 2 million, not
// enough, in 75 s).
constexpr double kChargedSearchShare = 0.05;

bool same_groups(const Placement& a, const Placement& b) {
  if (a.groups.size() != b.groups.size()) return false;
  std::vector<std::pair<NodeSet, std::string>> x, y;
  for (const PlacedGroup& g : a.groups) x.push_back({g.nodes, g.backend});
  for (const PlacedGroup& g : b.groups) y.push_back({g.nodes, g.backend});
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// A baseline placement as candidate indices; groups that are not candidates (a cap dropped them)
// are added to `cands`.
std::vector<size_t> genes_of(const Placement& p, const BackendRegistry& registry,
                             CandidateSet& cands) {
  std::vector<size_t> genes;
  for (const PlacedGroup& group : p.groups)
    genes.push_back(cands.add({group.nodes, registry.find(group.backend), group.origin}));
  return genes;
}

class Optimizer {
 public:
  Optimizer(const Context& ctx, const BackendRegistry& registry, const Graph& g,
            const PlacementOptions& options)
      : ctx_(ctx), registry_(registry), g_(g), options_(options) {}

  absl::StatusOr<OptimizeResult> run() {
    if (absl::Status s = check_strategy(options_.strategy, registry_); !s.ok()) return s;
    auto selected = select_backends(registry_, options_);
    if (!selected.ok()) return selected.status();
    selected_ = *selected;
    const int threads = options_.num_threads > 0
                            ? options_.num_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    pool_ = std::make_unique<ThreadPool>(threads);
    start_ms_ = now_ms() - 1000 * std::max(0.0, options_.spent_s);
    BuildOptions build;
    build.channel_block = options_.channel_block;
    channel_block_ = channel_block(build);

    OptimizeResult result;
    if (absl::Status s = setup_choices(); !s.ok()) return s;
    const size_t choices_measured = choices_->measured(), choices_reused = choices_->reused();
    if (options_.strategy == "greedy" || options_.strategy.starts_with("single:")) {
      auto p = place_baseline(options_.strategy, g_, registry_, baseline_options());
      if (!p.ok()) return p.status();
      result.placement = *std::move(p);
    } else {
      if (absl::Status s = setup_cost_model(); !s.ok()) return s;
      collect(result);
      // A placement an earlier search chose needs no kernel measured: the database's costs
      // (for the report) are enough.
      std::optional<std::pair<std::vector<size_t>, CostRecord>> remembered;
      if (options_.strategy == "two-level") remembered = remembered_search(memo_key());
      if (remembered && measurer_) measurer_->set_cached_only(true);
      if (options_.strategy == "two-level" && !remembered) single_seeds_ = single_seeds();
      cost_all();
      if (remembered) {
        result.placement = reuse(*remembered);
        result.chosen_by = "remembered";
      } else {
        auto op = op_level(result);
        if (!op.ok()) return op.status();
        result.placement = *std::move(op);
        fit_builds(result);
        if (options_.strategy == "two-level") {
          if (absl::Status s = two_level(result); !s.ok()) return s;
        }
      }
    }
    if (options_.compare_baselines) compare(result);
    result.build_estimate_s = predicted_builds_ms(placement_genes(result.placement)) / 1000;
    result.choices_measured = choices_->measured() - choices_measured;
    result.choices_reused = choices_->reused() - choices_reused;
    if (own_choices_)
      for (const std::string& w : own_choices_->warnings())
        result.placement.notes.push_back(str_cat("cost database: ", w));
    if (measurer_) {
      result.measured = measurer_->measured();
      result.cached = measurer_->cached();
      if (measurer_->skipped() || measurer_->estimated())
        result.cut.push_back(str_cat(
            "measure: ", measurer_->estimated(), " kernels of the fallback (", options_.fallback,
            ") not built, their costs estimated from their work; ", measurer_->skipped(),
            " candidates of other backends left out (a compile with a larger budget measures "
            "them)"));
      if (measurer_->remeasured())
        result.placement.notes.push_back(str_cat(measurer_->remeasured(),
                                                 " shaky cost-database records (spread above ",
                                                 options_.trusted_spread, ") measured again"));
      for (const std::string& w : measurer_->warnings())
        result.placement.notes.push_back(str_cat("cost database: ", w));
      result.builds = tally_.entries();
    } else {
      for (const CandidateCost& c : costs_) result.cached += c.from_cache;
    }
    return result;
  }

 private:
  // Whether single:NAME is a seed of the graph-level search and a row of the comparison: every
  // backend but the reference, which exists to define what a graph means. A generated-code
  // fallback (native) is a contender like the others: single:native runs it all.
  static bool is_single_baseline(const Backend& b) { return b.name() != kReferenceBackend; }
  // Whether `b` runs any group of single:NAME placement `p` (a backend that claims nothing in
  // the graph, e.g. trees in a CNN, makes a copy of single:FALLBACK, not a baseline of its own).
  static bool runs_any(const Placement& p, const Backend& b) {
    return std::any_of(p.groups.begin(), p.groups.end(),
                       [&](const PlacedGroup& g) { return g.backend == b.name(); });
  }

  // When the placement's budget ends (now_ms()).
  double deadline_ms() const { return start_ms_ + options_.time_budget_s * 1000; }
  // The predicted evaluation of a seed measured whatever the budget (kCheapSeedShare).
  double cheap_seed_ms() const { return kCheapSeedShare * options_.time_budget_s * 1000; }

  // What evaluating placement `genes` end to end should cost, in milliseconds: building the
  // kernels that nothing built yet (unbuilt_ms) and kRunsPerEvaluation runs at its estimated
  // cost. Infinite when a kernel's cost is unknown and the budget cut the measurement (its runs
  // cannot be predicted: single:eigen's ResNet-50 ran 1 s a run under load). 0 without a
  // measurer (a cost model given by the caller).
  double predicted_evaluation_ms(const std::vector<size_t>& genes) {
    if (!measurer_) return 0;
    const double runs = estimate(genes);
    if (!std::isfinite(runs) && measurer_->cut_short()) return HUGE_VAL;
    return predicted_builds_ms(genes) + (std::isfinite(runs) ? runs * kRunsPerEvaluation : 0);
  }

  // What building the kernels of `genes` should still cost, in milliseconds (0 without a
  // measurer): what an evaluation or the artifact build must spend before it runs anything.
  // The native kernels are built side by side on the pool's threads when no build times a
  // choice under the executor scorer (driver/executor_latency.cpp), the others one by one.
  double predicted_builds_ms(const std::vector<size_t>& genes) {
    if (!measurer_) return 0;
    const std::vector<Layout> layouts = layouts_of(genes);
    double native_ms = 0, other_ms = 0;
    for (size_t c : genes)
      (cands_[c].backend->name() == kNativeBackend ? native_ms : other_ms) +=
          unbuilt_ms(c, &layouts);
    const bool side_by_side = options_.executor_latency && measurer_->cut_short();
    return other_ms + native_ms / (side_by_side ? std::max(1, pool_->num_threads()) : 1);
  }

  // The layouts the kernels of placement `genes` are built with (assign_layouts; empty: plain).
  std::vector<Layout> layouts_of(const std::vector<size_t>& genes) const {
    absl::StatusOr<Placement> p = placement_of(g_, registry_, cands_, {}, genes);
    if (!p.ok()) return {};
    return assign_layouts(ctx_, registry_, g_, *p, channel_block_);
  }

  // What building candidate `c`'s kernel should still cost, its boundary in the layouts
  // `layouts` (null: those it was measured with, measured_layouts, or any an evaluation built it
  // with): nothing when an evaluation built it so, nor when the measurer built it in those
  // layouts (it is kept: the code cache, oneDNN's primitive cache, the kernel shelf), nor for a
  // kernel of the fallback measured in those layouts (the code cache keeps its code, which a
  // structurally identical group shares); else its predicted build (an OpenVINO region
  // structurally identical to one measured but with other weights is compiled anew; a native
  // group measured plain where the placement blocks its input is other code).
  double unbuilt_ms(size_t c, const std::vector<Layout>* layouts = nullptr) {
    if (!measurer_) return 0;
    const Candidate& cand = cands_[c];
    // A kernel kept only on the kernel shelf (an OpenVINO region) may be gone once the shelf let
    // go of its backend's kernels past its bound (GPT-2, 620 MiB of constants: the op-level
    // evaluation and single:openvino's compiled their whole-model regions again, 12.9 s that
    // were predicted as none, and the compile took 82.9 s of a 60 s budget).
    const bool kept =
        !options_.shelf || options_.shelf->let_go(cand.backend->name()) == 0;
    if (layouts) {
      const std::vector<ValueId> placed = blocked_boundary(g_, cand.nodes, *layouts);
      if (kept && tracker_ && tracker_->built(cand.nodes, cand.backend->name(), placed))
        return 0;
      if (placed != measured_boundary(c)) return measurer_->predicted_build_ms(cand, anchored(c));
    } else if (kept && tracker_ && tracker_->built(cand.nodes, cand.backend->name())) {
      return 0;
    }
    if (kept && measurer_->built(cand)) return 0;
    const bool estimated = costs_[c].samples == 0 && !costs_[c].from_cache;
    if (cand.backend->name() == options_.fallback && !estimated) return 0;
    return measurer_->predicted_build_ms(cand, anchored(c));
  }

  // Whether candidate `c`'s group holds a convolution or a matrix product (GroupWork::anchored).
  bool anchored(size_t c) const {
    for (NodeId n : cands_[c].nodes.to_vector())
      if (is_contraction(g_.node(n))) return true;
    return false;
  }

  // The blocked boundary (blocked_boundary) candidate `c` was measured with, once per candidate.
  const std::vector<ValueId>& measured_boundary(size_t c) {
    auto it = measured_boundaries_.find(c);
    if (it != measured_boundaries_.end()) return it->second;
    std::vector<ValueId> boundary;
    if (channel_block_ > 0) {
      absl::StatusOr<ExtractedSubgraph> plain = extract_subgraph(ctx_, g_, cands_[c].nodes);
      if (plain.ok())
        boundary = blocked_boundary(
            g_, cands_[c].nodes,
            measured_layouts(ctx_, g_, cands_[c], *plain, channel_block_, neighbour_chains_));
    }
    return measured_boundaries_.emplace(c, std::move(boundary)).first->second;
  }

  // The op-level placement's kernels that nothing built yet are built by the artifact build or
  // the first evaluation (BERT: the measurer compiled one layer's OpenVINO regions, the
  // placement had 145, 186 s to build at load 13). When building them is predicted not to end
  // before the placement's budget does, the op-level search runs again without the unbuilt
  // candidates of the backend whose builds cost the most, as long as that leaves less to build.
  // The fallback's are never left out: nothing replaces them, and when they alone do not fit,
  // leaving out others (whose groups would go to the fallback) cannot help.
  void fit_builds(OptimizeResult& result) {
    if (!measurer_ || op_genes_.empty()) return;
    std::set<std::string> left_out;
    const auto unbuilt = [&](const std::vector<size_t>& genes,
                             std::map<std::string, double>& by_backend) {
      double total = 0;
      const std::vector<Layout> layouts = layouts_of(genes);
      for (size_t c : genes) {
        const double ms = unbuilt_ms(c, &layouts);
        total += ms;
        if (ms > 0) by_backend[cands_[c].backend->name()] += ms;
      }
      return total;
    };
    std::map<std::string, double> by_backend;
    double total = unbuilt(op_genes_, by_backend);
    for (;;) {
      const double left_ms = deadline_ms() - now_ms();
      const double fallback_ms = by_backend[options_.fallback];
      by_backend.erase(options_.fallback);
      if (total <= left_ms || fallback_ms >= left_ms || by_backend.empty()) return;
      const auto worst = std::max_element(
          by_backend.begin(), by_backend.end(),
          [](const auto& a, const auto& b) { return a.second < b.second; });
      left_out.insert(worst->first);
      std::vector<CandidateCost> costs = costs_;
      for (size_t c = 0; c < costs.size(); ++c)
        if (left_out.count(cands_[c].backend->name()) && unbuilt_ms(c) > 0) costs[c].kernel_ms = -1;
      auto found = search_op_level(costs);
      if (!found.ok()) return;
      std::map<std::string, double> again;
      const double total_again = unbuilt(found->chosen, again);
      if (total_again >= total) return;
      result.cut.push_back(absl::StrFormat(
          "build: the op-level placement's kernels not built yet would take about %.1f s to "
          "build (%s: %.1f s), %.1f s were left; the op-level search ran again without %s's "
          "unbuilt candidates (%.1f s to build)",
          total / 1000, worst->first, worst->second / 1000, std::max(0.0, left_ms / 1000),
          worst->first, total_again / 1000));
      op_genes_ = found->chosen;
      Placement p = make_placement(op_genes_, "op-level");
      p.estimated_ms = found->cost;
      p.notes = notes_;
      result.placement = std::move(p);
      total = total_again;
      by_backend = std::move(again);
    }
  }

  // The candidates of `p`'s groups that have costs (all of them, for a placement made of this
  // search's candidates).
  std::vector<size_t> placement_genes(const Placement& p) const {
    std::vector<size_t> genes;
    for (const PlacedGroup& group : p.groups) {
      const int c = cands_.find(group.nodes, registry_.find(group.backend));
      if (c >= 0 && static_cast<size_t>(c) < costs_.size()) genes.push_back(static_cast<size_t>(c));
    }
    return genes;
  }

  // What the graph-level search may spend: the placement's budget less what was spent and a
  // reserve for the comparison.
  double search_budget_s() const {
    const double left = options_.time_budget_s - (now_ms() - start_ms_) / 1000;
    const double reserve = options_.compare_baselines ? kCompareShare * options_.time_budget_s : 0;
    return std::max(0.0, left - reserve);
  }

  BaselineOptions baseline_options() const {
    BaselineOptions b;
    b.fallback = options_.fallback;
    b.backends = options_.backends;
    b.rules.max_depth = options_.max_depth;
    return b;
  }

  // The evaluator, its evaluations' builds noted (BuildTracker).
  PlacementEvaluator& evaluator() {
    if (!tracker_)
      tracker_ = std::make_unique<BuildTracker>(inner_evaluator(), ctx_, registry_, g_,
                                                channel_block_);
    return *tracker_;
  }

  PlacementEvaluator& inner_evaluator() {
    if (options_.evaluator) return *options_.evaluator;
    if (!end_to_end_) {
      EndToEndOptions e2e;
      e2e.executor = options_.executor;
      e2e.target = options_.target;
      e2e.code_cache = options_.code_cache;
      e2e.shelf = options_.shelf;
      e2e.choices = choices_;
      // Once the budget cut the kernels' measurement, a placement measured end to end makes no
      // choice by timing (a Winograd one: three builds and their timing per convolution) that
      // its prediction did not count.
      e2e.measure_choices = !(measurer_ && measurer_->cut_short());
      e2e.executor_latency = options_.executor_latency;
      e2e.channel_block = channel_block_;
      if (options_.executor != PlacementExecutor::sequential && !options_.executor_latency)
        notes_.push_back(
            "no executor scorer was given (PlacementOptions::executor_latency): placements are "
            "measured in process, one kernel after another");
      // Their builds counted by step (BuildTally), as the measurer's are.
      tallied_ = std::make_unique<BackendRegistry>(tallied_backends(registry_, tally_));
      end_to_end_ =
          std::make_unique<EndToEndMeasurer>(ctx_, *tallied_, g_, pool_.get(), e2e, options_.seed);
    }
    return *end_to_end_;
  }

  // The store of the kernels' measured choices: the caller's, else one over the cost database
  // (opened here; the cost model opens its own view) or in memory.
  absl::Status setup_choices() {
    if (options_.choices) {
      choices_ = options_.choices;
      return absl::OkStatus();
    }
    auto store = open_measured_choices(options_);
    if (!store.ok()) return store.status();
    own_choices_ = *std::move(store);
    choices_ = own_choices_.get();
    return absl::OkStatus();
  }

  absl::Status setup_cost_model() {
    if (options_.cost_model) {
      model_ = options_.cost_model;
      return absl::OkStatus();
    }
    auto device = placement_device(options_);
    if (!device.ok()) return device.status();
    device_ = *device;
    if (!options_.cost_db_path.empty()) {
      auto db = CostDatabase::open(options_.cost_db_path);
      if (!db.ok()) return db.status();
      db_ = std::make_unique<CostDatabase>(*std::move(db));
      for (const std::string& w : db_->warnings()) notes_.push_back(str_cat("cost database: ", w));
    }
    MeasureOptions measure;
    measure.trusted_spread = options_.trusted_spread;
    measure.quick_after_ms = start_ms_ + options_.time_budget_s * 1000 * kMeasureShare;
    measure.skip_after_ms = start_ms_ + options_.time_budget_s * 1000 * kSkipShare;
    measure.always_backend = options_.fallback;
    measure.end_ms = deadline_ms();
    measure.graph_nodes = g_.nodes().size();
    // The measurement, and the artifact build after a cut, compile native kernels on every core
    // (the pool's threads, as ArtifactOptions::build_threads), other backends' one at a time.
    if (options_.fallback == kNativeBackend) measure.fallback_build_threads = pool_->num_threads();
    measure.target = options_.target;
    measure.code_cache = options_.code_cache;
    measure.shelf = options_.shelf;
    measure.tally = &tally_;
    measure.choices = choices_;
    measurer_ = std::make_unique<Measurer>(measure, db_.get(), device_, pool_.get());
    model_ = measurer_.get();
    return absl::OkStatus();
  }

  void report(const char* phase, size_t measured = 0, size_t total = 0) {
    // The graph-level search reports its own phases (evolve, finalists) through the progress
    // callback; its evaluations' builds all count as the graph-level step's.
    tally_.set_step(std::string_view(phase) == "seeds" ? "graph-level" : phase);
    if (!options_.progress) return;
    PlacementProgress p;
    p.phase = phase;
    p.measured = measured;
    p.total = total;
    options_.progress(p);
  }

  void collect(OptimizeResult& result) {
    report("candidates");
    GraphReachability reach(g_);
    cands_ =
        collect_candidates(g_, reach, selected_, {options_.max_depth, options_.max_candidates});
    for (const std::string& n : cands_.notes()) notes_.push_back(n);
    result.candidates = cands_.size();
    if (measurer_) {
      NodeSet beyond(g_.nodes().size());
      for (size_t n = 0; n < g_.nodes().size(); ++n) beyond.insert(static_cast<NodeId>(n));
      for (size_t c = 0; c < cands_.size(); ++c)
        if (cands_[c].backend->name() == options_.fallback) beyond = beyond.minus(cands_[c].nodes);
      measurer_->set_beyond_fallback(std::move(beyond));
    }
  }

  // Costs every candidate, those of the single-backend seeds first: each seed's estimate decides
  // whether it is measured end to end, and a seed whose candidates the budget's cut-off left
  // unmeasured sorts last (MobileNetV2 with a 40 s budget: the whole-model OpenVINO candidate,
  // costed after the cut-off, was never measured, and a native placement 1.8x slower was chosen).
  void cost_all() {
    std::vector<bool> seeded(cands_.size());
    for (const EvolutionSeed& seed : single_seeds_)
      for (size_t c : seed.genes) seeded[c] = true;
    std::vector<size_t> early, late;
    for (size_t c = 0; c < cands_.size(); ++c) (seeded[c] ? early : late).push_back(c);
    const CostingOptions costing{options_.charge_boundaries, channel_block_};
    cost_candidates(ctx_, g_, cands_, early, *model_, costing, costs_, [&](size_t done, size_t) {
      report("measure", done, cands_.size());
    });
    cost_candidates(ctx_, g_, cands_, late, *model_, costing, costs_, [&](size_t done, size_t) {
      report("measure", early.size() + done, cands_.size());
    });
    size_t unusable = 0;
    for (const CandidateCost& c : costs_) unusable += c.kernel_ms < 0;
    notes_.push_back(str_cat(
        cands_.size(), " candidates from ", selected_.size(), " backends",
        unusable ? str_cat(", ", unusable, " unusable (build or run failed, or not measured)")
                 : std::string()));
  }

  CostKey memo_key() const { return search_memo_key(device_, g_, options_, selected_); }

  // Seeds of the graph-level search may bring candidates the caps dropped: cost them too.
  void cost_new_candidates() {
    if (costs_.size() < cands_.size())
      cost_candidates(ctx_, g_, cands_, costs_.size(), *model_,
                      {options_.charge_boundaries, channel_block_}, costs_);
  }

  Placement make_placement(const std::vector<size_t>& genes, std::string strategy) const {
    Placement p = *placement_of(g_, registry_, cands_, {}, genes);
    p.strategy = std::move(strategy);
    for (PlacedGroup& group : p.groups) {
      const int c = cands_.find(group.nodes, registry_.find(group.backend));
      group.cost_ms = costs_[static_cast<size_t>(c)].kernel_ms;
      group.alternatives = alternatives_of(g_, cands_, costs_, static_cast<size_t>(c));
    }
    return p;
  }

  absl::StatusOr<Placement> op_level(OptimizeResult& result) {
    report("op-level");
    auto found = search_op_level(costs_);
    if (found.status().code() == absl::StatusCode::kResourceExhausted) {
      // The search was cut: the greedy baseline stands in for its result.
      auto greedy = place_greedy(g_, registry_, baseline_options());
      if (!greedy.ok()) return greedy.status();
      notes_.push_back(str_cat(found.status().message(), "; the greedy placement stands in"));
      op_genes_ = genes_of(*greedy, registry_, cands_);
      cost_new_candidates();
      Placement p = make_placement(op_genes_, "op-level");
      p.notes = notes_;
      return p;
    }
    if (!found.ok()) return found.status();
    op_genes_ = found->chosen;
    Placement p = make_placement(found->chosen, "op-level");
    double kernels = 0;
    for (size_t c : found->chosen) kernels += costs_[c].kernel_ms;
    p.estimated_ms = found->cost;
    notes_.push_back(absl::StrFormat(
        "op-level search: %d states, estimate %.3f ms = kernels %.3f ms + boundaries %.3f ms",
        found->states, found->cost, kernels, found->cost - kernels));
    for (const std::string& n : found->notes) notes_.push_back(n);
    p.notes = notes_;
    return p;
  }

  // The placement an earlier two-level search with the same key chose, as candidate indices;
  // nullopt when the database has none (or a record that no longer fits the graph, noted).
  std::optional<std::pair<std::vector<size_t>, CostRecord>> remembered_search(const CostKey& key) {
    if (!db_) return std::nullopt;
    std::optional<CostRecord> r = db_->lookup(key);
    if (!r) return std::nullopt;
    auto groups = decode_groups(r->signature, g_.nodes().size());
    if (!groups.ok()) {
      notes_.push_back(str_cat("cost database: a remembered search result is unusable (",
                               groups.status().message(), "): searching again"));
      return std::nullopt;
    }
    std::vector<size_t> genes;
    for (auto& [nodes, backend] : *groups) {
      const Backend* b = registry_.find(backend);
      if (!b) return std::nullopt;
      const int c = cands_.find(nodes, b);
      genes.push_back(c >= 0 ? static_cast<size_t>(c) : cands_.add({nodes, b, "remembered"}));
    }
    if (!placement_of(g_, registry_, cands_, {}, genes).ok()) return std::nullopt;
    return std::make_pair(std::move(genes), *std::move(r));
  }

  Placement reuse(const std::pair<std::vector<size_t>, CostRecord>& remembered) {
    Placement p = make_placement(remembered.first, "two-level");
    p.estimated_ms = remembered.second.ms;
    notes_.push_back(absl::StrFormat(
        "graph-level search: the placement an earlier search with the same model, options, "
        "budget and backends chose (%.3f ms then), reused from the cost database",
        remembered.second.ms));
    p.notes = notes_;
    reused_ = true;
    return p;
  }

  // A seed's estimated cost: the sum of its candidates' measured kernels and the boundaries
  // between groups of different backends (charged_boundaries); infinite when a kernel could not
  // be measured.
  double estimate(const std::vector<size_t>& genes) {
    double ms = 0;
    for (size_t c : genes) {
      if (costs_[c].kernel_ms < 0) return INFINITY;
      ms += costs_[c].kernel_ms;
    }
    const BoundaryCharges* by_backend = charges();
    return by_backend ? ms + charged_boundaries(g_, cands_, *by_backend, genes) : ms;
  }

  // The boundary charges by backend of the candidates so far (null when boundaries are not
  // charged): the op-level search charges a value passed between groups only where their
  // backends differ. (Charging every group for every value it reads, EfficientNet-B0's 116
  // native groups paid 2.3 ms that a run never spends, and OpenVINO's one region none; the
  // search chose OpenVINO, which ran 18.4-18.9 ms against native's 11.2-11.8.)
  const BoundaryCharges* charges() {
    if (!options_.charge_boundaries) return nullptr;
    if (value_ms_.empty()) value_ms_ = boundary_value_ms(g_, *model_);
    if (charges_.backend.size() != cands_.size()) charges_ = boundary_charges(cands_, value_ms_);
    return &charges_;
  }

  // The op-level search over `costs`, its boundaries charged by backend; when that search is
  // cut by its state limit (each state also holds the backends beside the uncovered nodes), the
  // search charging every boundary, noted.
  absl::StatusOr<OpLevelResult> search_op_level(const std::vector<CandidateCost>& costs) {
    OpLevelOptions op;
    op.max_states = options_.max_states;
    const BoundaryCharges* by_backend = charges();
    if (!by_backend) return op_level_search(g_, cands_, edge_costs(costs), {}, op);
    OpLevelOptions charged = op;
    charged.deadline_ms = now_ms() + kChargedSearchShare * options_.time_budget_s * 1000;
    auto found = op_level_search(g_, cands_, kernel_costs(costs), {}, charged, by_backend);
    if (found.status().code() != absl::StatusCode::kResourceExhausted) return found;
    notes_.push_back(str_cat(found.status().message(),
                             " with boundaries charged by backend; searched again charging "
                             "every boundary"));
    return op_level_search(g_, cands_, edge_costs(costs), {}, op);
  }

  // The single-backend placements that seed the graph-level search (their candidates join the
  // set when the caps dropped them, e.g. a whole-model region).
  std::vector<EvolutionSeed> single_seeds() {
    std::vector<EvolutionSeed> seeds;
    for (const Backend* b : selected_) {
      if (!is_single_baseline(*b)) continue;
      auto p = place_single(g_, registry_, b->name(), baseline_options());
      if (!p.ok())
        notes_.push_back(str_cat("seed single:", b->name(), " skipped: ", p.status().message()));
      else if (runs_any(*p, *b))
        seeds.push_back({str_cat("single:", b->name()), genes_of(*p, registry_, cands_)});
    }
    return seeds;
  }

  struct MeasuredSeed {
    size_t index;  // into the seeds
    double ms;
  };

  // When the op-level placement cannot be measured end to end within the budget, the
  // single-backend seeds whose evaluation fits are measured instead, once each, and the fastest
  // is chosen over it unless the op-level estimate rests on measured kernels only and is lower.
  // (Inception-v3 on an AVX2 target: 159 native kernels estimated from their work put the
  // op-level placement at 61 ms; it ran 117 ms, single:openvino 76 ms.)
  std::optional<MeasuredSeed> measured_seed_over_estimate(const std::vector<EvolutionSeed>& seeds,
                                                          OptimizeResult& result) {
    if (!measurer_) return std::nullopt;
    std::vector<size_t> index;
    std::vector<Placement> placements;
    std::vector<double> predicted;
    const double left_ms = deadline_ms() - now_ms();
    double cheap_ms = 0;  // the cheap seeds' predicted evaluations, measured whatever is left
    for (size_t s = 1; s < seeds.size(); ++s) {
      if (!seeds[s].name.starts_with("single:")) continue;
      const double p = predicted_evaluation_ms(seeds[s].genes);
      const bool cheap = p <= cheap_seed_ms();
      if (!(p <= left_ms) && !cheap) continue;
      if (cheap) cheap_ms += p;
      index.push_back(s);
      placements.push_back(make_placement(seeds[s].genes, seeds[s].name));
      predicted.push_back(p);
    }
    if (placements.empty()) return std::nullopt;
    // Alternated rounds, as the search's finalists: one noisy sample does not choose. The cheap
    // seeds get twice their predicted time past a spent budget (a second round, as they took).
    size_t evaluations = 0;
    const double end_ms = std::max(deadline_ms(), now_ms() + 2 * cheap_ms);
    const std::vector<double> ms =
        remeasure_alternately(placements, evaluator(), 3, end_ms, &evaluations, 0, &predicted);
    result.evaluations += evaluations;
    std::optional<MeasuredSeed> best;
    for (size_t k = 0; k < ms.size(); ++k) {
      notes_.push_back(ms[k] >= 0 ? absl::StrFormat("seed %s: %.3f ms end to end",
                                                    seeds[index[k]].name, ms[k])
                                  : str_cat("seed ", seeds[index[k]].name, ": not measured"));
      if (ms[k] >= 0 && (!best || ms[k] < best->ms)) best = MeasuredSeed{index[k], ms[k]};
    }
    const bool op_measured = std::all_of(op_genes_.begin(), op_genes_.end(), [&](size_t c) {
      return costs_[c].samples > 0 || costs_[c].from_cache;
    });
    if (best && op_measured && estimate(op_genes_) < best->ms) return std::nullopt;
    return best;
  }

  absl::Status two_level(OptimizeResult& result) {
    report("seeds");
    const CostKey memo_key = this->memo_key();
    std::vector<EvolutionSeed> seeds = {{"op-level", op_genes_}};
    seeds.insert(seeds.end(), single_seeds_.begin(), single_seeds_.end());
    if (auto p = place_greedy(g_, registry_, baseline_options()); p.ok())
      seeds.push_back({"greedy", genes_of(*p, registry_, cands_)});
    cost_new_candidates();
    // The single-backend seeds cheapest by estimate first: with the op-level placement, the
    // first of them is measured however little of the budget is left, so that the result is
    // never chosen without the best single library measured beside it (MobileNetV2 under load:
    // the budget went to the candidates, only the op-level mix was measured, and it ran 1.27x
    // the CPU time of single:openvino).
    std::stable_sort(seeds.begin() + 1, seeds.end(),
                     [&](const EvolutionSeed& a, const EvolutionSeed& b) {
                       const bool sa = a.name.starts_with("single:");
                       const bool sb = b.name.starts_with("single:");
                       if (sa != sb) return sa;
                       return sa && estimate(a.genes) < estimate(b.genes);
                     });

    // A seed is measured whatever the search's own budget only when its evaluation fits in what
    // is left of the placement's: without the op-level one, the search is not run.
    const double left_ms = deadline_ms() - now_ms();
    const double op_ms = predicted_evaluation_ms(op_genes_);
    if (op_ms > left_ms) {
      result.cut.push_back(absl::StrFormat(
          "graph-level: not run (measuring the op-level placement end to end would take about "
          "%.1f s, %.1f s were left); the op-level placement, by its candidates' costs, stands",
          op_ms / 1000, std::max(0.0, left_ms / 1000)));
      result.chosen_by = "op-level";
      if (std::optional<MeasuredSeed> seed = measured_seed_over_estimate(seeds, result)) {
        result.placement = make_placement(seeds[seed->index].genes, "two-level");
        result.placement.estimated_ms = seed->ms;
        result.chosen_by = seeds[seed->index].name;
        notes_.push_back(absl::StrFormat(
            "chosen: %s, %.3f ms measured end to end, over the op-level placement's %.3f ms "
            "estimated from kernels the budget did not all measure",
            seeds[seed->index].name, seed->ms, estimate(op_genes_)));
        remember(memo_key, result.placement, seed->ms, result.evaluations);
      } else {
        remember(memo_key, result.placement, estimate(op_genes_), 0);
      }
      result.placement.notes = notes_;
      return absl::OkStatus();
    }
    const bool single_first = seeds.size() > 1 && seeds[1].name.starts_with("single:");
    const double single_ms = single_first ? predicted_evaluation_ms(seeds[1].genes) : 0;
    const bool single_fits = single_first && op_ms + single_ms <= left_ms;
    if (measurer_)
      notes_.push_back(absl::StrFormat(
          "graph-level: evaluations predicted at %.1f s (op-level)%s, %.1f s left", op_ms / 1000,
          single_first ? absl::StrFormat(" and %.1f s (%s)", single_ms / 1000, seeds[1].name)
                       : std::string(),
          left_ms / 1000));
    // Measured first, whatever the budget: the single-backend seeds whose evaluations cost
    // little, and the one estimated fastest when its evaluation and the op-level one's both fit
    // in what is left. When they do not, it is measured right after the op-level one, whatever the
    // search's budget, if its evaluation costs no more than the op-level one's and its prediction
    // then, the op-level evaluation's builds done, fits before the deadline (GoogLeNet: the budget
    // cut the measurer before single:native's kernels were all built, the op-level evaluation
    // built 100 kernels, and single:native was never measured; Inception-v3: single:openvino, the
    // second seed, was not measured in the search's 5 s after the op-level one; DenseNet-121:
    // single:native measured whatever the deadline after an op-level evaluation that shared few
    // of its 192 native kernels' layouts took the compile 9.5 s past its budget).
    if (measurer_)
      for (size_t s = 1; s < seeds.size() && seeds[s].name.starts_with("single:"); ++s) {
        const double p = s == 1 ? single_ms : predicted_evaluation_ms(seeds[s].genes);
        seeds[s].early = p <= cheap_seed_ms() || (s == 1 && single_fits);
      }
    const bool single_forced = single_first && (single_fits || single_ms <= op_ms);
    if (single_first && !seeds[1].early)
      result.cut.push_back(str_cat(
          "graph-level: seed ", seeds[1].name, " measured only if ",
          single_forced ? "its evaluation, predicted again after the op-level one's, fits before "
                          "the search's deadline"
                        : "the search's budget allows",
          " (its evaluation and the op-level one's would not both fit in what was left)"));

    EvolutionOptions evo;
    evo.population = options_.population;
    evo.max_generations = options_.max_generations;
    evo.forced_seeds = single_forced ? 2 : 1;
    if (measurer_)
      evo.predict_ms = [this](const std::vector<size_t>& genes) {
        return predicted_evaluation_ms(genes);
      };
    evo.time_budget_s = search_budget_s();
    evo.seed = options_.seed;
    evo.repair.max_states = options_.max_states;
    auto found = evolutionary_search(g_, registry_, cands_, edge_costs(costs_), seeds, evaluator(),
                                     evo, options_.progress);
    if (!found.ok()) return found.status();
    result.evaluations = found->evaluations;
    slowdown_ = found->slowdown;
    result.generations = found->generations;
    result.chosen_by = found->origin;
    Placement p = make_placement(found->genes, "two-level");
    p.estimated_ms = found->ms;
    for (const MeasuredPlacement& m : found->seeds) {
      const auto seed = std::find_if(seeds.begin(), seeds.end(),
                                     [&](const EvolutionSeed& s) { return s.name == m.strategy; });
      const double by_candidates = seed == seeds.end() ? INFINITY : estimate(seed->genes);
      const std::string estimated =
          std::isfinite(by_candidates)
              ? absl::StrFormat(" (by its candidates' costs %.3f ms)", by_candidates)
              : std::string(" (a candidate's cost unknown)");
      notes_.push_back(m.ms >= 0 ? absl::StrFormat("seed %s: %.3f ms end to end%s", m.strategy,
                                                   m.ms, estimated)
                                 : str_cat("seed ", m.strategy, ": not measured: ", m.note,
                                           estimated));
    }
    for (const std::string& n : found->notes) notes_.push_back(n);
    notes_.push_back(str_cat("chosen: ", found->origin));
    // Kept even when the budget cut the search short: the budget is part of the key, so the same
    // compile again gets the same placement without measuring, and a larger budget searches again.
    remember(memo_key, p, found->ms, found->evaluations);
    p.notes = notes_;
    result.placement = std::move(p);
    return absl::OkStatus();
  }

  void remember(const CostKey& key, const Placement& p, double ms, size_t evaluations) {
    if (!db_) return;
    CostRecord memo{key, encode_groups(p), ms};
    memo.samples = static_cast<int>(evaluations);
    memo.timestamp = static_cast<int64_t>(std::time(nullptr));
    if (absl::Status s = db_->append(memo); !s.ok())
      notes_.push_back(str_cat("cost database: the search result was not kept: ", s.message()));
  }

  // The comparison's rows are kept in the database under the search's key, so that a compile
  // that reuses the search's placement shows them without measuring anything.
  CostKey compare_key() const {
    const CostKey search = memo_key();
    return CostKey{search.device, "compare:two-level", "1", search.hash};
  }

  void compare(OptimizeResult& result) {
    if (reused_ && db_)
      if (std::optional<CostRecord> r = db_->lookup(compare_key()))
        if (auto rows = decode_compared(r->signature)) {
          result.compared = *std::move(rows);
          result.placement.notes.push_back(
              "comparison: measured by the compile that chose the placement, reused from the "
              "cost database");
          decide_by_comparison(result);
          return;
        }
    compare_measured(result);
    if (db_ && options_.strategy == "two-level") {
      // The rows carry the figures; the record's own must not be negative (a chosen placement
      // the budget left unmeasured).
      CostRecord r{compare_key(), encode_compared(result.compared),
                   std::max(result.compared[0].ms, 0.0)};
      r.timestamp = static_cast<int64_t>(std::time(nullptr));
      if (absl::Status s = db_->append(r); !s.ok())
        result.placement.notes.push_back(
            str_cat("cost database: the comparison was not kept: ", s.message()));
    }
    decide_by_comparison(result);
  }

  // Two-level only: the other strategies are what the user asked for.
  void decide_by_comparison(OptimizeResult& result) {
    if (options_.strategy == "two-level")
      adopt_faster_baseline(result, g_, registry_, baseline_options());
  }

  // The chosen placement and every single-backend baseline, measured alternately; a baseline
  // identical to the chosen placement is measured once, as the chosen one.
  void compare_measured(OptimizeResult& result) {
    std::vector<Placement> placements = {result.placement};
    std::vector<MeasuredPlacement> rows = {{result.placement.strategy, -1, ""}};
    std::vector<size_t> measured_as = {0};
    std::vector<MeasuredPlacement> failed;
    for (const Backend* b : selected_) {
      if (!is_single_baseline(*b)) continue;
      const std::string name = str_cat("single:", b->name());
      if (name == result.placement.strategy) continue;
      auto p = place_single(g_, registry_, b->name(), baseline_options());
      if (!p.ok()) {
        failed.push_back({name, -1, std::string(p.status().message())});
        continue;
      }
      if (!runs_any(*p, *b)) continue;
      if (same_groups(*p, result.placement)) {
        rows.push_back({name, -1, "the chosen placement"});
        measured_as.push_back(0);
        continue;
      }
      measured_as.push_back(placements.size());
      placements.push_back(*std::move(p));
      rows.push_back({name, -1, ""});
    }
    report("compare");
    // Up to three alternating rounds while the placement's budget lasts, each placement first
    // measured only when its evaluation, as predicted, ends within it.
    size_t evaluations = 0;
    std::vector<double> predicted;
    for (const Placement& p : placements)
      predicted.push_back(predicted_evaluation_ms(placement_genes(p)) * slowdown_);
    // The chosen placement's kernels that nothing built yet are the artifact's to build: their
    // time is kept back from the baselines.
    const double end_ms = deadline_ms() - predicted_builds_ms(placement_genes(result.placement));
    std::vector<double> ms = remeasure_alternately(placements, evaluator(), 3, end_ms,
                                                   &evaluations, /*always=*/0, &predicted);
    size_t unmeasured = 0;
    for (double m : ms) unmeasured += m == kNotMeasured;
    if (unmeasured)
      result.cut.push_back(str_cat("compare: ", unmeasured, " of ", placements.size(),
                                   " placements not measured (no figure in their rows)"));
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].ms = std::max(ms[measured_as[i]], -1.0);
      if (ms[measured_as[i]] == kNotMeasured)
        rows[i].note = "not measured: the time budget was spent";
      else if (rows[i].ms < 0)
        rows[i].note = "failed to build or run";
    }
    result.evaluations += evaluations;
    rows.insert(rows.end(), failed.begin(), failed.end());
    result.compared = std::move(rows);
  }

  const Context& ctx_;
  const BackendRegistry& registry_;
  const Graph& g_;
  const PlacementOptions& options_;
  std::vector<const Backend*> selected_;
  std::unique_ptr<ThreadPool> pool_;
  double start_ms_ = 0;
  std::string device_;
  std::unique_ptr<CostDatabase> db_;
  std::unique_ptr<Measurer> measurer_;
  std::unique_ptr<EndToEndMeasurer> end_to_end_;
  std::unique_ptr<BuildTracker> tracker_;
  std::map<size_t, std::vector<ValueId>> measured_boundaries_;  // measured_boundary's
  std::map<NodeId, absl::StatusOr<ExtractedSubgraph>> neighbour_chains_;  // measured_layouts'
  BuildTally tally_;                          // the builds of the measurer and the evaluations
  std::unique_ptr<BackendRegistry> tallied_;  // registry_'s backends counting into tally_
  std::unique_ptr<MeasuredChoices> own_choices_;
  MeasuredChoices* choices_ = nullptr;  // own_choices_ or PlacementOptions::choices
  CostModel* model_ = nullptr;
  CandidateSet cands_;
  std::vector<CandidateCost> costs_;
  std::vector<double> value_ms_;  // charges(): what passing each value between groups costs
  BoundaryCharges charges_;       // charges(), for cands_ as it was last asked
  std::vector<size_t> op_genes_;
  std::vector<EvolutionSeed> single_seeds_;  // two-level: the single-backend seeds, costed first
  std::vector<std::string> notes_;
  int32_t channel_block_ = 0;  // PlacementOptions::channel_block, resolved
  bool reused_ = false;  // the placement is one an earlier search chose
  double slowdown_ = 1;  // EvolutionResult::slowdown: evaluations take this much over predicted
};

}  // namespace

absl::StatusOr<OptimizeResult> optimize_detailed(const Context& ctx,
                                                 const BackendRegistry& backends, const Graph& g,
                                                 const PlacementOptions& options) {
  Optimizer optimizer(ctx, backends, g, options);
  return optimizer.run();
}

absl::StatusOr<Placement> optimize(const Context& ctx, const BackendRegistry& backends,
                                   const Graph& g, const PlacementOptions& options) {
  auto r = optimize_detailed(ctx, backends, g, options);
  if (!r.ok()) return r.status();
  return std::move(r->placement);
}

}  // namespace collage
