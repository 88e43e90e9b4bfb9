// The measurer: builds candidates, times them interleaved, caches by signature and database.
#include "placement/measurer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include "core/parallel_ranges.h"
#include "core/str_cat.h"

namespace collage {
namespace {

// The pause before sampling a backend's kernels after another backend's ran: what OpenVINO's TBB
// workers spin after a run (about 1-2 ms of a core, measured after a SqueezeNet inference).
constexpr double kTeamsSettleMs = 3;

}  // namespace

namespace {

constexpr std::string_view kBoundaryBackend = "boundary";
constexpr std::string_view kBoundaryVersion = "memcpy/1";

// One run of a kernel, as the executor runs it.
absl::Status run_kernel(Kernel& k, void* const* args, ThreadPool& pool) {
  const int32_t n = k.task_count();
  if (n <= 1) return k.run_task(args, 0);
  std::mutex mu;
  absl::Status first;
  parallel_for_ranges(pool, n, [&](int64_t t) {
    absl::Status s = k.run_task(args, static_cast<int32_t>(t));
    if (s.ok()) return;
    std::lock_guard<std::mutex> lock(mu);
    if (first.ok()) first = s;
  });
  return first;
}

// Sizes known only at run time, or strings (whose kernels run through the strings module's
// kernel_run_strings, never task by task on made-up buffers).
bool has_dynamic_values(const Graph& g) {
  for (const Value& v : g.values())
    if (v.type.is_dynamic() || v.type.dtype == DType::str) return true;
  return false;
}

int repetitions(double one_run_ms, double min_sample_ms) {
  if (one_run_ms <= 0) return 1000;
  return static_cast<int>(std::clamp(std::ceil(min_sample_ms / one_run_ms), 1.0, 1000.0));
}

}  // namespace

struct Measurer::Job {
  const Candidate* candidate;
  const ExtractedSubgraph* group;
  std::string key, signature;
  uint64_t hash = 0;
  int measurements = 1;  // of this key, this one included
  std::unique_ptr<Kernel> kernel = nullptr;
  std::vector<Tensor> buffers = {};
  std::vector<void*> args = {};
  int reps = 1;
  Sampler sampler = Sampler(SamplingOptions{});
  GroupWork work = {};
  double spent_ms = 0;  // wall time building, warming and sampling it
  double build_ms = -1;  // wall time building it
  bool finished = false;
};

Measurer::Measurer(MeasureOptions options, CostDatabase* db, std::string device, ThreadPool* pool)
    : options_(options),
      db_(db),
      device_(std::move(device)),
      pool_(pool),
      built_(options_.graph_nodes, false),
      unbuilt_(options_.graph_nodes) {}

bool Measurer::in_time(double job_ms) const {
  const double now = now_ms();
  if (now + job_ms > options_.skip_after_ms) return false;
  if (!std::isfinite(options_.end_ms)) return true;
  const double reserve = estimator_.build_ms(options_.always_backend, unbuilt_) /
                         std::max(1, options_.fallback_build_threads);
  return now + job_ms + reserve <= options_.end_ms;
}

void Measurer::mark_built(const Candidate& c) {
  if (c.backend->name() != options_.always_backend) return;
  for (NodeId n : c.nodes.to_vector())
    if (static_cast<size_t>(n) < built_.size() && !built_[n]) {
      built_[n] = true;
      --unbuilt_;
    }
}

std::string Measurer::memo_key(const Backend& backend, uint64_t hash) const {
  return str_cat(backend.name(), "\x1f", backend.version(), "\x1f", hash);
}

void Measurer::record(const Backend& backend, uint64_t hash, const std::string& signature,
                      const absl::StatusOr<Cost>& cost, int measurements, double build_ms) {
  memo_[memo_key(backend, hash)] = {cost, false};
  if (build_ms >= 0) build_by_key_[memo_key(backend, hash)] = build_ms;
  if (!cost.ok()) return;
  ++measured_;
  if (!db_) return;
  CostRecord r;
  r.key = {device_, backend.name(), backend.version(), hash};
  r.signature = signature;
  r.ms = cost->ms;
  r.samples = cost->samples;
  r.spread = cost->spread;
  r.timestamp = static_cast<int64_t>(std::time(nullptr));
  r.measurements = measurements;
  r.build_ms = build_ms;
  if (absl::Status s = db_->append(r); !s.ok()) warnings_.push_back(std::string(s.message()));
}

void Measurer::prefetch(
    std::span<const std::pair<const Candidate*, const ExtractedSubgraph*>> batch) {
  std::vector<Job> jobs;
  const double now = now_ms();
  const bool quick = now >= options_.quick_after_ms;
  const bool late = !in_time(0);
  for (const auto& [candidate, group] : batch) {
    const Backend& backend = *candidate->backend;
    std::string signature = canonical_signature(group->graph);
    const uint64_t hash = stable_hash(signature);
    std::string key = memo_key(backend, hash);
    key_of_[{&backend, candidate->nodes}] = key;
    if (auto it = memo_.find(key); it != memo_.end()) {
      // The same code as a kernel measured already: in the code cache.
      if (it->second.cost.ok() && it->second.cost->samples > 0) mark_built(*candidate);
      continue;
    }
    if (std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) { return j.key == key; }))
      continue;
    // A group with sizes known only at run time (NonZero's count, ...) or with strings cannot be
    // run on made-up inputs: it is not measured, and costs nothing, as node_flops counts it (the
    // backends that run such groups are few, and they cost about the same).
    if (has_dynamic_values(group->graph)) {
      memo_[key] = {Cost{0, 0, 0, false}, false};
      continue;
    }
    int measurements = 1;
    if (db_) {
      auto r = db_->lookup({device_, backend.name(), backend.version(), hash});
      if (r && r->signature == signature) {
        if (r->build_ms >= 0) build_by_key_.emplace(key, r->build_ms);
        if (r->spread <= options_.trusted_spread || r->measurements > 1 || cached_only_ || late) {
          memo_[key] = {Cost{r->ms, r->samples, r->spread, true}, false};
          mark_built(*candidate);  // in the code cache since it was measured
          continue;
        }
        ++remeasured_;
        measurements = r->measurements + 1;
      }
    }
    if (cached_only_) {
      memo_[key] = {absl::UnavailableError("not measured: the placement is known"), false};
      continue;
    }
    if (late) {
      memo_[key] = cut(*candidate, group->graph);
      continue;
    }
    Job job{candidate, group, std::move(key), std::move(signature), hash, measurements};
    job.work = group_work(group->graph);
    job.sampler = Sampler(quick ? options_.quick : options_.sampling);
    jobs.push_back(std::move(job));
  }

  // Build every kernel of the batch, then warm each up.
  BuildOptions build;
  build.num_threads = pool_->num_threads();
  build.target = options_.target;
  build.code_cache = options_.code_cache;
  build.choices = options_.choices;
  build.shelf = options_.shelf;
  build_jobs(jobs, build);
  for (Job& job : jobs) {
    if (job.finished) continue;
    const Backend& backend = *job.candidate->backend;
    const Graph& sub = job.group->graph;
    for (size_t i = 0; i < sub.inputs().size(); ++i)
      job.buffers.push_back(random_tensor(sub.value(sub.inputs()[i]).type, job.hash + i));
    for (ValueId v : sub.outputs())
      job.buffers.emplace_back(sub.value(v).type.dtype, sub.value(v).type.shape);
    for (Tensor& t : job.buffers) job.args.push_back(t.raw());
    double last = 0;
    absl::Status s;
    for (int i = 0; i < (quick ? 1 : std::max(1, options_.warmup_runs)) && s.ok(); ++i) {
      const double t0 = now_ms();
      s = run_kernel(*job.kernel, job.args.data(), *pool_);
      last_run_ = &backend;
      last = now_ms() - t0;
      job.spent_ms += last;
    }
    if (!s.ok()) {
      estimator_.observe(backend.name(), job.work, 0, job.spent_ms);
      record(backend, job.hash, job.signature,
             absl::Status(s.code(), str_cat("run failed: ", s.message())), job.measurements, job.build_ms);
      job.finished = true;
      continue;
    }
    job.reps = repetitions(last, options_.min_sample_ms);
  }

  // One backend's jobs at a time, after a pause when the kernel run before was another
  // backend's: the thread teams a backend leaves spinning after a run (OpenVINO's TBB workers)
  // take the cores the next kernel needs (BERT-base with openvino taking part: native's
  // 3072-wide projections sampled between OpenVINO regions cost 7.3-7.8 ms, alone 3.9-4.9).
  std::vector<const Backend*> order;
  if (last_run_ != nullptr) order.push_back(last_run_);
  for (const Job& job : jobs)
    if (!job.finished &&
        std::find(order.begin(), order.end(), job.candidate->backend) == order.end())
      order.push_back(job.candidate->backend);
  for (const Backend* backend : order) sample(jobs, backend);
}

