// te_conv_bench: ResNet-50's 3x3 convolutions (batch 1, pads 1, + bias) through collage's TE conv
// library (blocked NCHWc schedule: NCHW in and out, data packed inside the kernel, weight
// pre-packed), default schedule and after tuning, against oneDNN's convolution in its preferred
// blocked layout (src/weights reordered ahead of time, not timed), measured alternately.
//
//   te_conv_bench [--threads=2] [--tasks=0] [--budget=20] [--reps=20] [--log=PATH] [--only=C]
//
// --budget is the tuning time per shape in seconds (0: default schedule only); the report gives
// the tuning time, the median GFLOP/s of each side and their ratio.
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collage/context.h"
#include "collage/ops/nn.h"
#include "collage/placement.h"
#include "dnnl.hpp"
#include "te_bench_util.h"
#include "te_ops/conv_dense_templates.h"
#include "tune/group_kernel.h"
#include "tune/tuner.h"
#include "collage/tuning_log.h"

using namespace collage;
using namespace collage::bench;

namespace {

struct Options {
  int threads = 2;
  int tasks = 0;  // 0: the thread count
  double budget = 20;
  int reps = 20;
  std::string log;
  int64_t only = 0;
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
      o.threads = std::max(1, std::atoi(v));
    else if (const char* v = value("--tasks="))
      o.tasks = std::atoi(v);
    else if (const char* v = value("--budget="))
      o.budget = std::atof(v);
    else if (const char* v = value("--reps="))
      o.reps = std::max(3, std::atoi(v));
    else if (const char* v = value("--log="))
      o.log = v;
    else if (const char* v = value("--only="))
      o.only = std::atoll(v);
    else
      std::fprintf(stderr, "ignoring unknown argument %s\n", a);
  }
  if (o.tasks <= 0) o.tasks = o.threads;
  return o;
}

Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::f32, std::move(shape));
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  return t;
}

