// te_matmul_bench: f32 matmul C = A x B through collage's tensor expressions (B packed into
// column panels ahead of time, register-tiled micro-kernel accumulated via cache_write, JIT
// compiled, run as tasks on a ThreadPool) against oneDNN's matmul (weights in its preferred
// layout, reordered ahead of time), measured alternately in the same process.
//
//   te_matmul_bench [--threads=2] [--tasks=8] [--m=1024] [--n=1024] [--k=1024] [--reps=30]
//
// A few tile shapes are timed first and the fastest is kept (a minimal tuner); the report gives
// the median GFLOP/s of each side over the repetitions (taken in alternating blocks) and their
// ratio.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codegen/llvm/jit.h"
#include "collage/schedule.h"
#include "dnnl.hpp"

using namespace collage;
namespace te = collage::te;

namespace {

struct Options {
  int threads = 2;
  int tasks = 0;  // tasks per collage kernel call; 0: 4 per thread (1 with one thread)
  int64_t m = 1024, n = 1024, k = 1024;
  int reps = 30;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    auto value = [&](const char* name) -> const char* {
      size_t len = std::strlen(name);
      return std::strncmp(a, name, len) == 0 ? a + len : nullptr;
    };
    if (const char* v = value("--threads="))
      o.threads = std::atoi(v);
    else if (const char* v = value("--m="))
      o.m = std::atoll(v);
    else if (const char* v = value("--n="))
      o.n = std::atoll(v);
    else if (const char* v = value("--k="))
      o.k = std::atoll(v);
    else if (const char* v = value("--reps="))
      o.reps = std::atoi(v);
    else if (const char* v = value("--tasks="))
      o.tasks = std::atoi(v);
    else
      std::fprintf(stderr, "ignoring unknown argument %s\n", a);
  }
  o.threads = std::max(o.threads, 1);
  o.reps = std::max(o.reps, 3);
  return o;
}

// Tile shape of the TE schedule: mr rows x (nv vectors of `lanes` floats) accumulated in
// registers, row blocks of mb rows handed out to tasks; pack_a also repacks each row block of A
// (mr-row panels, contiguous along k) before its tiles use it.
struct Tiles {
  int64_t mr, nv, mb;
  bool pack_a;
};

struct TeMatmul {
  std::unique_ptr<codegen::JitModule> module;
  codegen::KernelFn pack = nullptr, matmul = nullptr;
  int64_t packed_elements = 0;
};

