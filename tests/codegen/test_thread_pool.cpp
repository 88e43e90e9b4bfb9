// ThreadPool: every index runs exactly once, the caller takes part, nested and concurrent calls,
// contiguous ranges per thread.
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "collage/thread_pool.h"
#include "core/parallel_ranges.h"

using namespace collage;

TEST_CASE("parallel_for runs every index exactly once", "[thread_pool]") {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    CHECK(pool.num_threads() == threads);
    for (int64_t n : {0, 1, 2, 7, 100, 1000}) {
      std::vector<std::atomic<int>> hits(n);
      for (auto& h : hits) h = 0;
      pool.parallel_for(n, [&](int64_t i) { hits[i].fetch_add(1); });
      for (int64_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
    }
  }
  ThreadPool clamped(0);
  CHECK(clamped.num_threads() == 1);
}

TEST_CASE("tasks spread over the pool's threads, the caller included", "[thread_pool]") {
  ThreadPool pool(3);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each task waits (bounded) until three tasks are running, so three threads must take part.
  pool.parallel_for(3, [&](int64_t) {
    arrived.fetch_add(1);
    for (int spin = 0; spin < 2000000 && arrived.load() < 3; ++spin) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  CHECK(ids.size() == 3);
  CHECK(ids.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("nested and concurrent parallel_for calls", "[thread_pool]") {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(
      4, [&](int64_t i) { pool.parallel_for(5, [&](int64_t j) { sum.fetch_add(i * 10 + j); }); });
  CHECK(sum.load() == (0 + 10 + 20 + 30) * 5 + 4 * (0 + 1 + 2 + 3 + 4));

  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep)
        pool.parallel_for(16, [&](int64_t i) { total.fetch_add(i); });
    });
  }
  for (auto& t : callers) t.join();
  CHECK(total.load() == 3 * 50 * (15 * 16 / 2));
}

TEST_CASE("parallel_for_ranges runs contiguous ranges, each on one thread, in order", "[thread_pool]") {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 5, 14, 100}) {
      std::mutex m;
      std::vector<std::pair<std::thread::id, int64_t>> order;  // (thread, index) as run
      parallel_for_ranges(pool, n, [&](int64_t i) {
        std::lock_guard<std::mutex> lock(m);
        order.push_back({std::this_thread::get_id(), i});
      });
      REQUIRE(static_cast<int64_t>(order.size()) == n);
      // Per thread, the indices it ran; every index once.
      std::map<std::thread::id, std::vector<int64_t>> by_thread;
      std::vector<int> hits(n, 0);
      for (const auto& [id, i] : order) {
        by_thread[id].push_back(i);
        ++hits[i];
      }
      for (int64_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
      // min(n, threads) ranges of the runtime's split (n * r / ranges), each run by one thread
      // in ascending order: a thread's indices break only where one range ends and another
      // begins (a thread may run two ranges when another is slow to start).
      const int64_t ranges = std::min<int64_t>(n, threads);
      std::set<int64_t> bounds;
      for (int64_t r = 0; r <= ranges; ++r) bounds.insert(ranges ? n * r / ranges : 0);
      for (const auto& [id, is] : by_thread) {
        REQUIRE(bounds.count(is.front()) == 1);
        REQUIRE(bounds.count(is.back() + 1) == 1);
        for (size_t k = 1; k < is.size(); ++k) {
          REQUIRE(is[k] > is[k - 1]);
          if (is[k] != is[k - 1] + 1) {
            REQUIRE(bounds.count(is[k - 1] + 1) == 1);
            REQUIRE(bounds.count(is[k]) == 1);
          }
        }
      }
      CHECK(static_cast<int64_t>(by_thread.size()) <= ranges);
    }
  }
}
