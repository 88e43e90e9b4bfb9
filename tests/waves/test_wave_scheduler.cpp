// The compile-time wave scheduler on hand-built DAGs with fake profiles: waves, validity (every
// dependency ordered, every chunk once), variant choice (SelectRKernels) and wave merging
// (Algorithm 1); and the schedule check rejecting broken schedules.
#include <catch2/catch.hpp>
#include <random>

#include "waves/wave_scheduler.h"

using namespace collage::waves;

namespace {

using Deps = std::vector<std::vector<uint32_t>>;

KernelProfile tasks(int n, double us) {
  return {std::vector<double>(n, us)};
}

std::vector<int32_t> task_counts(const std::vector<KernelProfile>& p) {
  std::vector<int32_t> n;
  for (const KernelProfile& k : p) n.push_back(static_cast<int32_t>(k.task_us.size()));
  return n;
}

ScheduleResult checked(const std::vector<KernelProfile>& p, const Deps& deps,
                       const SchedulerOptions& o) {
  ScheduleResult r = schedule_waves(p, deps, o);
  INFO(check_wave_schedule(r.schedule, task_counts(p), deps));
  REQUIRE(check_wave_schedule(r.schedule, task_counts(p), deps).empty());
  return r;
}

// The worker that runs kernel k's chunk c.
uint32_t worker_of(const WaveSchedule& s, uint32_t k, uint32_t c) {
  for (uint32_t w = 0; w < s.workers.size(); ++w)
    for (const WaveEntry& e : s.workers[w].entries)
      if (e.kernel == k && e.chunk == c) return w;
  FAIL("chunk not scheduled");
  return 0;
}

SchedulerOptions machine(uint32_t workers) {
  SchedulerOptions o;
  o.workers = workers;
  return o;
}

}  // namespace