absl::StatusOr<TeMatmul> build_te_matmul(const Options& o, Tiles t, int lanes) {
  const int64_t M = o.m, N = o.n, K = o.k, nr = t.nv * lanes;
  const int64_t panels = (N + nr - 1) / nr;
  te::Tensor A = te::placeholder({M, K}, DType::f32, "A");
  te::Tensor B = te::placeholder({K, N}, DType::f32, "B");
  // B in panels of nr columns: Bp[jo, k, jl] = B[k, jo*nr + jl] (zero past the last column).
  te::Tensor Bp = te::compute(
      {panels, K, nr},
      [&](te::Var jo, te::Var k, te::Var jl) {
        te::Expr j = jo * nr + jl;
        return te::select(j < N, B(k, te::minimum(j, N - 1)), 0.0f);
      },
      "Bp");
  // A in panels of mr rows: Ap[io, k, ii] = A[io*mr + ii, k] (zero past the last row).
  te::Tensor Ap = te::compute(
      {(M + t.mr - 1) / t.mr, K, t.mr},
      [&](te::Var io, te::Var k, te::Var ii) {
        te::Expr i = io * t.mr + ii;
        return te::select(i < M, A(te::minimum(i, M - 1), k), 0.0f);
      },
      "Ap");
  te::IterVar k = te::reduce_axis({0, K}, "k");
  te::Tensor C = te::compute(
      {M, N},
      [&](te::Var i, te::Var j) {
        te::Expr a = t.pack_a ? Ap(te::floordiv(i, t.mr), k, te::floormod(i, t.mr)) : A(i, k);
        return te::sum(a * Bp(te::floordiv(j, nr), k, te::floormod(j, nr)), {k});
      },
      "C");

  te::Schedule s = te::create_schedule({C});
  te::Tensor CC = s.cache_write(C);
  s[Bp].pack();
  auto [pv, pl] = s[Bp].split(Bp.axis(2), lanes);
  s[Bp].vectorize(pl);
  // C: row blocks (parallel) > column panels > micro-tiles of mr rows; CC accumulates one
  // mr x nr micro-tile over all of k in registers.
  auto [ib, irest] = s[C].split(C.axis(0), t.mb);
  auto [jo, jt] = s[C].split(C.axis(1), nr);
  auto [im, it] = s[C].split(irest, t.mr);
  s[C].reorder({ib, jo, im, it, jt});
  s[C].parallel(ib);
  auto [jto, jti] = s[C].split(jt, lanes);
  s[C].vectorize(jti);
  s[CC].compute_at(s[C], im);
  auto [cjo, cji] = s[CC].split(CC.axis(1), lanes);
  s[CC].reorder({s[CC].reduce_axis(0), CC.axis(0), cjo, cji});
  s[CC].unroll(CC.axis(0)).unroll(cjo).vectorize(cji);
  if (t.pack_a) {
    s[Ap].compute_at(s[C], ib);
    s[Ap].unroll(Ap.axis(2));
  }

  absl::StatusOr<te::PrimFunc> main = te::lower(s, {A, Bp, C}, "matmul");
  if (!main.ok()) return main.status();
  absl::StatusOr<te::PrimFunc> pack = te::lower_pack(s, Bp, {B, Bp}, "pack");
  if (!pack.ok()) return pack.status();
  absl::StatusOr<std::unique_ptr<codegen::JitModule>> m =
      codegen::JitModule::compile({*main, *pack});
  if (!m.ok()) return m.status();
  TeMatmul r;
  r.module = std::move(*m);
  r.matmul = *r.module->lookup("matmul");
  r.pack = *r.module->lookup("pack");
  r.packed_elements = panels * K * nr;
  return r;
}

// A float buffer aligned to 64 bytes, as collage tensors are (so that vectors do not straddle
// cache lines).
class Floats {
 public:
  Floats() = default;
  explicit Floats(size_t n)
      : n_(n),
        p_(static_cast<float*>(std::aligned_alloc(64, ((n * sizeof(float) + 63) / 64) * 64))) {
    std::fill(p_.get(), p_.get() + n, 0.f);
  }
  float* data() const { return p_.get(); }
  size_t size() const { return n_; }
  float& operator[](size_t i) const { return p_[i]; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  size_t n_ = 0;
  std::unique_ptr<float[], Free> p_;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const double gflop = 2.0 * o.m * o.n * o.k / 1e9;
  codegen::TargetSpec host = codegen::TargetSpec::host();
  const int lanes = std::max(host.vector_bytes() / 4, 4);
  std::printf("te_matmul_bench: f32 %lldx%lldx%lld, %d threads, %s, %d-lane vectors\n",
              static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k),
              o.threads, host.to_string().c_str(), lanes);

