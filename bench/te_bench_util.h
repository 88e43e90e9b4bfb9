// Helpers shared by the generated-code benchmarks: clocks (wall and thread CPU time), medians,
// alternating measurement blocks and the machine's load.
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <vector>

namespace collage::bench {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU time of the calling thread: with one thread (and a library kept to it), a run's CPU time
// is its own work, whatever other processes take of the core in between.
inline double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

inline double best(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

// Runs `run` back to back: first for at least 20 ms unmeasured (so that the other runtime's idle
// threads, which spin for several milliseconds after their last parallel region, have gone to
// sleep and this one's are awake), then `count` measured times, appended to `times`.
// `clock` times the measured runs (now_ms: wall time; thread_cpu_ms for single-threaded runs).
template <typename F>
void measure_block(F&& run, int count, std::vector<double>& times, double (*clock)() = now_ms) {
  const double start = now_ms();
  do {
    run();
  } while (now_ms() - start < 20.0);
  for (int i = 0; i < count; ++i) {
    double t0 = clock();
    run();
    times.push_back(clock() - t0);
  }
}

// Shared machines drift: the load says how much to trust the figures.
inline void print_load() {
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) std::printf("load average: %s", buf);
    std::fclose(f);
  }
}

}  // namespace collage::bench