void Measurer::build_jobs(std::vector<Job>& jobs, const BuildOptions& build) {
  // As the artifact build does: the fallback's kernels are compiled side by side on
  // fallback_build_threads threads, the calling one among them once it has built the other
  // backends' kernels (which keep to it). But a build that times a choice runs alone, first.
  // Each job is started if it is still in time when a thread takes it.
  std::vector<Job*> timing, fallback, others;
  for (Job& job : jobs) {
    const Backend& backend = *job.candidate->backend;
    if (backend.build_times_choices(job.group->graph, build))
      timing.push_back(&job);
    else if (backend.name() == options_.always_backend)
      fallback.push_back(&job);
    else
      others.push_back(&job);
  }
  std::mutex mu;  // guards the measurer's state while builds run side by side
  auto build_one = [&](Job& job) {
    const Backend& backend = *job.candidate->backend;
    std::unique_lock<std::mutex> lock(mu);
    if (!in_time(estimator_.job_ms(backend.name(), job.work))) {
      memo_[job.key] = cut(*job.candidate, job.group->graph);
      job.finished = true;
      return;
    }
    lock.unlock();
    const size_t choices_before = options_.choices ? options_.choices->measured() : 0;
    const double start = now_ms();
    auto kernel = backend.build(job.group->graph, build);
    job.spent_ms = now_ms() - start;
    lock.lock();
    // A build that timed a choice (a Winograd one: three kernels built and run) tells nothing
    // of what the builds still to come take (Inception-v3: its second native build, 27.8 s
    // under load with its choice, predicted the unbuilt nodes past the budget's end, and nothing
    // was measured after it). Such builds run alone, so the count of choices tells.
    if (!options_.choices || options_.choices->measured() == choices_before)
      estimator_.observe_build(backend.name(), job.work.nodes, job.spent_ms, job.work.anchored);
    else
      timed_choice_.insert(job.key);
    if (options_.tally) options_.tally->add(backend.name(), job.spent_ms, "measure");
    build_ms_[{&backend, job.candidate->nodes}] = job.spent_ms;
    job.build_ms = job.spent_ms;
    if (!kernel.ok()) {
      estimator_.observe(backend.name(), job.work, 0, job.spent_ms);
      record(backend, job.hash, job.signature,
             absl::Status(kernel.status().code(),
                          str_cat("build failed: ", kernel.status().message())),
             job.measurements, job.build_ms);
      job.finished = true;
      return;
    }
    mark_built(*job.candidate);
    job.kernel = std::move(*kernel);
  };
  for (Job* job : timing) build_one(*job);
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t i; (i = next.fetch_add(1)) < fallback.size();) build_one(*fallback[i]);
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < options_.fallback_build_threads && static_cast<size_t>(t) < fallback.size();
       ++t)
    workers.emplace_back(take);
  for (Job* job : others) build_one(*job);
  take();
  for (std::thread& w : workers) w.join();
}

