// The tuner's search (default, random samples, mutations of the best) and the JIT measurer.
#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>

#include "tune/group_kernel.h"

namespace collage::tune {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Knobs random_knobs(const KnobSpace& space, std::mt19937_64& rng) {
  Knobs k;
  for (const auto& [name, values] : space.knobs)
    k[name] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
  return k;
}

// `parent` with one or two knobs set to another of their values.
Knobs mutate(const Knobs& parent, const KnobSpace& space, std::mt19937_64& rng) {
  Knobs k = parent;
  const int changes = std::uniform_int_distribution<int>(1, 2)(rng);
  for (int c = 0; c < changes; ++c) {
    const auto& [name, values] =
        space.knobs[std::uniform_int_distribution<size_t>(0, space.knobs.size() - 1)(rng)];
    if (values.size() < 2) continue;
    k[name] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
  }
  return k;
}

// Every configuration of `space` whose string is not in `seen`, in enumeration order (the space
// is only enumerated when random draws keep hitting measured configurations, i.e. when it is
// small or nearly exhausted).
std::vector<Knobs> unseen(const KnobSpace& space, const std::set<std::string>& seen) {
  std::vector<Knobs> out;
  if (space.size() > 100000) return out;
  std::vector<size_t> at(space.knobs.size(), 0);
  while (true) {
    Knobs k;
    for (size_t i = 0; i < at.size(); ++i) k[space.knobs[i].first] = space.knobs[i].second[at[i]];
    if (!seen.count(to_string(k))) out.push_back(std::move(k));
    size_t d = 0;
    while (d < at.size() && ++at[d] == space.knobs[d].second.size()) at[d++] = 0;
    if (d == at.size()) break;
  }
  return out;
}

}  // namespace

SearchResult search(const ScheduleTemplate& t, const MeasureFn& measure,
                    const SearchOptions& options, const TrialFn& on_trial) {
  const auto t0 = std::chrono::steady_clock::now();
  std::mt19937_64 rng(options.seed);
  SearchResult r;
  r.best = t.defaults;
  std::set<std::string> seen;
  std::vector<std::pair<double, Knobs>> ranked;  // successful trials, fastest first
  const int64_t space_size = t.space.size();
  auto run_trial = [&](const Knobs& k) {
    seen.insert(to_string(k));
    absl::StatusOr<double> ms = measure(k);
    ++r.trials;
    if (!ms.ok() || !(*ms > 0)) {
      ++r.failed;
    } else {
      if (r.trials == 1) r.default_ms = *ms;
      if (r.best_ms == 0 || *ms < r.best_ms) {
        r.best_ms = *ms;
        r.best = k;
      }
      ranked.emplace_back(*ms, k);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      if (ranked.size() > static_cast<size_t>(std::max(options.population, 1))) ranked.pop_back();
    }
    if (on_trial) on_trial(r.trials, r.best_ms);
  };
  run_trial(t.defaults);
  while (r.trials < options.max_trials && seconds_since(t0) < options.budget_s &&
         static_cast<int64_t>(seen.size()) < space_size && !t.space.knobs.empty()) {
    Knobs next;
    bool fresh = false;
    for (int attempt = 0; attempt < 64 && !fresh; ++attempt) {
      const bool explore = ranked.empty() ||
                           std::uniform_real_distribution<double>(0, 1)(rng) < options.explore;
      if (explore) {
        next = random_knobs(t.space, rng);
      } else {
        // Parents closer to the front are picked more often.
        const size_t n = ranked.size();
        const size_t a = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
        const size_t b = std::uniform_int_distribution<size_t>(0, n - 1)(rng);
        next = mutate(ranked[std::min(a, b)].second, t.space, rng);
      }
      fresh = !seen.count(to_string(next));
    }
    if (!fresh) {
      // Nearly exhausted: pick at random among the configurations not measured yet.
      std::vector<Knobs> left = unseen(t.space, seen);
      if (left.empty()) break;
      next = left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(rng)];
    }
    run_trial(next);
  }
  r.seconds = seconds_since(t0);
  return r;
}

MeasureFn jit_measurer(const te_ops::AnchorGroup& group, const ScheduleTemplate& t,
                       ThreadPool* pool, const MeasureOptions& options) {
  // Random inputs, made once and shared by every configuration.
  auto inputs = std::make_shared<std::vector<Tensor>>();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const te::Tensor& in : group.inputs) {
    Tensor v(in.dtype(), in.shape());
    if (in.dtype() == DType::f32)
      for (int64_t i = 0; i < v.numel(); ++i) v.data<float>()[i] = dist(rng);
    inputs->push_back(std::move(v));
  }
  return [group, apply = t.apply, inputs, pool, options](const Knobs& k) -> absl::StatusOr<double> {
    absl::StatusOr<te_ops::ScheduledGroup> scheduled = apply(k);
    if (!scheduled.ok()) return scheduled.status();
    absl::StatusOr<GroupKernel> kernel = GroupKernel::compile(group, *scheduled, "tuned");
    if (!kernel.ok()) return kernel.status();
    if (absl::Status s = kernel->bind(*inputs); !s.ok()) return s;
    const int tasks = options.tasks > 0 ? options.tasks : std::max(group.num_threads, 1);
    kernel->run(tasks, pool);  // warm-up
    std::vector<double> times;
    const auto start = std::chrono::steady_clock::now();
    while (static_cast<int>(times.size()) < options.min_runs ||
           seconds_since(start) * 1e3 < options.min_time_ms) {
      const auto r0 = std::chrono::steady_clock::now();
      kernel->run(tasks, pool);
      times.push_back(seconds_since(r0) * 1e3);
      if (times.size() >= 1000) break;
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  };
}

}  // namespace collage::tune
