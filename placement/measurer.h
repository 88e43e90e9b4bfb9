// The measurer: a CostModel that builds each candidate with its backend and times the kernel on
// this machine with random inputs of the real shapes, interleaving candidates that compete, and
// keeps the results in the cost database.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collage/placement.h"
#include "collage/thread_pool.h"
#include "placement/build_tally.h"
#include "placement/cost_database.h"
#include "placement/timing.h"
#include "placement/work_estimate.h"

namespace collage {

struct MeasureOptions {
  SamplingOptions sampling;
  int warmup_runs = 2;
  // One sample repeats the kernel until it has run at least this long (short kernels would
  // otherwise be timed below the clock's resolution), at most 1000 times.
  double min_sample_ms = 0.2;
  // A database record whose spread is wider than this is shaky (measured on a busy machine) and
  // is measured once more; the new record replaces it and is trusted whatever its spread.
  double trusted_spread = 0.5;
  std::string target;      // BuildOptions::target of every kernel built
  std::string code_cache;  // BuildOptions::code_cache of every kernel built
  MeasuredChoices* choices = nullptr;  // BuildOptions::choices of every kernel built
  KernelShelf* shelf = nullptr;        // BuildOptions::shelf of every kernel built
  BuildTally* tally = nullptr;  // where every build is counted, in step "measure" (borrowed)
  // From this time on (now_ms()) kernels are sampled as `quick` says, with one warm-up run: the
  // placement's time budget is half spent. Infinite: never.
  double quick_after_ms = HUGE_VAL;
  SamplingOptions quick{/*min_samples=*/3, /*max_samples=*/5, /*settle_within=*/0.05,
                        /*max_ms=*/30};
  // From this time on (now_ms()) no kernel the database lacks is built nor timed, and a shaky
  // database record is used as it is. A kernel of `always_backend` (the fallback), or one covering
  // a node the fallback has no candidate for (Measurer::set_beyond_fallback), gets an estimate instead (WorkEstimator: its work at the rate of the fallback's
  // kernels measured so far), the others the error "not measured: the time budget was spent"
  // (DeadlineExceeded). A kernel whose build and timing would end after this time, as far as
  // the jobs of its backend so far tell, is not started either. Infinite: never.
  double skip_after_ms = HUGE_VAL;
  std::string always_backend;
  // When the kernels of the placement must be built by (now_ms()): from the time when building
  // the fallback's kernels for the nodes that none of its built kernels covers yet would not end
  // before it, as after skip_after_ms: the artifact needs those kernels, and they are the ones
  // nothing replaces. What they take is predicted from the fallback's builds so far that timed
  // no measured choice (WorkEstimator::build_ms), over fallback_build_threads: a build that
  // timed a Winograd choice builds and times three kernels, which neither the artifact build
  // after a cut (it times no choice) nor a later build of the same convolution (the choice is
  // remembered) does again. `graph_nodes`: the nodes of the graph the candidates are cut from.
  // Infinite: never.
  double end_ms = HUGE_VAL;
  size_t graph_nodes = 0;
  // How many of the fallback's kernels are compiled side by side: by the measurement (but for
  // a build that times a choice, Backend::build_times_choices), and by the artifact build once
  // the budget cut the measurement (ArtifactOptions::build_threads: native kernels on every core;
  // other backends' one at a time): the reserve above is their build time divided by it.
  int fallback_build_threads = 1;
};

// What is measured, exactly:
//  - a candidate's cost: the group is built once (Backend::build with as many threads as the
//    pool), its inputs get random values of their real types, its outputs fresh buffers; after
//    `warmup_runs` untimed runs, samples are taken (each the mean of k back-to-back runs, k chosen
//    from the warm-up so that a sample lasts min_sample_ms) until the median settles or a bound
//    is hit. A run is what the executor does: task_count() <= 1 runs task 0 on the calling
//    thread, more tasks are spread over the pool with parallel_for. The candidates of one
//    prefetch batch (those competing for the same first node) are sampled round-robin, so drift
//    of the machine hits them alike. Structurally identical groups (same backend, version and
//    canonical signature) are measured once.
//  - a boundary: the median time to copy a tensor of that many bytes from one buffer to another
//    (split over the pool like a parallel kernel would read and write it), measured once per
//    byte size. The executor passes dense row-major buffers between groups whatever their
//    backends, so no conversion kernel runs at a boundary (oneDNN's reorders into blocked
//    layouts happen inside its kernels and are part of their measured time); what a boundary
//    costs is this memory round trip, which a fused group avoids.
// Records are keyed by (device, backend, version, signature hash) in the database (boundaries
// under the pseudo-backend "boundary"), so a later compile measures none of them again, except
// shaky ones (spread above trusted_spread), which are measured once more and replaced.
class Measurer : public CostModel {
 public:
  // `db` (may be null) and `pool` are borrowed and must outlive the measurer.
  Measurer(MeasureOptions options, CostDatabase* db, std::string device, ThreadPool* pool);

  absl::StatusOr<Cost> cost(const Candidate& candidate, const ExtractedSubgraph& group) override;
  double boundary_ms(const TensorType& type) override;
  void prefetch(
      std::span<const std::pair<const Candidate*, const ExtractedSubgraph*>> batch) override;

  // From now on costs come from the database only (shaky records included): a kernel it lacks is
  // not built nor timed, its cost is an error. For a compile whose placement is already known.
  void set_cached_only(bool cached_only) { cached_only_ = cached_only; }