// oneDNN's convolution in its preferred (blocked) layouts, with the input and weight reordered
// once ahead of time.
struct DnnlConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, bias, dst;
  dnnl::memory user_dst;
  std::string impl;  // the implementation oneDNN chose

  DnnlConv(int64_t c, int64_t hw, const Tensor& x, const Tensor& w, const Tensor& b, float* out) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::dims xd = {1, c, hw, hw}, wd = {c, c, 3, 3};
    // nChw16c activations (oneDNN's blocked layout; with `any` it picks NHWC brgconv here);
    // the weight in whatever layout the primitive prefers.
    dnnl::memory::desc src_any(xd, dt::f32, tag::nChw16c), w_any(wd, dt::f32, tag::any),
        b_md({c}, dt::f32, tag::a), dst_any(xd, dt::f32, tag::nChw16c);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src_any, w_any, b_md,
                                      dst_any, {1, 1}, {1, 1}, {1, 1});
    dnnl::convolution_forward::primitive_desc pd(d, eng);
    dnnl::memory user_src({xd, dt::f32, tag::nchw}, eng, const_cast<void*>(x.raw()));
    dnnl::memory user_w({wd, dt::f32, tag::oihw}, eng, const_cast<void*>(w.raw()));
    user_dst = dnnl::memory({xd, dt::f32, tag::nchw}, eng, out);
    src = dnnl::memory(pd.src_desc(), eng);
    weights = dnnl::memory(pd.weights_desc(), eng);
    dst = dnnl::memory(pd.dst_desc(), eng);
    bias = dnnl::memory(b_md, eng, const_cast<void*>(b.raw()));
    dnnl::reorder(user_src, src).execute(strm, user_src, src);
    dnnl::reorder(user_w, weights).execute(strm, user_w, weights);
    strm.wait();
    conv = dnnl::convolution_forward(pd);
    impl = pd.impl_info_str();
  }
  void run() {
    conv.execute(strm, {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, weights},
                        {DNNL_ARG_BIAS, bias},
                        {DNNL_ARG_DST, dst}});
    strm.wait();
  }
  // The result in NCHW (in the buffer given to the constructor).
  void unpack() {
    dnnl::reorder(dst, user_dst).execute(strm, dst, user_dst);
    strm.wait();
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const codegen::TargetSpec host = codegen::TargetSpec::host();
  std::printf("te_conv_bench: ResNet-50 3x3 convs + bias, batch 1, %d threads, %d tasks, %s, "
              "tuning budget %.0f s per shape\n",
              o.threads, o.tasks, host.to_string().c_str(), o.budget);
  omp_set_num_threads(o.threads);
  ThreadPool pool(o.threads);
  Context ctx;
  std::string device = "?";
  if (auto d = device_fingerprint(); d.ok()) device = *d;
  std::printf("%-12s %9s %9s %9s %9s %7s %8s  %s\n", "shape", "default", "tuned", "oneDNN",
              "GFLOP/s", "ratio", "tune s", "tuned knobs");
  double total_tune = 0, sum_ratio = 0;
  int shapes = 0;
  for (int64_t c : {64, 128, 256, 512}) {
    if (o.only && o.only != c) continue;
    const int64_t hw = 56 * 64 / c;
    const Tensor x = random_tensor({1, c, hw, hw}, 3), w = random_tensor({c, c, 3, 3}, 1),
                 b = random_tensor({c}, 2);
    GraphBuilder gb(ctx, "conv");
    ValueId xv = gb.add_input("x", x.type());
    ValueId wv = gb.add_constant("w", w);
    ValueId bv = gb.add_constant("b", b);
    auto conv = gb.add("Conv", {xv, wv, bv}, make_attrs<ConvAttrs>([](ConvAttrs& a) {
                         a.pads = {1, 1, 1, 1};
                       }));
    gb.add_output(*conv);
    auto g = gb.finish();
    if (!g.ok()) {
      std::printf("graph: %s\n", g.status().ToString().c_str());
      return 1;
    }
    std::vector<te_ops::TuningTask> tasks =
        te_ops::conv_dense_tuning_tasks(*g, host, o.threads, nullptr);
    if (tasks.size() != 1) {
      std::printf("conv %lld: no TE task\n", static_cast<long long>(c));
      return 1;
    }
    te_ops::TuningTask& task = tasks[0];
    const double gflop = task.schedule.flops / 1e9;

    // Tuning.
    tune::Knobs tuned = task.schedule.defaults;
    double tune_s = 0;
    if (o.budget > 0) {
      tune::SearchOptions so;
      so.budget_s = o.budget;
      tune::MeasureOptions mo;
      mo.tasks = o.tasks;
      tune::SearchResult r = tune::search(
          task.schedule, tune::jit_measurer(task.group, task.schedule, &pool, mo), so,
          [&](int trials, double best_ms) {
            std::fprintf(stderr, "\rtune %lld: trial %3d, best %7.1f GFLOP/s ",
                         static_cast<long long>(c), trials,
                         best_ms > 0 ? gflop / best_ms * 1e3 : 0);
          });
      std::fprintf(stderr, "\n");
      tuned = r.best;
      tune_s = r.seconds;
      if (!o.log.empty() && r.best_ms > 0)
        (void)tune::append_record(o.log, {device, task.schedule.signature, r.best, r.best_ms,
                                          gflop / r.best_ms * 1e3});
    }
    total_tune += tune_s;
    auto build = [&](const tune::Knobs& k) -> absl::StatusOr<tune::GroupKernel> {
      absl::StatusOr<te_ops::ScheduledGroup> s = task.schedule.apply(k);
      if (!s.ok()) return s.status();
      absl::StatusOr<tune::GroupKernel> kernel = tune::GroupKernel::compile(task.group, *s);
      if (!kernel.ok()) return kernel.status();
      if (absl::Status st = kernel->bind({x, w, b}); !st.ok()) return st;
      return kernel;
    };
    absl::StatusOr<tune::GroupKernel> kd = build(task.schedule.defaults), kt = build(tuned);
    if (!kd.ok() || !kt.ok()) {
      std::printf("build failed: %s\n", (kd.ok() ? kt : kd).status().ToString().c_str());
      return 1;
    }
    Tensor ref(DType::f32, {1, c, hw, hw});
    DnnlConv dn(c, hw, x, w, b, ref.data<float>());
    if (c == 64 || o.only) std::printf("oneDNN implementation: %s\n", dn.impl.c_str());
    std::vector<double> t_def, t_tuned, t_dnnl;
    for (int done = 0; done < o.reps; done += 5) {
      const int n = std::min(5, o.reps - done);
      measure_block([&] { kd->run(o.tasks, &pool); }, n, t_def);
      measure_block([&] { kt->run(o.tasks, &pool); }, n, t_tuned);
      measure_block([&] { dn.run(); }, n, t_dnnl);
    }
    dn.unpack();
    double max_diff = 0, max_ref = 0;
    const float* got = kt->outputs()[0].data<float>();
    for (int64_t i = 0; i < ref.numel(); ++i) {
      max_diff = std::max(max_diff, double(std::fabs(got[i] - ref.data<float>()[i])));
      max_ref = std::max(max_ref, double(std::fabs(ref.data<float>()[i])));
    }
    const double md = median(t_def), mt = median(t_tuned), mn = median(t_dnnl);
    const double ratio = mn / mt;
    sum_ratio += ratio;
    ++shapes;
    char name[32];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld", static_cast<long long>(c),
                  static_cast<long long>(hw), static_cast<long long>(hw));
    std::printf("%-12s %7.3fms %7.3fms %7.3fms %9.1f %7.2f %8.1f  %s%s\n", name, md, mt, mn,
                gflop / mt * 1e3, ratio, tune_s, tune::to_string(tuned).c_str(),
                max_diff / std::max(max_ref, 1e-6) < 1e-4 ? "" : "  MISMATCH");
    std::fflush(stdout);
  }
  if (shapes)
    std::printf("mean ratio collage-tuned/oneDNN (GFLOP/s): %.2f; tuning time %.1f s in all\n",
                sum_ratio / shapes, total_tune);
  print_load();
  return 0;
}