TEST_CASE("waves: a chain is one kernel per wave, all on one worker", "[waves][scheduler]") {
  const Deps deps = {{}, {0}, {1}, {2}};
  const std::vector<KernelProfile> p(4, tasks(1, 10));
  ScheduleResult r = checked(p, deps, machine(2));
  CHECK(r.schedule.wave_of_kernel == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(r.schedule.num_waves == 4);
  CHECK(r.schedule.num_segments == 1);
  // Same worker: program order alone orders the chain, so no waits at all.
  for (uint32_t k = 0; k < 4; ++k) CHECK(worker_of(r.schedule, k, 0) == 0);
  CHECK(r.schedule.workers[0].waits.empty());
  CHECK(r.predicted_us == Approx(4 * 10.5));
}

TEST_CASE("waves: a diamond runs its two branches on two workers", "[waves][scheduler]") {
  const Deps deps = {{}, {0}, {0}, {1, 2}};
  const std::vector<KernelProfile> p = {tasks(1, 5), tasks(1, 20), tasks(1, 20), tasks(1, 5)};
  ScheduleResult r = checked(p, deps, machine(2));
  CHECK(r.schedule.wave_of_kernel == std::vector<uint32_t>{0, 1, 1, 2});
  CHECK(worker_of(r.schedule, 1, 0) != worker_of(r.schedule, 2, 0));
  // The join waits for the branch on the other worker.
  const uint32_t join = worker_of(r.schedule, 3, 0);
  const WorkerList& list = r.schedule.workers[join];
  const WaveEntry& e = list.entries.back();
  REQUIRE(e.wait_end == e.wait_begin + 1);
  CHECK(list.waits[e.wait_begin].worker == 1 - join);
  // 5.5, then both branches (20.5) side by side plus a wait, then 5.5.
  CHECK(r.predicted_us == Approx(5.5 + 20.5 + 2 + 5.5));
}

TEST_CASE("waves: a wide fan-out spreads evenly over the workers", "[waves][scheduler]") {
  Deps deps = {{}};
  std::vector<KernelProfile> p = {tasks(1, 1)};
  for (int i = 0; i < 8; ++i) {
    deps.push_back({0});
    p.push_back(tasks(1, 10));
  }
  ScheduleResult r = checked(p, deps, machine(4));
  std::vector<int> per_worker(4, 0);
  for (uint32_t k = 1; k <= 8; ++k) ++per_worker[worker_of(r.schedule, k, 0)];
  CHECK(per_worker == std::vector<int>{2, 2, 2, 2});
}

TEST_CASE("waves: SelectRKernels splits a lone kernel to fill the machine", "[waves][scheduler]") {
  // 8 tasks of 10 us on 4 workers: 1 chunk 80.5 us, 2: 40.5, 4: 20.5, 8: 2 x 10.5 = 21.
  const std::vector<KernelProfile> p = {tasks(8, 10)};
  ScheduleResult r = checked(p, {{}}, machine(4));
  CHECK(r.schedule.chunks == std::vector<uint32_t>{4});
  CHECK(r.predicted_us == Approx(20.5));
  SchedulerOptions fixed = machine(4);
  fixed.select_variants = false;
  CHECK(checked(p, {{}}, fixed).schedule.chunks == std::vector<uint32_t>{1});
}

TEST_CASE("waves: SelectRKernels keeps whole kernels when the wave fills the machine",
          "[waves][scheduler]") {
  // Four independent kernels of 4 tasks on 4 workers: one kernel per worker is best.
  const std::vector<KernelProfile> p(4, tasks(4, 10));
  ScheduleResult r = checked(p, {{}, {}, {}, {}}, machine(4));
  CHECK(r.schedule.chunks == std::vector<uint32_t>{1, 1, 1, 1});
  CHECK(r.predicted_us == Approx(40.5));
}

TEST_CASE("waves: Algorithm 1 merges waves unless waits cost more than a barrier",
          "[waves][scheduler]") {
  // Two kernels side by side, then a join reading both.
  const Deps deps = {{}, {}, {0, 1}};
  const std::vector<KernelProfile> p(3, tasks(1, 10));
  SchedulerOptions cheap_waits = machine(2);
  cheap_waits.wait_us = 0.1;
  cheap_waits.barrier_us = 5;
  CHECK(checked(p, deps, cheap_waits).schedule.num_segments == 1);

  SchedulerOptions dear_waits = machine(2);
  dear_waits.wait_us = 100;
  dear_waits.barrier_us = 1;
  ScheduleResult split = checked(p, deps, dear_waits);
  CHECK(split.schedule.num_segments == 2);
  CHECK(split.segment_of_wave == std::vector<uint32_t>{0, 1});
  // 10.5, the barrier, 10.5.
  CHECK(split.predicted_us == Approx(22));

  SchedulerOptions never = cheap_waits;
  never.merge_waves = false;
  CHECK(checked(p, deps, never).schedule.num_segments == 2);
}

TEST_CASE("waves: random DAGs give valid schedules on 1 to 5 workers", "[waves][scheduler]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 30);
    Deps deps(n);
    std::vector<KernelProfile> p;
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < k; ++j)
        if (rng() % 4 == 0) deps[k].push_back(static_cast<uint32_t>(j));
      KernelProfile prof;
      const int tasks = 1 + static_cast<int>(rng() % 9);
      for (int t = 0; t < tasks; ++t) prof.task_us.push_back(1 + rng() % 50);
      p.push_back(prof);
    }
    SchedulerOptions o = machine(1 + trial % 5);
    o.merge_waves = trial % 3 != 0;
    o.wait_us = trial % 2 ? 0.5 : 40;
    INFO("trial " << trial);
    checked(p, deps, o);
  }
}

TEST_CASE("waves: the check rejects a missing wait, a duplicate chunk and a deadlock",
          "[waves][scheduler]") {
  const Deps deps = {{}, {0}, {0}, {1, 2}};
  const std::vector<KernelProfile> p = {tasks(1, 5), tasks(1, 20), tasks(1, 20), tasks(1, 5)};
  const ScheduleResult r = checked(p, deps, machine(2));
  const std::vector<int32_t> n = task_counts(p);

  WaveSchedule no_wait = r.schedule;
  const uint32_t join = worker_of(no_wait, 3, 0);
  no_wait.workers[join].entries.back().wait_end = no_wait.workers[join].entries.back().wait_begin;
  CHECK_THAT(check_wave_schedule(no_wait, n, deps),
             Catch::Contains("may run before kernel") && Catch::Contains("has finished"));

  WaveSchedule twice = r.schedule;
  twice.workers[0].entries.push_back(twice.workers[0].entries.front());
  CHECK_THAT(check_wave_schedule(twice, n, deps), Catch::Contains("entries for 4 chunks"));
  twice.workers[1].entries.pop_back();
  CHECK_THAT(check_wave_schedule(twice, n, deps), Catch::Contains("runs twice"));

  // Two workers, each first waiting for the other's first entry.
  WaveSchedule cycle;
  cycle.chunks = {1, 1};
  cycle.workers.resize(2);
  cycle.workers[0].entries = {{0, 0, 0, 1}};
  cycle.workers[0].waits = {{1, 1}};
  cycle.workers[1].entries = {{1, 0, 0, 1}};
  cycle.workers[1].waits = {{0, 1}};
  CHECK_THAT(check_wave_schedule(cycle, {1, 1}, {{}, {}}), Catch::Contains("deadlock"));

  WaveSchedule too_many_chunks = r.schedule;
  too_many_chunks.chunks[0] = 2;
  CHECK_THAT(check_wave_schedule(too_many_chunks, n, deps), Catch::Contains("2 chunks of 1"));
}

