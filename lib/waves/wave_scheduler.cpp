// schedule_waves: Algorithm 1 of Rammer over a simulated machine of `workers` units. A segment
// (Rammer's rProgram) is a run of merged waves without a barrier; ScheduleWave places a wave's
// chunks on the earliest available unit; SelectRKernels picks each kernel's chunk count, and
// whether a library kernel with its own thread team runs exclusive or pinned to one thread.
#include "waves/wave_scheduler.h"

#include <algorithm>
#include <numeric>

namespace collage::waves {
namespace {

// Per kernel, the variant it runs as: its tasks grouped into `chunks`, its own thread team
// limited to `threads` threads (WaveSchedule::threads; 0: as it is, so that a kernel with a team
// of its own runs exclusive).
struct Variants {
  std::vector<uint32_t> chunks, threads;
};

struct Placed {
  uint32_t worker = 0;
  double finish = 0;
};

// A segment being built (Rammer's P): when each unit is free, where each chunk ran, in order.
struct Segment {
  double start = 0;                           // the barrier the segment begins after
  std::vector<double> free;                   // per worker
  std::vector<std::vector<Placed>> placed;    // per kernel placed in this segment
  std::vector<std::pair<uint32_t, uint32_t>> order;  // (kernel, chunk) in placement order
  std::vector<uint32_t> worker_of;                    // per order entry

  Segment(double at, uint32_t workers, size_t kernels)
      : start(at), free(workers, at), placed(kernels) {}
  double end() const { return *std::max_element(free.begin(), free.end()); }
  double time() const { return end() - start; }
};

class Scheduler {
 public:
  Scheduler(const std::vector<KernelProfile>& profiles,
            const std::vector<std::vector<uint32_t>>& deps, const SchedulerOptions& o)
      : profiles_(profiles), deps_(deps), o_(o) {}

  bool pinnable(uint32_t k) const { return !profiles_[k].pinned_us.empty(); }
  // Runs with every other worker idle.
  bool alone(uint32_t k, const Variants& v) const {
    return profiles_[k].exclusive && v.threads[k] == 0;
  }
  const std::vector<double>& task_us(uint32_t k, const Variants& v) const {
    return v.threads[k] ? profiles_[k].pinned_us : profiles_[k].task_us;
  }

  double chunk_us(uint32_t k, const Variants& v, uint32_t c) const {
    const std::vector<double>& times = task_us(k, v);
    const auto [begin, end] = chunk_range(static_cast<int32_t>(times.size()), v.chunks[k], c);
    double t = o_.chunk_overhead_us;
    for (int32_t i = begin; i < end; ++i) t += times[i];
    return t;
  }

  // ScheduleWave: the wave's kernels longest chunk first, every chunk on the unit where it can
  // start earliest (its dependencies in this segment done, plus a wait if on another unit).
  void place_wave(const std::vector<uint32_t>& wave, const Variants& v, Segment* s) const {
    std::vector<uint32_t> order = wave;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return chunk_us(a, v, 0) > chunk_us(b, v, 0);
    });
    const uint32_t workers = static_cast<uint32_t>(s->free.size());
    for (uint32_t k : order) {
      if (alone(k, v)) {
        place_exclusive(k, v, s);
        continue;
      }
      for (uint32_t c = 0; c < v.chunks[k]; ++c) {
        uint32_t best = 0;
        double best_start = 0;
        for (uint32_t w = 0; w < workers; ++w) {
          double start = s->free[w];
          for (uint32_t p : deps_[k])
            for (const Placed& q : s->placed[p])
              start = std::max(start, q.finish + (q.worker == w ? 0 : o_.wait_us));
          if (w == 0 || start < best_start) best = w, best_start = start;
        }
        const double finish = best_start + chunk_us(k, v, c);
        s->free[best] = finish;
        s->placed[k].push_back({best, finish});
        s->order.push_back({k, c});
        s->worker_of.push_back(best);
      }
    }
  }

