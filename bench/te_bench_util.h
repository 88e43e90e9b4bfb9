// Helpers shared by the generated-code benchmarks: clocks, medians, alternating measurement
// blocks and the machine's load.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace collage::bench {

inline double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
template <typename F>
void measure_block(F&& run, int count, std::vector<double>& times) {
  const double start = now_ms();
  do {
    run();
  } while (now_ms() - start < 20.0);
  for (int i = 0; i < count; ++i) {
    double t0 = now_ms();
    run();
    times.push_back(now_ms() - t0);
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