void Measurer::sample(std::vector<Job>& jobs, const Backend* sampled) {
  // Round-robin among the backend's jobs until each has settled.
  for (bool active = true; active;) {
    active = false;
    for (Job& job : jobs) {
      if (job.finished || job.candidate->backend != sampled) continue;
      if (last_run_ != sampled)
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kTeamsSettleMs));
      last_run_ = sampled;
      const double t0 = now_ms();
      absl::Status s;
      for (int r = 0; r < job.reps && s.ok(); ++r)
        s = run_kernel(*job.kernel, job.args.data(), *pool_);
      const double wall = now_ms() - t0;
      job.spent_ms += wall;
      const Backend& backend = *job.candidate->backend;
      if (!s.ok()) {
        estimator_.observe(backend.name(), job.work, 0, job.spent_ms);
        record(backend, job.hash, job.signature,
               absl::Status(s.code(), str_cat("run failed: ", s.message())), job.measurements,
               job.build_ms);
        job.finished = true;
        job.kernel.reset();
        continue;
      }
      job.sampler.add(wall / job.reps, wall);
      if (job.sampler.done()) {
        const SampleStats st = job.sampler.stats();
        estimator_.observe(backend.name(), job.work, st.median, job.spent_ms);
        record(backend, job.hash, job.signature, Cost{st.median, st.samples, st.spread, false},
               job.measurements, job.build_ms);
        job.finished = true;
        job.kernel.reset();
        job.buffers.clear();
      } else {
        active = true;
      }
    }
  }
}