  // An exclusive kernel starts once every worker is free and its dependencies are done, on
  // worker 0 when it can (the caller's thread, whose OpenMP team the sequential executor uses
  // too: a library kernel started on another worker would bring up a second team), and keeps
  // every worker until it ends.
  void place_exclusive(uint32_t k, const Variants& v, Segment* s) const {
    const uint32_t workers = static_cast<uint32_t>(s->free.size());
    double all_free = *std::max_element(s->free.begin(), s->free.end());
    uint32_t best = 0;
    double best_start = 0;
    for (uint32_t w = 0; w < workers; ++w) {
      double start = all_free + (workers > 1 ? o_.wait_us : 0);
      for (uint32_t p : deps_[k])
        for (const Placed& q : s->placed[p])
          start = std::max(start, q.finish + (q.worker == w ? 0 : o_.wait_us));
      if (w == 0 || start < best_start) best = w, best_start = start;
    }
    const double finish = best_start + chunk_us(k, v, 0);
    std::fill(s->free.begin(), s->free.end(), finish + (workers > 1 ? o_.wait_us : 0));
    s->free[best] = finish;
    s->placed[k].push_back({best, finish});
    s->order.push_back({k, 0});
    s->worker_of.push_back(best);
  }

  // Why library kernels get a pinned variant. With eigen + dnnl placements the wave executor ran
  // slower than the sequential one (bench/RESULTS.md at load ~2: NASNet cells 0.78x, GoogLeNet
  // trunks 0.80x and 0.89x). A oneDNN kernel runs on an OpenMP team, whose every fork and join
  // needs all its threads on cores at once. Profiled exclusive (6, 10 and 18 kernels there), it
  // held every worker: the wave drained before it (every worker waits for the others), the other
  // workers idled during it and woke after it, so the eigen branches never overlapped its small
  // poolings and concats. Not profiled exclusive (on a busy machine the team rarely has two
  // cores, so the process is not 1.5x busier than the wall clock), it ran beside another worker,
  // whose core its team's second thread then waited for: profiled in process at load 10-13 on 2
  // cores, NASNet's poolings took 24 ms and its concat 69 ms with their team, 27-36 us and
  // 172 us pinned; a 3x3 convolution of 16x12x12, 68-100 ms against 6 us. Pinned to its worker's
  // thread (oneDNN primitives created for one thread) a kernel waits for no team and leaves no
  // worker idle; exclusive still wins where a kernel is alone and its team scales.
  //
  // SelectRKernels: start from each kernel's most efficient variant (one chunk: the least total
  // work; a library kernel with its own team exclusive, i.e. on every core); while the wave
  // leaves units idle, give the kernel that finishes last its next finer variant, and keep it
  // when the wave's simulated end improves. Kernels with a pinned variant are then tried pinned
  // (one worker each, beside the others): all of them, then each one flipped, longest first; a
  // choice is kept when the wave, its chunk counts chosen again, ends earlier.
  void select_variants(const std::vector<uint32_t>& wave, const Segment& s, Variants* v) const {
    for (uint32_t k : wave) v->chunks[k] = 1, v->threads[k] = 0;
    using Teams = SchedulerOptions::Teams;
    if (o_.teams == Teams::pinned || (o_.teams == Teams::beside && wave.size() > 1)) {
      for (uint32_t k : wave)
        if (pinnable(k)) v->threads[k] = 1;
      if (o_.select_variants) refine_chunks(wave, s, v);
      return;
    }
    if (!o_.select_variants) return;
    double best = refine_chunks(wave, s, v);
    std::vector<uint32_t> teams;
    for (uint32_t k : wave)
      if (pinnable(k)) teams.push_back(k);
    if (teams.empty()) return;
    std::stable_sort(teams.begin(), teams.end(), [&](uint32_t a, uint32_t b) {
      return chunk_us(a, *v, 0) > chunk_us(b, *v, 0);
    });
    auto attempt = [&](Variants trial) {
      for (uint32_t k : wave) trial.chunks[k] = 1;
      const double t = refine_chunks(wave, s, &trial);
      if (t < best) best = t, *v = std::move(trial);
    };
    Variants pinned = *v;
    for (uint32_t k : teams) pinned.threads[k] = 1;
    attempt(std::move(pinned));
    for (uint32_t k : teams) {
      Variants flipped = *v;
      flipped.threads[k] = flipped.threads[k] ? 0 : 1;
      attempt(std::move(flipped));
    }
  }