  Floats a(o.m * o.k), b(o.k * o.n), c_te(o.m * o.n), c_dnnl(o.m * o.n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = dist(rng);
  for (size_t i = 0; i < b.size(); ++i) b[i] = dist(rng);

  // collage: pick the fastest of a few tile shapes. The kernel's parallel loop is split into more
  // tasks than threads, which the pool hands out as threads become free: a thread slowed down by
  // another process on a shared machine then takes fewer of them.
  ThreadPool pool(o.threads);
  const int tasks = o.tasks > 0 ? o.tasks : o.threads == 1 ? 1 : 4 * o.threads;
  std::printf("collage kernels run as %d tasks on a pool of %d threads\n", tasks, o.threads);
  TeMatmul best;
  Floats bp;
  double best_ms = 1e30;
  for (Tiles t : {Tiles{8, 2, 64, false}, Tiles{8, 2, 64, true}, Tiles{8, 2, 32, true},
                  Tiles{4, 4, 64, true}}) {
    absl::StatusOr<TeMatmul> mm = build_te_matmul(o, t, lanes);
    if (!mm.ok()) {
      std::fprintf(stderr, "collage matmul failed: %s\n",
                   std::string(mm.status().message()).c_str());
      return 1;
    }
    Floats packed(mm->packed_elements);
    void* pack_args[] = {b.data(), packed.data()};
    mm->pack(pack_args, 0, 1);
    void* args[] = {a.data(), packed.data(), c_te.data()};
    std::vector<double> times;
    for (int r = 0; r < 5; ++r) {
      double t0 = now_ms();
      codegen::run_kernel(mm->matmul, args, tasks, &pool);
      times.push_back(now_ms() - t0);
    }
    double ms = median(times);
    std::printf("  tile %lldx%lld, row block %lld%s: %.1f GFLOP/s\n", static_cast<long long>(t.mr),
                static_cast<long long>(t.nv * lanes), static_cast<long long>(t.mb),
                t.pack_a ? ", A packed" : "", gflop / ms * 1e3);
    if (ms < best_ms) {
      best_ms = ms;
      best = std::move(*mm);
      bp = std::move(packed);
    }
  }

  // oneDNN: weights reordered once into the layout the primitive prefers.
  omp_set_num_threads(o.threads);
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  dnnl::memory::desc a_md({o.m, o.k}, dt::f32, tag::ab), b_plain({o.k, o.n}, dt::f32, tag::ab),
      b_any({o.k, o.n}, dt::f32, tag::any), c_md({o.m, o.n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  dnnl::memory a_mem(a_md, eng, a.data()), b_src(b_plain, eng, b.data()),
      c_mem(c_md, eng, c_dnnl.data());
  dnnl::memory b_mem(pd.weights_desc(), eng);
  dnnl::reorder(b_src, b_mem).execute(strm, b_src, b_mem);
  dnnl::matmul mm(pd);
  auto run_dnnl = [&] {
    mm.execute(strm, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    strm.wait();
  };
  void* args[] = {a.data(), bp.data(), c_te.data()};
  auto run_te = [&] { codegen::run_kernel(best.matmul, args, tasks, &pool); };

  // The two sides alternate in blocks of runs (one parallel runtime active at a time).
  std::vector<double> t_te, t_dnnl;
  const int block = 5;
  for (int done = 0; done < o.reps; done += block) {
    measure_block(run_te, std::min(block, o.reps - done), t_te);
    measure_block(run_dnnl, std::min(block, o.reps - done), t_dnnl);
  }

  double max_diff = 0;
  for (size_t i = 0; i < c_te.size(); ++i)
    max_diff = std::max(max_diff, double(std::fabs(c_te[i] - c_dnnl[i])));
  const double te_gf = gflop / median(t_te) * 1e3, dnnl_gf = gflop / median(t_dnnl) * 1e3;
  std::printf("collage TE matmul: %7.1f GFLOP/s (median of %d, best %.1f)\n", te_gf, o.reps,
              gflop / *std::min_element(t_te.begin(), t_te.end()) * 1e3);
  std::printf("oneDNN matmul:     %7.1f GFLOP/s (median of %d, best %.1f)\n", dnnl_gf, o.reps,
              gflop / *std::min_element(t_dnnl.begin(), t_dnnl.end()) * 1e3);
  const double best_ratio =
      *std::min_element(t_dnnl.begin(), t_dnnl.end()) / *std::min_element(t_te.begin(), t_te.end());
  std::printf("ratio collage/oneDNN: %.2f (medians), %.2f (bests)   max |difference|: %.2e\n",
              te_gf / dnnl_gf, best_ratio, max_diff);
  // Shared machines drift: the load says how much to trust the figures.
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) std::printf("load average: %s", buf);
    std::fclose(f);
  }
  return max_diff < 1e-2 ? 0 : 2;
}
