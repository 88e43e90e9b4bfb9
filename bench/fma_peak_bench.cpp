// fma_peak_bench: the machine's measured f32 FMA peak, the yardstick of the model figures
// (bench/RESULTS.md: a model's FLOPs over its latency, against this). Each of --threads OpenMP
// threads runs chains of independent vector FMAs (AVX-512 where the CPU has it, else AVX2 + FMA)
// on registers only; the report is the median over --reps timed runs of GFLOP/s (2 per lane per
// FMA). --isa=avx2 times the AVX2 loop on an AVX-512 machine too: the peak of a forced AVX2 target.
//
//   fma_peak_bench [--threads=2] [--reps=15] [--isa=avx2]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr long kIters = 20'000'000;  // per thread and run
constexpr int kChains = 12;          // independent accumulators: covers FMA latency x 2 ports

// Returns the FLOPs done; `sink` keeps the result alive.
__attribute__((target("avx512f"))) double run_avx512(float* sink) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.9999f), b = _mm512_set1_ps(1e-6f);
  for (long it = 0; it < kIters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  *sink = lanes[0];
  return 2.0 * 16 * kChains * static_cast<double>(kIters);
}

__attribute__((target("avx2,fma"))) double run_avx2(float* sink) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.9999f), b = _mm256_set1_ps(1e-6f);
  for (long it = 0; it < kIters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  *sink = lanes[0];
  return 2.0 * 8 * kChains * static_cast<double>(kIters);
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, reps = 15;
  bool force_avx2 = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::max(1, std::atoi(argv[i] + 10));
    } else if (std::strncmp(argv[i], "--reps=", 7) == 0) {
      reps = std::max(1, std::atoi(argv[i] + 7));
    } else if (std::strcmp(argv[i], "--isa=avx2") == 0) {
      force_avx2 = true;
    } else {
      std::fprintf(stderr, "usage: fma_peak_bench [--threads=N] [--reps=N] [--isa=avx2]\n");
      return 2;
    }
  }
  const bool avx512 = !force_avx2 && __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr, "fma_peak_bench: the CPU has neither AVX-512 nor AVX2 + FMA\n");
    return 1;
  }
  std::vector<double> gflops;
  std::vector<float> sinks(threads);
  for (int r = 0; r < reps; ++r) {
    double flops = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads) reduction(+ : flops)
    {
      float* sink = &sinks[omp_get_thread_num()];
      flops += avx512 ? run_avx512(sink) : run_avx2(sink);
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gflops.push_back(flops / s * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  std::printf("%s, %d threads: median %.1f GFLOP/s (min %.1f, max %.1f over %d runs; sink %g)\n",
              avx512 ? "AVX-512" : "AVX2+FMA", threads, gflops[gflops.size() / 2], gflops.front(),
              gflops.back(), reps, static_cast<double>(sinks[0]));
  return 0;
}