TEST_CASE("waves: dependencies follow the dataflow and arena reuse", "[waves][scheduler]") {
  // Tensors: 0 input, 1 and 2 in the arena at the same bytes (reused), 3 an output.
  const std::vector<TensorSpan> tensors = {{false, 0, 0}, {true, 0, 64}, {true, 0, 64}, {}};
  // k0: 0 -> 1; k1: 1 -> 3; k2: 0 -> 2 (reuses 1's bytes: after k1 has read them).
  const std::vector<KernelAccess> kernels = {{{0}, {1}}, {{1}, {3}}, {{0}, {2}}};
  const Deps deps = kernel_dependencies(kernels, tensors);
  CHECK(deps == Deps{{}, {0}, {0, 1}});
  // Without the reuse k2 is independent.
  const std::vector<TensorSpan> apart = {{false, 0, 0}, {true, 0, 64}, {true, 64, 128}, {}};
  CHECK(kernel_dependencies(kernels, apart) == Deps{{}, {0}, {}});
}

TEST_CASE("waves: chunk variants are powers of two, the workers and the task count",
          "[waves][scheduler]") {
  CHECK(chunk_variants(1, 4) == std::vector<uint32_t>{1});
  CHECK(chunk_variants(8, 4) == std::vector<uint32_t>{1, 2, 4, 8});
  CHECK(chunk_variants(12, 3) == std::vector<uint32_t>{1, 2, 3, 4, 8, 12});
  CHECK(chunk_range(10, 3, 0) == std::pair<int32_t, int32_t>{0, 3});
  CHECK(chunk_range(10, 3, 2) == std::pair<int32_t, int32_t>{6, 10});
}

TEST_CASE("waves: an exclusive kernel has every worker to itself", "[waves][scheduler]") {
  // Three independent kernels of 10 us on two workers: 21 us side by side. With the middle one
  // exclusive: the first alone on worker 0 (10.5), a wait, the exclusive one (10.5), a wait,
  // the third (10.5).
  std::vector<KernelProfile> p = {tasks(1, 10), tasks(1, 10), tasks(1, 10)};
  const Deps deps = {{}, {}, {}};
  CHECK(checked(p, deps, machine(2)).predicted_us == Approx(21));
  p[1].exclusive = true;
  ScheduleResult r = checked(p, deps, machine(2));
  CHECK(r.predicted_us == Approx(10.5 + 2 + 10.5 + 10.5));
}

namespace {

// A library kernel with a thread team: `us` alone on every core, `pinned_us` on one worker.
KernelProfile team_kernel(double us, double pinned_us) {
  KernelProfile p = tasks(1, us);
  p.exclusive = true;
  p.pinned_us = {pinned_us};
  return p;
}

}  // namespace

