// te_matmul_bench: f32 matmul C = A x B (B a constant, as a dense layer's weight) through
// collage's TE dense library — B pre-packed into column panels, register-tiled micro-kernel
// accumulated via cache_write, JIT compiled for a target, run as tasks on a ThreadPool — with its
// default schedule and after tuning, against oneDNN's matmul (weights in its preferred layout,
// reordered ahead of time, its ISA capped like the target's), measured alternately in the same
// process, one shape after another.
//
//   te_matmul_bench [--threads=2] [--tasks=0] [--shapes=1024x1024x1024,...] [--reps=30]
//                   [--budget=10] [--target=host|avx2|avx512|CPU] [--knobs=mr=6,mb=32,...]
//                   [--cpu-time]
//
// --shapes lists MxNxK (default 1024x1024x1024; --m= --n= --k= set a single one); --target the
// CPU the kernel is compiled for (an AVX2 target runs on an AVX-512 machine: oneDNN is then
// capped at AVX2 too, as the peer an AVX2 host would get); --budget the tuning time per shape in
// seconds (0: default schedule only); --knobs a configuration measured beside the default
// instead of tuning; --tasks the tasks per kernel call (0: 4 per thread, which the pool hands
// out as threads become free, so that a thread slowed down by another process on a shared
// machine takes fewer of them); --cpu-time runs everything on one thread and times the runs by
// that thread's CPU time (on a loaded machine, what the kernel itself costs). Per shape the
// report gives the median GFLOP/s of each side over
// the repetitions (taken in alternating blocks) and their ratio.
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "collage/target.h"
#include "collage/context.h"
#include "dnnl.hpp"
#include "te_bench_util.h"
#include "te_ops/conv_dense_templates.h"
#include "tune/group_kernel.h"
#include "tune/tuner.h"

using namespace collage;
using namespace collage::bench;

namespace {

struct Shape3 {
  int64_t m = 1024, n = 1024, k = 1024;
};

struct Options {
  int threads = 2;
  int tasks = 0;
  std::vector<Shape3> shapes;
  Shape3 single;
  int reps = 30;
  double budget = 10;
  std::string target = "host";
  std::string knobs;
  bool cpu_clock = false;
};

// "MxNxK,MxNxK"; empty on a malformed list.
std::vector<Shape3> parse_shapes(const std::string& text) {
  std::vector<Shape3> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    Shape3 s;
    if (std::sscanf(text.substr(pos, end - pos).c_str(), "%ldx%ldx%ld", &s.m, &s.n, &s.k) != 3)
      return {};
    out.push_back(s);
    pos = end + 1;
  }
  return out;
}

// "mr=6,mb=32"; nullopt when malformed.
std::optional<tune::Knobs> parse_knobs(const std::string& text) {
  tune::Knobs k;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(pos, end - pos);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) return std::nullopt;
    k[item.substr(0, eq)] = std::atoll(item.c_str() + eq + 1);
    pos = end + 1;
  }
  return k;
}

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
      o.single.m = std::atoll(v);
    else if (const char* v = value("--n="))
      o.single.n = std::atoll(v);
    else if (const char* v = value("--k="))
      o.single.k = std::atoll(v);
    else if (const char* v = value("--shapes="))
      o.shapes = parse_shapes(v);
    else if (const char* v = value("--target="))
      o.target = v;
    else if (const char* v = value("--knobs="))
      o.knobs = v;
    else if (std::strcmp(a, "--cpu-time") == 0)
      o.cpu_clock = true;
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
  if (o.shapes.empty()) o.shapes = {o.single};
  if (o.cpu_clock) o.threads = o.tasks = 1;
  return o;
}

Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::f32, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return t;
}

struct ShapeResult {
  double default_gf = 0, tuned_gf = 0, dnnl_gf = 0, max_diff = 0;
};