  // The chunk-count part of SelectRKernels from `v`: returns the wave's simulated end.
  double refine_chunks(const std::vector<uint32_t>& wave, const Segment& s, Variants* v) const {
    auto end_with = [&](const Variants& trial, uint32_t* last) {
      Segment t = s;
      place_wave(wave, trial, &t);
      double latest = -1;
      for (uint32_t k : wave)
        for (const Placed& q : t.placed[k])
          if (q.finish > latest) latest = q.finish, *last = k;
      return t.end();
    };
    std::vector<bool> settled(v->chunks.size(), false);
    for (uint32_t k : wave) settled[k] = alone(k, *v);
    uint32_t last = wave[0];
    double best = end_with(*v, &last);
    for (;;) {
      if (settled[last]) break;
      const std::vector<uint32_t> variants = chunk_variants(
          static_cast<int32_t>(profiles_[last].task_us.size()), static_cast<uint32_t>(s.free.size()));
      auto next = std::upper_bound(variants.begin(), variants.end(), v->chunks[last]);
      if (next == variants.end()) break;
      Variants trial = *v;
      trial.chunks[last] = *next;
      uint32_t trial_last = last;
      const double t = end_with(trial, &trial_last);
      if (t < best) {
        best = t;
        *v = std::move(trial);
        last = trial_last;
      } else {
        settled[last] = true;
      }
    }
    return best;
  }

  ScheduleResult run(const std::vector<uint32_t>& level) {
    const size_t n = profiles_.size();
    ScheduleResult r;
    r.schedule.wave_of_kernel = level;
    const uint32_t num_waves = n ? *std::max_element(level.begin(), level.end()) + 1 : 0;
    r.schedule.num_waves = num_waves;
    std::vector<std::vector<uint32_t>> waves(num_waves);
    for (uint32_t k = 0; k < n; ++k) waves[level[k]].push_back(k);
    Variants v{std::vector<uint32_t>(n, 1), std::vector<uint32_t>(n, 0)};
    std::vector<Segment> done;
    Segment current(0, o_.workers, n);
    // Algorithm 1: P1 is the wave merged into the current segment, P2 the wave alone after a
    // barrier; merge when time(P1) <= time(P_curr) + barrier + time(P2).
    for (uint32_t w = 0; w < num_waves; ++w) {
      Variants merged_v = v, alone_v = v;
      Segment merged = current;
      select_variants(waves[w], merged, &merged_v);
      place_wave(waves[w], merged_v, &merged);
      const bool first = current.order.empty();
      Segment alone(current.end() + (first ? 0 : o_.barrier_us), o_.workers, n);
      select_variants(waves[w], alone, &alone_v);
      place_wave(waves[w], alone_v, &alone);
      const bool merge =
          first || (o_.merge_waves &&
                    merged.time() <= current.time() + o_.barrier_us + alone.time());
      if (merge) {
        current = std::move(merged);
        v = std::move(merged_v);
      } else {
        done.push_back(std::move(current));
        current = std::move(alone);
        v = std::move(alone_v);
      }
      r.segment_of_wave.push_back(static_cast<uint32_t>(done.size()));
    }
    if (!current.order.empty()) done.push_back(std::move(current));
    r.schedule.chunks = v.chunks;
    r.schedule.threads = v.threads;
    for (uint32_t k = 0; k < n; ++k) {
      double total = 0;
      for (double t : task_us(k, v)) total += t;
      r.schedule.kernel_us.push_back(static_cast<float>(total));
      r.schedule.exclusive.push_back(alone(k, v) ? 1 : 0);
    }
    r.schedule.num_segments = static_cast<uint32_t>(done.size());
    r.predicted_us = done.empty() ? 0 : done.back().end();
    build_lists(done, v, &r.schedule);
    return r;
  }

