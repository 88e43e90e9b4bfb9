// The runtime's TaskPool: every task runs once and is finished when parallel_for returns, from
// one caller or several at once, and its workers take tasks both while they still poll for work
// and after they have gone to sleep.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "task_pool.h"

using collage::rt::TaskPool;

namespace {

// Runs a job of two tasks that can only finish together: each waits (up to 10 s) until the other
// has started, so the caller alone cannot run them one after the other. True when both met.
bool two_tasks_meet(TaskPool& pool) {
  std::atomic<int> started{0};
  std::atomic<int> met{0};
  pool.parallel_for(2, [&](int32_t) {
    started.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (started.load() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::yield();
    if (started.load() == 2) met.fetch_add(1);
  });
  return met.load() == 2;
}

}  // namespace

TEST_CASE("task pool: every task runs exactly once", "[runtime][task_pool]") {
  TaskPool pool(3);
  REQUIRE(pool.num_threads() == 3);
  for (int32_t n = 0; n <= 10; ++n) {
    std::vector<std::atomic<int>> runs(static_cast<size_t>(n));
    pool.parallel_for(n, [&](int32_t i) { runs[static_cast<size_t>(i)].fetch_add(1); });
    for (int32_t i = 0; i < n; ++i) CHECK(runs[static_cast<size_t>(i)].load() == 1);
  }
}

TEST_CASE("task pool: callers on several threads each get all of their tasks done",
          "[runtime][task_pool]") {
  TaskPool pool(3);
  constexpr int kCallers = 4, kJobs = 300;
  std::vector<int> incomplete(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int j = 0; j < kJobs; ++j) {
        const int32_t n = 1 + (c + j) % 7;
        std::vector<int> done(static_cast<size_t>(n), 0);  // plain ints: parallel_for publishes
        pool.parallel_for(n, [&](int32_t i) { done[static_cast<size_t>(i)] = 1; });
        for (int v : done) incomplete[static_cast<size_t>(c)] += v != 1;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) CHECK(incomplete[static_cast<size_t>(c)] == 0);
}

TEST_CASE("task pool: a worker takes the next job while polling and after sleeping",
          "[runtime][task_pool]") {
  TaskPool pool(2);
  // Back to back: the worker is still polling for work when the next job comes.
  for (int j = 0; j < 50; ++j) REQUIRE(two_tasks_meet(pool));
  // Idle for far longer than the poll: the worker has blocked and must be woken.
  for (int j = 0; j < 3; ++j) {
    std::this_thread::sleep_for(TaskPool::kSpin * 100);
    REQUIRE(two_tasks_meet(pool));
  }
}