TEST_CASE("waves: SelectRKernels pins library kernels side by side when that ends earlier",
          "[waves][scheduler]") {
  // Two independent team kernels on two workers: exclusive one after the other ends at
  // 2 + 10.5 + 2 + 2 + 10.5 + 2 = 29 (a wait before each, every worker held after each);
  // pinned side by side at 15.5.
  const Deps deps = {{}, {}};
  ScheduleResult r = checked({team_kernel(10, 15), team_kernel(10, 15)}, deps, machine(2));
  CHECK(r.schedule.threads == std::vector<uint32_t>{1, 1});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{0, 0});
  CHECK(worker_of(r.schedule, 0, 0) != worker_of(r.schedule, 1, 0));
  CHECK(r.predicted_us == Approx(15.5));
  CHECK(r.schedule.kernel_us == std::vector<float>{15, 15});

  // Pinned they would take 30.5: exclusive stays faster.
  r = checked({team_kernel(10, 30), team_kernel(10, 30)}, deps, machine(2));
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{1, 1});
  CHECK(r.predicted_us == Approx(29));

  // Alone in its wave (a chain), a team kernel keeps every core: exclusive, on worker 0 (the
  // second ends at 29 so; pinned, at 12.5 + 20.5 = 33).
  r = checked({team_kernel(10, 20), team_kernel(10, 20)}, {{}, {0}}, machine(2));
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{1, 1});
  CHECK(worker_of(r.schedule, 0, 0) == 0);
  CHECK(worker_of(r.schedule, 1, 0) == 0);

  // Beside a kernel of generated code: pinned, the team kernel overlaps it.
  r = checked({team_kernel(10, 15), tasks(1, 15)}, deps, machine(2));
  CHECK(r.schedule.threads == std::vector<uint32_t>{1, 0});
  CHECK(r.predicted_us == Approx(15.5));

  // Without the option, every kernel keeps its first variant.
  SchedulerOptions fixed = machine(2);
  fixed.select_variants = false;
  r = checked({team_kernel(10, 15), team_kernel(10, 15)}, deps, fixed);
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});

  // Forced: shared, the team kernels run side by side like any kernel, teams unlimited;
  // exclusive or pinned whatever the profile prefers.
  SchedulerOptions forced = machine(2);
  forced.teams = SchedulerOptions::Teams::shared;
  r = checked({team_kernel(10, 30), team_kernel(10, 30)}, deps, forced);
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{0, 0});
  CHECK(worker_of(r.schedule, 0, 0) != worker_of(r.schedule, 1, 0));
  forced.teams = SchedulerOptions::Teams::exclusive;
  r = checked({team_kernel(10, 15), tasks(1, 15)}, deps, forced);  // pinned would win
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{1, 0});
  forced.teams = SchedulerOptions::Teams::pinned;
  r = checked({team_kernel(10, 30), team_kernel(10, 30)}, deps, forced);  // exclusive would win
  CHECK(r.schedule.threads == std::vector<uint32_t>{1, 1});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{0, 0});

  // Beside: pinned where the wave has other kernels (exclusive would win there), as profiled
  // where a team kernel is alone in its wave (a chain: exclusive, as above).
  forced.teams = SchedulerOptions::Teams::beside;
  r = checked({team_kernel(10, 30), team_kernel(10, 30)}, deps, forced);
  CHECK(r.schedule.threads == std::vector<uint32_t>{1, 1});
  r = checked({team_kernel(10, 30), tasks(1, 15)}, deps, forced);
  CHECK(r.schedule.threads == std::vector<uint32_t>{1, 0});
  r = checked({team_kernel(10, 20), team_kernel(10, 20)}, {{}, {0}}, forced);
  CHECK(r.schedule.threads == std::vector<uint32_t>{0, 0});
  CHECK(r.schedule.exclusive == std::vector<uint8_t>{1, 1});
}

TEST_CASE("waves: the check rejects bad thread counts", "[waves][scheduler]") {
  const Deps deps = {{}, {}};
  const std::vector<KernelProfile> p = {team_kernel(10, 15), team_kernel(10, 15)};
  const ScheduleResult r = checked(p, deps, machine(2));
  REQUIRE(r.schedule.threads == std::vector<uint32_t>{1, 1});
  const std::vector<int32_t> n = task_counts(p);

  WaveSchedule too_many = r.schedule;
  too_many.threads[1] = 3;
  CHECK(check_wave_schedule(too_many, n, deps) == "kernel 1: runs with 3 threads on 2 workers");
  WaveSchedule short_list = r.schedule;
  short_list.threads.pop_back();
  CHECK(check_wave_schedule(short_list, n, deps) == "1 thread counts for 2 kernels");
  WaveSchedule both = r.schedule;
  both.exclusive[0] = 1;
  CHECK(check_wave_schedule(both, n, deps) == "kernel 0: exclusive, yet limited to 1 threads");
  WaveSchedule unlimited = r.schedule;
  unlimited.threads.clear();
  CHECK(check_wave_schedule(unlimited, n, deps).empty());
}