  // Worker lists in placement order, with the waits that order each chunk after its
  // dependencies on other workers, and a barrier (a wait on every other worker) before the
  // first chunk a worker runs in a new segment. An exclusive kernel waits for every worker's
  // earlier entries, and every worker's next entry waits for it. A wait an earlier entry of the
  // same worker already implies is left out.
  void build_lists(const std::vector<Segment>& segments, const Variants& v,
                   WaveSchedule* s) const {
    const uint32_t workers = o_.workers;
    s->workers.assign(workers, {});
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> where(profiles_.size());
    std::vector<std::vector<uint32_t>> known(workers, std::vector<uint32_t>(workers, 0));
    // Per worker: counts its next entry must wait for (an exclusive kernel on another worker).
    std::vector<std::vector<uint32_t>> after_exclusive(workers, std::vector<uint32_t>(workers, 0));
    for (const Segment& seg : segments) {
      std::vector<uint32_t> at_start(workers);
      for (uint32_t w = 0; w < workers; ++w)
        at_start[w] = static_cast<uint32_t>(s->workers[w].entries.size());
      std::vector<bool> started(workers, false);
      for (size_t i = 0; i < seg.order.size(); ++i) {
        const auto [k, c] = seg.order[i];
        const uint32_t w = seg.worker_of[i];
        std::vector<uint32_t> need(workers, 0);
        if (!started[w] && &seg != &segments.front())
          for (uint32_t u = 0; u < workers; ++u) need[u] = at_start[u];
        started[w] = true;
        for (uint32_t p : deps_[k])
          for (const auto& [u, index] : where[p]) need[u] = std::max(need[u], index + 1);
        for (uint32_t u = 0; u < workers; ++u) {
          need[u] = std::max(need[u], after_exclusive[w][u]);
          after_exclusive[w][u] = 0;
        }
        const bool exclusive = alone(k, v);
        if (exclusive)
          for (uint32_t u = 0; u < workers; ++u)
            need[u] = std::max(need[u], static_cast<uint32_t>(s->workers[u].entries.size()));
        WorkerList& list = s->workers[w];
        WaveEntry e{k, c, static_cast<uint32_t>(list.waits.size()), 0};
        for (uint32_t u = 0; u < workers; ++u) {
          if (u == w || need[u] <= known[w][u]) continue;
          list.waits.push_back({u, need[u]});
          known[w][u] = need[u];
        }
        e.wait_end = static_cast<uint32_t>(list.waits.size());
        where[k].push_back({w, static_cast<uint32_t>(list.entries.size())});
        list.entries.push_back(e);
        if (exclusive)
          for (uint32_t u = 0; u < workers; ++u)
            if (u != w) after_exclusive[u][w] = static_cast<uint32_t>(list.entries.size());
      }
    }
  }

 private:
  const std::vector<KernelProfile>& profiles_;
  const std::vector<std::vector<uint32_t>>& deps_;
  const SchedulerOptions& o_;
};

}  // namespace

std::vector<uint32_t> wave_levels(const std::vector<std::vector<uint32_t>>& deps) {
  std::vector<uint32_t> level(deps.size(), 0);
  for (size_t k = 0; k < deps.size(); ++k)
    for (uint32_t p : deps[k]) level[k] = std::max(level[k], level[p] + 1);
  return level;
}

std::vector<uint32_t> chunk_variants(int32_t task_count, uint32_t workers) {
  const uint32_t n = static_cast<uint32_t>(std::max(task_count, 1));
  std::vector<uint32_t> v;
  for (uint32_t c = 1; c < n; c *= 2) v.push_back(c);
  v.push_back(n);
  if (workers < n) v.push_back(workers);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

ScheduleResult schedule_waves(const std::vector<KernelProfile>& profiles,
                              const std::vector<std::vector<uint32_t>>& deps,
                              const SchedulerOptions& options) {
  SchedulerOptions o = options;
  o.workers = std::clamp<uint32_t>(o.workers, 1, kMaxWorkers);
  using Teams = SchedulerOptions::Teams;
  std::vector<KernelProfile> forced;
  if (o.teams == Teams::exclusive || o.teams == Teams::shared) {
    forced = profiles;
    for (KernelProfile& p : forced)
      if (!p.pinned_us.empty()) p.exclusive = o.teams == Teams::exclusive, p.pinned_us.clear();
  }
  Scheduler s(forced.empty() ? profiles : forced, deps, o);
  return s.run(wave_levels(deps));
}

}  // namespace collage::waves
