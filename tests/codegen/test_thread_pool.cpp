// ThreadPool: every index runs exactly once, the caller takes part, nested and concurrent calls.
#include <atomic>
#include <catch2/catch.hpp>
#include <set>
#include <thread>
#include <vector>

#include "collage/thread_pool.h"

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