absl::StatusOr<ShapeResult> bench_shape(const Options& o, const Shape3& sh,
                                        const codegen::TargetSpec& target, ThreadPool& pool,
                                        const dnnl::engine& eng, dnnl::stream& strm) {
  const double gflop = 2.0 * sh.m * sh.n * sh.k / 1e9;
  const Tensor a = random_tensor({sh.m, sh.k}, 42), b = random_tensor({sh.k, sh.n}, 43);

  // collage: the MatMul group of a one-node graph (B constant), as the native backend builds it.
  Context ctx;
  GraphBuilder gb(ctx, "matmul");
  ValueId av = gb.add_input("a", a.type());
  ValueId bv = gb.add_constant("b", b);
  auto mm = gb.add("MatMul", {av, bv});
  gb.add_output(*mm);
  auto g = gb.finish();
  if (!g.ok()) return g.status();
  std::vector<te_ops::TuningTask> tasks =
      te_ops::conv_dense_tuning_tasks(*g, target, o.threads, nullptr);
  if (tasks.size() != 1) return absl::InternalError("no tuning task for the matmul");
  te_ops::TuningTask& task = tasks[0];
  tune::Knobs tuned = task.schedule.defaults;
  if (!o.knobs.empty()) {
    const std::optional<tune::Knobs> given = parse_knobs(o.knobs);
    if (!given) return absl::InvalidArgumentError("--knobs: expected NAME=VALUE,...");
    for (const auto& [name, value] : *given) tuned[name] = value;
  } else if (o.budget > 0) {
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
    std::printf("  tuning: %d configurations in %.1f s\n", r.trials, r.seconds);
  }
  std::printf("  default %s; other %s\n", tune::to_string(task.schedule.defaults).c_str(),
              tune::to_string(tuned).c_str());
  auto build = [&](const tune::Knobs& k) -> absl::StatusOr<tune::GroupKernel> {
    absl::StatusOr<te_ops::ScheduledGroup> s = task.schedule.apply(k);
    if (!s.ok()) return s.status();
    absl::StatusOr<tune::GroupKernel> kernel = tune::GroupKernel::compile(task.group, *s);
    if (!kernel.ok()) return kernel.status();
    if (absl::Status st = kernel->bind({a, b}); !st.ok()) return st;
    return kernel;
  };
  absl::StatusOr<tune::GroupKernel> kd = build(task.schedule.defaults), kt = build(tuned);
  if (!kd.ok()) return kd.status();
  if (!kt.ok()) return kt.status();

  // oneDNN: weights reordered once into the layout the primitive prefers.
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc a_md({sh.m, sh.k}, dt::f32, tag::ab), b_plain({sh.k, sh.n}, dt::f32, tag::ab),
      b_any({sh.k, sh.n}, dt::f32, tag::any), c_md({sh.m, sh.n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  std::printf("  oneDNN implementation: %s\n", pd.impl_info_str());
  Tensor c_dnnl(DType::f32, {sh.m, sh.n});
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
    double (*clock)() = o.cpu_clock ? thread_cpu_ms : now_ms;
    measure_block([&] { kd->run(o.tasks, &pool); }, n, t_def, clock);
    measure_block([&] { kt->run(o.tasks, &pool); }, n, t_te, clock);
    measure_block(run_dnnl, n, t_dnnl, clock);
  }
  ShapeResult r;
  const float* c_te = kt->outputs()[0].data<float>();
  for (int64_t i = 0; i < c_dnnl.numel(); ++i)
    r.max_diff = std::max(r.max_diff, double(std::fabs(c_te[i] - c_dnnl.data<float>()[i])));
  r.default_gf = gflop / median(t_def) * 1e3;
  r.tuned_gf = gflop / median(t_te) * 1e3;
  r.dnnl_gf = gflop / median(t_dnnl) * 1e3;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  absl::StatusOr<codegen::TargetSpec> target = codegen::TargetSpec::named(o.target);
  if (target.ok())
    if (absl::Status s = target->runs_on(codegen::TargetSpec::host()); !s.ok()) target = s;
  if (!target.ok()) {
    std::fprintf(stderr, "--target: %s\n", target.status().ToString().c_str());
    return 1;
  }
  // oneDNN capped at the target's ISA (before it creates any primitive).
  if (!target->has_feature("avx512f")) dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
  omp_set_num_threads(o.threads);
  std::printf("te_matmul_bench: f32, %d threads, %d tasks per call, target %s, %d reps, %s\n",
              o.threads, o.tasks, target->to_string().c_str(), o.reps,
              o.cpu_clock ? "thread CPU time" : "wall time");
  ThreadPool pool(o.threads);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  int status = 0;
  std::printf(
      "| M x N x K | collage default GFLOP/s | collage %s GFLOP/s | oneDNN GFLOP/s | default / "
      "oneDNN | %s / oneDNN |\n",
      o.knobs.empty() ? "tuned" : "knobs", o.knobs.empty() ? "tuned" : "knobs");
  std::vector<std::string> rows;
  for (const Shape3& sh : o.shapes) {
    std::printf("%lldx%lldx%lld:\n", static_cast<long long>(sh.m), static_cast<long long>(sh.n),
                static_cast<long long>(sh.k));
    absl::StatusOr<ShapeResult> r = bench_shape(o, sh, *target, pool, eng, strm);
    if (!r.ok()) {
      std::fprintf(stderr, "collage matmul failed: %s\n", r.status().ToString().c_str());
      return 1;
    }
    char row[256];
    std::snprintf(row, sizeof row, "| %lldx%lldx%lld | %.1f | %.1f | %.1f | %.2f | %.2f |",
                  static_cast<long long>(sh.m), static_cast<long long>(sh.n),
                  static_cast<long long>(sh.k), r->default_gf, r->tuned_gf, r->dnnl_gf,
                  r->default_gf / r->dnnl_gf, r->tuned_gf / r->dnnl_gf);
    rows.push_back(row);
    std::printf("%s   max |difference| %.2e\n", row, r->max_diff);
    if (r->max_diff >= 1e-2) status = 2;
  }
  std::printf("\nmedians of %d runs each, alternating blocks of 5:\n", o.reps);
  for (const std::string& row : rows) std::printf("%s\n", row.c_str());
  print_load();
  return status;
}
