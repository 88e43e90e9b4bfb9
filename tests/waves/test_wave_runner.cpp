// WaveRunner on schedules of fake kernels over shared buffers: every chunk runs once, after its
// dependencies (a chunk reads what its dependencies wrote), over many runs; a second caller
// finds the workers busy.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "wave_runner.h"
#include "waves/wave_scheduler.h"

using namespace collage::waves;

namespace {

// Kernel k has task_count tasks; task t writes value[k][t] = 1 + sum of every value of the
// kernels it depends on, so a chunk that runs too early sees a partial sum.
struct FakeGraph {
  std::vector<std::vector<uint32_t>> deps;
  std::vector<int32_t> tasks;
  std::vector<std::vector<int64_t>> value;

  void run_task(uint32_t k, int32_t t) {
    int64_t sum = 1;
    for (uint32_t p : deps[k])
      for (int64_t v : value[p]) sum += v;
    value[k][t] = sum;
  }
  void reset() {
    for (auto& v : value) std::fill(v.begin(), v.end(), 0);
  }
};

FakeGraph random_graph(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  FakeGraph g;
  for (int k = 0; k < n; ++k) {
    g.deps.emplace_back();
    for (int j = 0; j < k; ++j)
      if (rng() % 3 == 0) g.deps.back().push_back(static_cast<uint32_t>(j));
    g.tasks.push_back(1 + static_cast<int32_t>(rng() % 6));
    g.value.emplace_back(g.tasks.back(), 0);
  }
  return g;
}

// Kernels k with k % exclusive_every == exclusive_every - 1 are exclusive (0: none).
WaveSchedule schedule_for(const FakeGraph& g, uint32_t workers, size_t exclusive_every = 0) {
  std::vector<KernelProfile> profiles;
  for (size_t k = 0; k < g.tasks.size(); ++k) {
    profiles.push_back({std::vector<double>(g.tasks[k], 1.0 + static_cast<double>(k % 3))});
    profiles.back().exclusive = exclusive_every && k % exclusive_every == exclusive_every - 1;
  }
  SchedulerOptions o;
  o.workers = workers;
  WaveSchedule s = schedule_waves(profiles, g.deps, o).schedule;
  REQUIRE(check_wave_schedule(s, g.tasks, g.deps).empty());
  return s;
}

}  // namespace

TEST_CASE("waves: the runner matches a sequential run, 300 runs on 4 workers",
          "[waves][runner]") {
  FakeGraph g = random_graph(11, 40);
  for (size_t k = 0; k < g.tasks.size(); ++k)
    for (int32_t t = 0; t < g.tasks[k]; ++t) g.run_task(static_cast<uint32_t>(k), t);
  const auto expected = g.value;

  const WaveSchedule s = schedule_for(g, 4);
  WaveRunner runner(&s);
  const WaveRunner::EntryFn fn = [&](uint32_t k, uint32_t c) {
    const auto [begin, end] = chunk_range(g.tasks[k], s.chunks[k], c);
    for (int32_t t = begin; t < end; ++t) g.run_task(k, t);
  };
  int mismatches = 0;
  for (int r = 0; r < 300; ++r) {
    g.reset();
    REQUIRE(runner.try_run(fn));
    if (g.value != expected) ++mismatches;
  }
  CHECK(mismatches == 0);
  const WaveRunStats stats = runner.stats();
  CHECK(stats.runs == 300);
  CHECK(stats.wall_ns > 0);
}

TEST_CASE("waves: every task runs exactly once per run", "[waves][runner]") {
  FakeGraph g = random_graph(5, 25);
  const WaveSchedule s = schedule_for(g, 3);
  std::vector<std::vector<std::atomic<int>>> count;
  for (int32_t n : g.tasks) count.emplace_back(n);
  WaveRunner runner(&s);
  const WaveRunner::EntryFn fn = [&](uint32_t k, uint32_t c) {
    const auto [begin, end] = chunk_range(g.tasks[k], s.chunks[k], c);
    for (int32_t t = begin; t < end; ++t) count[k][t].fetch_add(1);
  };
  for (int r = 0; r < 20; ++r) REQUIRE(runner.try_run(fn));
  for (auto& kernel : count)
    for (auto& c : kernel) CHECK(c.load() == 20);
}