  // The wall time building candidate `c`'s kernel should take, from the kernel's own history
  // first: what its build took when this measurer built it, else what building a structurally
  // identical kernel took (in this compile, or when the cost database's record of it was
  // measured: BERT's OpenVINO regions of other layers, the same code with other weights), else
  // what the measurer's builds so far tell (WorkEstimator::kernel_build_ms; `anchored`: the group
  // holds a contraction, GroupWork::anchored). (A per-node rate from
  // small regions overstates a whole-model one: OpenVINO's compile has a fixed cost per region,
  // and MobileNetV2's whole-model region was predicted at several times its build, so the
  // search skipped single:openvino.) A build of this measurer that timed a choice is no such
  // history: it built and ran three kernels for a Winograd one, which a later build of the group
  // (the choice remembered) or of one structurally identical in other boundary layouts does not
  // (DenseNet-121's native convolutions: 1.5-2.5 s by such builds, 0.1 s when built again).
  double predicted_build_ms(const Candidate& c, bool anchored) const {
    const auto key = key_of_.find({c.backend, c.nodes});
    if (key == key_of_.end() || !timed_choice_.count(key->second)) {
      if (auto it = build_ms_.find({c.backend, c.nodes}); it != build_ms_.end())
        return it->second;
      if (key != key_of_.end())
        if (auto it = build_by_key_.find(key->second); it != build_by_key_.end())
          return it->second;
    }
    return estimator_.kernel_build_ms(c.backend->name(), c.nodes.count(), anchored);
  }
  // Whether this measurer built candidate `c`'s kernel (kept for a later build of the same
  // group: the native backend's code cache, oneDNN's primitive cache, the kernel shelf); a
  // group structurally identical to one measured was not built.
  bool built(const Candidate& c) const { return build_ms_.count({c.backend, c.nodes}) > 0; }
  // The nodes of the graph that no candidate of the fallback covers (strings, trees, an ML
  // operator only the dynamic module runs): once the budget is spent, a kernel covering one of
  // them gets an estimate like the fallback's, not "not measured", or no placement could cover
  // them (a 5 s compile of an SVM pipeline found none for its pairwise coupling).
  void set_beyond_fallback(NodeSet nodes) { beyond_fallback_ = std::move(nodes); }
  // Whether the budget cut measurement short (kernels skipped or estimated).
  bool cut_short() const { return skipped_ > 0 || estimated_ > 0; }

  size_t measured() const { return measured_; }      // kernels timed by this measurer
  size_t cached() const { return cached_; }          // costs answered without timing anything
  size_t remeasured() const { return remeasured_; }  // shaky database records measured again
  size_t skipped() const { return skipped_; }        // kernels left unmeasured (skip_after_ms)
  size_t estimated() const { return estimated_; }    // fallback kernels estimated instead
  // Database writes that failed (the costs are still used).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  struct Entry {
    absl::StatusOr<Cost> cost;
    bool served = false;  // cost() has returned it once
  };
  struct Job;
  std::string memo_key(const Backend& backend, uint64_t hash) const;
  // `build_ms`: what building the kernel took (-1: not built).
  void record(const Backend& backend, uint64_t hash, const std::string& signature,
              const absl::StatusOr<Cost>& cost, int measurements, double build_ms);
  Cost measure_copy(size_t bytes);
  // The entry of a kernel not measured because the budget is spent: an estimate for the
  // fallback backend, else DeadlineExceeded.
  Entry cut(const Candidate& candidate, const Graph& group);
  // Whether a kernel started now may still be built and timed (skip_after_ms, end_ms); a job of
  // `job_ms` predicted wall time.
  bool in_time(double job_ms) const;
  // Notes that the fallback has a kernel built (or in the code cache) for `c`'s nodes.
  void mark_built(const Candidate& c);
  // Builds the jobs' kernels (those still in time), the fallback's side by side on
  // fallback_build_threads threads; a job that is not built is finished, with its cost recorded.
  void build_jobs(std::vector<Job>& jobs, const BuildOptions& build);
  // Samples the unfinished jobs of backend `sampled` until each has settled, recording their costs.
  void sample(std::vector<Job>& jobs, const Backend* sampled);

  MeasureOptions options_;
  CostDatabase* db_;
  std::string device_;
  ThreadPool* pool_;
  std::map<std::string, Entry> memo_;
  std::map<size_t, double> boundary_;
  WorkEstimator estimator_;
  std::vector<bool> built_;  // per node of the graph: a fallback kernel covering it was built
  NodeSet beyond_fallback_;  // set_beyond_fallback
  std::map<std::pair<const Backend*, NodeSet>, double> build_ms_;  // builds' wall time, by candidate
  // The memo key of every candidate asked about, and the build times known by memo key (builds
  // of this measurer, records of the cost database).
  std::map<std::pair<const Backend*, NodeSet>, std::string> key_of_;
  std::map<std::string, double> build_by_key_;
  std::set<std::string> timed_choice_;  // memo keys of this measurer's builds that timed a choice
  size_t unbuilt_ = 0;
  size_t measured_ = 0, cached_ = 0, remeasured_ = 0, skipped_ = 0, estimated_ = 0;
  bool cached_only_ = false;
  std::vector<std::string> warnings_;
  const Backend* last_run_ = nullptr;  // the backend of the last kernel this measurer ran
};

}  // namespace collage
