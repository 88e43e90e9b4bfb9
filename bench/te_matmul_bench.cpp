// te_matmul_bench: f32 matmul C = A x B (B a constant, as a dense layer's weight) through
// collage's TE dense library — B pre-packed into column panels, register-tiled micro-kernel
// accumulated via cache_write, JIT compiled, run as tasks on a ThreadPool — with its default
// schedule and after tuning, against oneDNN's matmul (weights in its preferred layout, reordered
// ahead of time), measured alternately in the same process.
//
//   te_matmul_bench [--threads=2] [--tasks=0] [--m=1024] [--n=1024] [--k=1024] [--reps=30]
//                   [--budget=10]
//
// --budget is the tuning time in seconds (0: default schedule only); --tasks the tasks per kernel
// call (0: 4 per thread, which the pool hands out as threads become free, so that a thread slowed
// down by another process on a shared machine takes fewer of them). The report gives the median
// GFLOP/s of each side over the repetitions (taken in alternating blocks) and their ratio.
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "collage/context.h"
#include "dnnl.hpp"
#include "te_bench_util.h"
#include "te_ops/conv_dense_templates.h"
#include "tune/group_kernel.h"
#include "tune/tuner.h"

using namespace collage;
using namespace collage::bench;

namespace {

struct Options {
  int threads = 2;
  int tasks = 0;
  int64_t m = 1024, n = 1024, k = 1024;
  int reps = 30;
  double budget = 10;
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
    else if (const char* v = value("--budget="))
      o.budget = std::atof(v);
    else
      std::fprintf(stderr, "ignoring unknown argument %s\n", a);
  }
  o.threads = std::max(o.threads, 1);
  o.reps = std::max(o.reps, 3);
  if (o.tasks <= 0) o.tasks = o.threads == 1 ? 1 : 4 * o.threads;
  return o;
}

Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::f32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const double gflop = 2.0 * o.m * o.n * o.k / 1e9;
  const codegen::TargetSpec host = codegen::TargetSpec::host();
  std::printf("te_matmul_bench: f32 %lldx%lldx%lld, %d threads, %d tasks per call, %s\n",
              static_cast<long long>(o.m), static_cast<long long>(o.n), static_cast<long long>(o.k),
              o.threads, o.tasks, host.to_string().c_str());
  const Tensor a = random_tensor({o.m, o.k}, 42), b = random_tensor({o.k, o.n}, 43);

  // collage: the MatMul group of a one-node graph (B constant), as the native backend builds it.
  Context ctx;
  GraphBuilder gb(ctx, "matmul");
  ValueId av = gb.add_input("a", a.type());
  ValueId bv = gb.add_constant("b", b);
  auto mm = gb.add("MatMul", {av, bv});
  gb.add_output(*mm);
  auto g = gb.finish();
  if (!g.ok()) {
    std::fprintf(stderr, "graph: %s\n", g.status().ToString().c_str());
    return 1;
  }
  std::vector<te_ops::TuningTask> tasks = te_ops::conv_dense_tuning_tasks(*g, host, o.threads, nullptr);
  if (tasks.size() != 1) return 1;
  te_ops::TuningTask& task = tasks[0];
  ThreadPool pool(o.threads);
  tune::Knobs tuned = task.schedule.defaults;
  if (o.budget > 0) {
    tune::SearchOptions so;
    so.budget_s = o.budget;
    tune::MeasureOptions mo;
    mo.tasks = o.tasks;
    tune::SearchResult r = tune::search(
        task.schedule, tune::jit_measurer(task.group, task.schedule, &pool, mo), so,
        [&](int trials, double best_ms) {
          std::fprintf(stderr, "\rtuning: trial %3d, best %7.1f GFLOP/s ", trials,
                       best_ms > 0 ? gflop / best_ms * 1e3 : 0);
        });
    std::fprintf(stderr, "\n");
    tuned = r.best;
    std::printf("tuning: %d configurations in %.1f s; default %s, tuned %s\n", r.trials,
                r.seconds, tune::to_string(task.schedule.defaults).c_str(),
                tune::to_string(tuned).c_str());
  }
  auto build = [&](const tune::Knobs& k) -> absl::StatusOr<tune::GroupKernel> {
    absl::StatusOr<te_ops::ScheduledGroup> s = task.schedule.apply(k);
    if (!s.ok()) return s.status();
    absl::StatusOr<tune::GroupKernel> kernel = tune::GroupKernel::compile(task.group, *s);
    if (!kernel.ok()) return kernel.status();
    if (absl::Status st = kernel->bind({a, b}); !st.ok()) return st;
    return kernel;
  };
  absl::StatusOr<tune::GroupKernel> kd = build(task.schedule.defaults), kt = build(tuned);
  if (!kd.ok() || !kt.ok()) {
    std::fprintf(stderr, "collage matmul failed: %s\n",
                 (kd.ok() ? kt : kd).status().ToString().c_str());
    return 1;
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
  Tensor c_dnnl(DType::f32, {o.m, o.n});
  dnnl::memory a_mem(a_md, eng, const_cast<void*>(a.raw())),
      b_src(b_plain, eng, const_cast<void*>(b.raw())), c_mem(c_md, eng, c_dnnl.raw());
  dnnl::memory b_mem(pd.weights_desc(), eng);
  dnnl::reorder(b_src, b_mem).execute(strm, b_src, b_mem);
  dnnl::matmul dmm(pd);
  auto run_dnnl = [&] {
    dmm.execute(strm, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    strm.wait();
  };

  // The contenders alternate in blocks of runs (one parallel runtime active at a time).
  std::vector<double> t_def, t_te, t_dnnl;
  for (int done = 0; done < o.reps; done += 5) {
    const int n = std::min(5, o.reps - done);
    measure_block([&] { kd->run(o.tasks, &pool); }, n, t_def);
    measure_block([&] { kt->run(o.tasks, &pool); }, n, t_te);
    measure_block(run_dnnl, n, t_dnnl);
  }
  double max_diff = 0;
  const float* c_te = kt->outputs()[0].data<float>();
  for (int64_t i = 0; i < c_dnnl.numel(); ++i)
    max_diff = std::max(max_diff, double(std::fabs(c_te[i] - c_dnnl.data<float>()[i])));
  const double def_gf = gflop / median(t_def) * 1e3, te_gf = gflop / median(t_te) * 1e3,
               dnnl_gf = gflop / median(t_dnnl) * 1e3;
  std::printf("collage TE default: %7.1f GFLOP/s (median of %d, best %.1f)\n", def_gf, o.reps,
              gflop / best(t_def) * 1e3);
  std::printf("collage TE tuned:   %7.1f GFLOP/s (median of %d, best %.1f)\n", te_gf, o.reps,
              gflop / best(t_te) * 1e3);
  std::printf("oneDNN matmul:      %7.1f GFLOP/s (median of %d, best %.1f)\n", dnnl_gf, o.reps,
              gflop / best(t_dnnl) * 1e3);
  std::printf("ratio collage/oneDNN: %.2f default, %.2f tuned (medians)   max |difference|: %.2e\n",
              def_gf / dnnl_gf, te_gf / dnnl_gf, max_diff);
  print_load();
  return max_diff < 1e-2 ? 0 : 2;
}