TEST_CASE("waves: a caller finds the workers busy during another run", "[waves][runner]") {
  FakeGraph g = random_graph(3, 4);
  const WaveSchedule s = schedule_for(g, 2);
  WaveRunner runner(&s);
  std::atomic<bool> inside{false}, release{false};
  const WaveRunner::EntryFn slow = [&](uint32_t, uint32_t) {
    inside.store(true);
    while (!release.load()) std::this_thread::yield();
  };
  std::thread first([&] { CHECK(runner.try_run(slow)); });
  while (!inside.load()) std::this_thread::yield();
  CHECK_FALSE(runner.try_run([](uint32_t, uint32_t) {}));
  release.store(true);
  first.join();
  CHECK(runner.try_run([](uint32_t, uint32_t) {}));
}

TEST_CASE("waves: nothing runs beside an exclusive kernel", "[waves][runner]") {
  FakeGraph g = random_graph(21, 30);
  const WaveSchedule s = schedule_for(g, 3, /*exclusive_every=*/4);
  WaveRunner runner(&s);
  std::atomic<int> active{0}, overlaps{0};
  std::atomic<bool> exclusive_running{false};
  const WaveRunner::EntryFn fn = [&](uint32_t k, uint32_t) {
    const bool exclusive = k % 4 == 3;
    if (active.fetch_add(1) != 0 && exclusive) ++overlaps;
    if (exclusive_running.load()) ++overlaps;
    if (exclusive) exclusive_running.store(true);
    // Long enough for a wrongly concurrent entry to start meanwhile.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (std::chrono::steady_clock::now() < until) {
    }
    if (exclusive) exclusive_running.store(false);
    active.fetch_sub(1);
  };
  for (int r = 0; r < 20; ++r) REQUIRE(runner.try_run(fn));
  CHECK(overlaps.load() == 0);
  // The schedule does use more than one worker.
  size_t busy_workers = 0;
  for (const WorkerList& w : s.workers) busy_workers += !w.entries.empty();
  CHECK(busy_workers > 1);
}

TEST_CASE("waves: workers asleep on one counter wake when their own count is reached",
          "[waves][runner]") {
  // Worker 0 runs the three chunks of kernel 0, each longer than a waiter polls; worker w (1..3)
  // runs kernel w after worker 0's first w entries, so three sleepers park different counts on
  // one counter.
  WaveSchedule s;
  s.chunks = {3, 1, 1, 1};
  s.workers.resize(4);
  for (uint32_t c = 0; c < 3; ++c) s.workers[0].entries.push_back({0, c, 0, 0});
  for (uint32_t w = 1; w < 4; ++w) {
    s.workers[w].waits.push_back({0, w});
    s.workers[w].entries.push_back({w, 0, 0, 1});
  }
  REQUIRE(check_wave_schedule(s, {3, 1, 1, 1}, {{}, {}, {}, {}}).empty());
  WaveRunner runner(&s);
  std::atomic<uint32_t> progress{0};
  std::atomic<int> early{0};
  const WaveRunner::EntryFn fn = [&](uint32_t k, uint32_t) {
    if (k == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      progress.fetch_add(1);
      return;
    }
    if (progress.load() < k) early.fetch_add(1);
  };
  for (int r = 0; r < 30; ++r) {
    progress.store(0);
    REQUIRE(runner.try_run(fn));
  }
  CHECK(early.load() == 0);
  // The waiters did wait: their time blocked is most of a run.
  const WaveRunStats stats = runner.stats();
  CHECK(stats.wait_ns > stats.runs * 300'000 / 2);
}

TEST_CASE("waves: more workers than cores still match a sequential run", "[waves][runner]") {
  // Eight workers on a machine with fewer cores: threads are descheduled between entries, and
  // the workers waiting on them run their lists' next entries instead.
  FakeGraph g = random_graph(17, 60);
  for (size_t k = 0; k < g.tasks.size(); ++k)
    for (int32_t t = 0; t < g.tasks[k]; ++t) g.run_task(static_cast<uint32_t>(k), t);
  const auto expected = g.value;
  const WaveSchedule s = schedule_for(g, 8);
  WaveRunner runner(&s);
  const WaveRunner::EntryFn fn = [&](uint32_t k, uint32_t c) {
    const auto [begin, end] = chunk_range(g.tasks[k], s.chunks[k], c);
    for (int32_t t = begin; t < end; ++t) g.run_task(k, t);
    // Long enough for the OS to move threads around meanwhile.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < until) {
    }
  };
  int mismatches = 0;
  for (int r = 0; r < 100; ++r) {
    g.reset();
    REQUIRE(runner.try_run(fn));
    if (g.value != expected) ++mismatches;
  }
  CHECK(mismatches == 0);
}
