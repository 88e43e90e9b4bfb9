// te_matmul: write your own operator in collage's tensor expressions. A matmul is declared, given a
// TVM-style CPU schedule (B packed into column panels, register tiles accumulated in a local
// buffer, the micro-kernel unrolled and vectorized, row blocks spread over threads), lowered,
// JIT-compiled, checked against a plain loop and timed.
//
//   te_matmul [size]    (default 512)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "collage/jit.h"
#include "collage/schedule.h"
#include "collage/thread_pool.h"

using namespace collage;
namespace te = collage::te;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  if (n < 1) {
    std::fprintf(stderr, "usage: te_matmul [size >= 1]\n");
    return 1;
  }
  const int64_t M = n, N = n, K = n;
  const int lanes = codegen::TargetSpec::host().vector_bytes() / 4;  // floats per SIMD register
  const int64_t nr = 2 * lanes;                                      // columns per register tile
  const int64_t mr = 8;                                              // rows per register tile

  // 1. The algorithm: C[i, j] = sum_k A[i, k] * B[k, j], reading B through a packed copy
  //    Bp[j / nr, k, j % nr] so that the micro-kernel reads it contiguously.
  te::Tensor A = te::placeholder({M, K}, DType::f32, "A");
  te::Tensor B = te::placeholder({K, N}, DType::f32, "B");
  const int64_t panels = (N + nr - 1) / nr;
  te::Tensor Bp = te::compute(
      {panels, K, nr},
      [&](te::Var jo, te::Var k, te::Var jl) {
        te::Expr j = jo * nr + jl;
        return te::select(j < N, B(k, te::minimum(j, N - 1)), 0.0f);
      },
      "Bp");
  te::IterVar k = te::reduce_axis({0, K}, "k");
  te::Tensor C = te::compute(
      {M, N},
      [&](te::Var i, te::Var j) {
        return te::sum(A(i, k) * Bp(te::floordiv(j, nr), k, te::floormod(j, nr)), {k});
      },
      "C");

  // 2. The schedule.
  te::Schedule s = te::create_schedule({C});
  te::Tensor CC = s.cache_write(C);  // the accumulator tile, kept in registers
  s[Bp].pack();                      // a separate kernel, run once for constant weights
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), mr, nr);
  s[C].parallel(io);
  auto [jvo, jvi] = s[C].split(ji, lanes);
  s[C].vectorize(jvi);
  s[CC].compute_at(s[C], jo);
  auto [cjo, cji] = s[CC].split(CC.axis(1), lanes);
  s[CC].reorder({s[CC].reduce_axis(0), CC.axis(0), cjo, cji});
  s[CC].unroll(CC.axis(0)).unroll(cjo).vectorize(cji);

  // 3. Lower to loops and compile.
  absl::StatusOr<te::PrimFunc> matmul = te::lower(s, {A, Bp, C}, "matmul");
  absl::StatusOr<te::PrimFunc> pack = te::lower_pack(s, Bp, {B, Bp}, "pack");
  if (!matmul.ok() || !pack.ok()) {
    std::fprintf(stderr, "lowering failed: %s\n",
                 std::string((matmul.ok() ? pack.status() : matmul.status()).message()).c_str());
    return 1;
  }
  std::printf("%s", te::to_string(*matmul).c_str());
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> module =
      codegen::JitModule::compile({*matmul, *pack});
  if (!module.ok()) {
    std::fprintf(stderr, "compilation failed: %s\n",
                 std::string(module.status().message()).c_str());
    return 1;
  }
  codegen::KernelFn matmul_fn = *(*module)->lookup("matmul");
  codegen::KernelFn pack_fn = *(*module)->lookup("pack");

  // 4. Run: pack B once, then the matmul as tasks on a thread pool.
  std::vector<float> a(M * K), b(K * N), bp(panels * K * nr), c(M * N);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);
  void* pack_args[] = {b.data(), bp.data()};
  pack_fn(pack_args, 0, 1);
  void* args[] = {a.data(), bp.data(), c.data()};
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ThreadPool pool(threads);
  codegen::run_kernel(matmul_fn, args, threads, &pool);

  double max_err = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t kk = 0; kk < K; ++kk) ref += double(a[i * K + kk]) * b[kk * N + j];
      max_err = std::max(max_err, std::fabs(ref - c[i * N + j]));
    }
  }
  double best_ms = 1e30;
  for (int r = 0; r < 10; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    codegen::run_kernel(matmul_fn, args, threads, &pool);
    best_ms = std::min(
        best_ms,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("matmul %lldx%lldx%lld on %d threads: %.1f GFLOP/s, max |error| %.2e\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K),
              threads, 2.0 * M * N * K / best_ms / 1e6, max_err);
  return max_err < 1e-3 * K ? 0 : 1;
}