Measurer::Entry Measurer::cut(const Candidate& candidate, const Graph& group) {
  const Backend& backend = *candidate.backend;
  const bool needed = backend.name() == options_.always_backend ||
                      (beyond_fallback_.universe() == candidate.nodes.universe() &&
                       candidate.nodes.intersects(beyond_fallback_));
  if (!needed) {
    ++skipped_;
    return {absl::DeadlineExceededError("not measured: the time budget was spent"), false};
  }
  ++estimated_;
  return {Cost{estimator_.run_ms(backend.name(), group_work(group)), 0, 0, false}, false};
}

absl::StatusOr<Cost> Measurer::cost(const Candidate& candidate, const ExtractedSubgraph& group) {
  const uint64_t hash = stable_hash(canonical_signature(group.graph));
  const std::string key = memo_key(*candidate.backend, hash);
  key_of_[{candidate.backend, candidate.nodes}] = key;
  if (!memo_.count(key)) {
    const std::pair<const Candidate*, const ExtractedSubgraph*> one{&candidate, &group};
    prefetch({&one, 1});
  }
  Entry& e = memo_.at(key);
  if (!e.cost.ok()) return e.cost;
  Cost c = *e.cost;
  if (e.served) c.from_cache = true;
  e.served = true;
  if (c.from_cache) ++cached_;
  return c;
}

Cost Measurer::measure_copy(size_t bytes) {
  Tensor src(DType::i8, {static_cast<int64_t>(bytes)}),
      dst(DType::i8, {static_cast<int64_t>(bytes)});
  std::memset(src.raw(), 1, bytes);
  const auto* from = static_cast<const uint8_t*>(src.raw());
  auto* to = static_cast<uint8_t*>(dst.raw());
  const int64_t chunks = bytes >= (size_t{1} << 20) ? pool_->num_threads() : 1;
  auto copy = [&] {
    pool_->parallel_for(chunks, [&](int64_t c) {
      const size_t lo = bytes * static_cast<size_t>(c) / static_cast<size_t>(chunks);
      const size_t hi = bytes * static_cast<size_t>(c + 1) / static_cast<size_t>(chunks);
      std::memcpy(to + lo, from + lo, hi - lo);
    });
  };
  double last = 0;
  for (int i = 0; i < std::max(1, options_.warmup_runs); ++i) {
    const double t0 = now_ms();
    copy();
    last = now_ms() - t0;
  }
  const int reps = repetitions(last, options_.min_sample_ms);
  Sampler sampler(options_.sampling);
  while (!sampler.done()) {
    const double t0 = now_ms();
    for (int r = 0; r < reps; ++r) copy();
    const double wall = now_ms() - t0;
    sampler.add(wall / reps, wall);
  }
  const SampleStats st = sampler.stats();
  return Cost{st.median, st.samples, st.spread, false};
}

double Measurer::boundary_ms(const TensorType& type) {
  const size_t bytes = type.bytes();
  if (bytes == 0) return 0;
  if (auto it = boundary_.find(bytes); it != boundary_.end()) return it->second;
  const std::string signature = str_cat("copy ", bytes, " bytes");
  const uint64_t hash = stable_hash(signature);
  const CostKey key{device_, std::string(kBoundaryBackend), std::string(kBoundaryVersion), hash};
  double ms = 0;
  if (auto r = db_ ? db_->lookup(key) : std::nullopt;
      r && r->signature == signature && r->spread <= options_.trusted_spread) {
    ms = r->ms;
  } else {
    const Cost c = measure_copy(bytes);
    ms = c.ms;
    if (db_) {
      CostRecord rec{key,       signature, c.ms,
                     c.samples, c.spread,  static_cast<int64_t>(std::time(nullptr))};
      if (absl::Status s = db_->append(rec); !s.ok()) warnings_.push_back(std::string(s.message()));
    }
  }
  boundary_[bytes] = ms;
  return ms;
}

}  // namespace collage
