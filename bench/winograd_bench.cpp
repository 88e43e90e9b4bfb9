// winograd_bench: 3x3 stride-1 convolutions (+ bias + Relu, batch 1, pads 1) of ResNet-50 and of
// VGG-style 56x56 layers, as the native backend builds them between native convolutions (input
// and output channel-blocked: nChw16c, nChw8c on an AVX2 target): the direct blocked kernel, the
// Winograd one (F(4x4,3x3) and F(2x2,3x3)), and oneDNN's direct convolution in the same layout
// (input and weight reordered ahead of time, not timed), measured alternately in blocks. Prints the medians, Winograd's speedup over
// direct and its ratio to oneDNN, and the largest error of each relative to the largest
// magnitude of a double-precision reference.
//
//   winograd_bench [--threads=1] [--reps=20] [--target=CPU]
//
// --threads=1 times each run by the thread's CPU time (the work, whatever other processes take
// of the core); more threads by wall time on a thread pool (oneDNN with as many OpenMP threads).
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "collage/backends/native.h"
#include "collage/context.h"
#include "collage/ops/nn.h"
#include "collage/subgraph.h"
#include "collage/thread_pool.h"
#include "dnnl.hpp"
#include "te_bench_util.h"

using namespace collage;
using namespace collage::bench;

namespace {

struct Options {
  int threads = 1;
  int reps = 20;
  std::string target;
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
    else if (const char* v = value("--reps="))
      o.reps = std::max(5, std::atoi(v));
    else if (const char* v = value("--target="))
      o.target = v;
    else
      std::fprintf(stderr, "ignoring unknown argument %s\n", a);
  }
  return o;
}

Tensor random_tensor(Shape shape, uint32_t seed, float scale) {
  Tensor t(DType::f32, std::move(shape));
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = (static_cast<float>(s >> 8) / 16777216.f - 0.5f) * scale;
  }
  return t;
}

// Relu(conv3x3(x) + b) in double precision, NCHW, pads 1.
std::vector<double> reference(const Tensor& x, const Tensor& w, const Tensor& b, int64_t c,
                              int64_t m, int64_t hw) {
  std::vector<double> out(m * hw * hw);
  const float* xp = x.data<float>();
  const float* wp = w.data<float>();
  for (int64_t o = 0; o < m; ++o)
    for (int64_t y = 0; y < hw; ++y)
      for (int64_t z = 0; z < hw; ++z) {
        double acc = b.data<float>()[o];
        for (int64_t i = 0; i < c; ++i)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = y + ky - 1, ix = z + kx - 1;
              if (iy < 0 || iy >= hw || ix < 0 || ix >= hw) continue;
              acc += double(xp[(i * hw + iy) * hw + ix]) * wp[((o * c + i) * 3 + ky) * 3 + kx];
            }
        out[(o * hw + y) * hw + z] = std::max(acc, 0.0);
      }
  return out;
}

// The largest |got - want| over the largest |want|; `got` in channel blocks of `block`.
double blocked_error(const float* got, const std::vector<double>& want, int64_t m, int64_t hw,
                     int64_t block) {
  double diff = 0, mag = 0;
  for (int64_t o = 0; o < m; ++o)
    for (int64_t p = 0; p < hw * hw; ++p) {
      const double g = got[((o / block) * hw * hw + p) * block + o % block],
                   e = want[o * hw * hw + p];
      diff = std::max(diff, std::fabs(g - e));
      mag = std::max(mag, std::fabs(e));
    }
  return diff / std::max(mag, 1e-30);
}

// oneDNN's convolution in nChw16c (nChw8c for blocks of 8) with bias and a Relu post-op; the
// weight in the layout the primitive prefers, reordered once.
struct DnnlConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, bias, dst;
  std::string impl;

  DnnlConv(int64_t c, int64_t m, int64_t hw, int64_t block, const Tensor& x_blocked,
           const Tensor& w, const Tensor& b) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const tag data_tag = block == 8 ? tag::nChw8c : tag::nChw16c;
    dnnl::memory::dims xd = {1, c, hw, hw}, yd = {1, m, hw, hw}, wd = {m, c, 3, 3};
    dnnl::memory::desc src_md(xd, dt::f32, data_tag), w_any(wd, dt::f32, tag::any),
        b_md({m}, dt::f32, tag::a), dst_md(yd, dt::f32, data_tag);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src_md, w_any, b_md,
                                      dst_md, {1, 1}, {1, 1}, {1, 1});
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
    src = dnnl::memory(src_md, eng, const_cast<void*>(x_blocked.raw()));
    dnnl::memory user_w({wd, dt::f32, tag::oihw}, eng, const_cast<void*>(w.raw()));
    weights = dnnl::memory(pd.weights_desc(), eng);
    dst = dnnl::memory(pd.dst_desc(), eng);
    bias = dnnl::memory(b_md, eng, const_cast<void*>(b.raw()));
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
  const float* out() { return static_cast<const float*>(dst.get_data_handle()); }
};

// A native kernel of the conv group with its arguments.
struct NativeRun {
  std::unique_ptr<Kernel> kernel;
  Tensor out;
  std::vector<void*> args;
  void run(ThreadPool* pool) {
    if (!pool) {
      for (int32_t t = 0; t < kernel->task_count(); ++t) (void)kernel->run_task(args.data(), t);
      return;
    }
    pool->parallel_for(kernel->task_count(),
                       [&](int64_t t) { (void)kernel->run_task(args.data(), static_cast<int32_t>(t)); });
  }
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int64_t block = native_channel_block(o.target.empty() ? "host" : o.target);
  std::printf("winograd_bench: 3x3 conv + bias + Relu, batch 1, pads 1, nChw%lldc in and out, "
              "%d thread%s (%s), target %s\n",
              static_cast<long long>(block), o.threads, o.threads > 1 ? "s" : "", o.threads > 1 ? "wall time" : "CPU time",
              o.target.empty() ? "host" : o.target.c_str());
  omp_set_num_threads(o.threads);
  std::unique_ptr<ThreadPool> pool = o.threads > 1 ? std::make_unique<ThreadPool>(o.threads) : nullptr;
  double (*clock)() = o.threads > 1 ? now_ms : thread_cpu_ms;
  NativeBackendOptions direct_opts, f4_opts, f2_opts;
  direct_opts.winograd = NativeWinograd::off;
  f4_opts.winograd = f2_opts.winograd = NativeWinograd::always;
  f2_opts.winograd_tile = 2;
  const std::unique_ptr<Backend> direct = make_native_backend(direct_opts),
                                 f4 = make_native_backend(f4_opts), f2 = make_native_backend(f2_opts);
  Context ctx;
  std::printf("%-10s %9s %9s %9s %9s %6s %7s %8s %8s %8s %8s\n", "C x HxW", "direct", "F(4x4)",
              "F(2x2)", "oneDNN", "dir/F4", "dnnl/F4", "err dir", "err F4", "err F2", "err dnnl");
  struct Shape {
    int64_t c, hw;
  };
  for (Shape s : {Shape{64, 56}, Shape{128, 28}, Shape{256, 14}, Shape{512, 7}, Shape{128, 56},
                  Shape{256, 56}}) {
    const int64_t c = s.c, m = s.c, hw = s.hw;
    // Weights of He-initialised magnitude, inputs in [-0.5, 0.5).
    const Tensor x = random_tensor({1, c, hw, hw}, 3, 1.f);
    const Tensor w = random_tensor({m, c, 3, 3}, 1, 2.f * std::sqrt(6.f / (9.f * c)));
    const Tensor b = random_tensor({m}, 2, 0.2f);
    GraphBuilder gb(ctx, "conv");
    ValueId xv = gb.add_input("x", x.type());
    auto conv = gb.add("Conv", {xv, gb.add_constant("w", w), gb.add_constant("b", b)},
                       make_attrs<ConvAttrs>([](ConvAttrs& a) { a.pads = {1, 1, 1, 1}; }));
    auto relu = gb.add("Relu", {*conv});
    gb.add_output(*relu);
    auto g = gb.finish();
    if (!g.ok()) {
      std::printf("graph: %s\n", g.status().ToString().c_str());
      return 1;
    }
    std::vector<Layout> layouts(g->values().size(), Layout::channel_blocked(block));
    auto group = extract_subgraph(ctx, *g, NodeSet::of(g->nodes().size(), {0, 1}), layouts);
    if (!group.ok()) {
      std::printf("group: %s\n", group.status().ToString().c_str());
      return 1;
    }
    const Tensor xb = to_layout(x, Layout::channel_blocked(block));
    BuildOptions bo;
    bo.num_threads = o.threads;
    bo.target = o.target;
    auto make = [&](const Backend& backend) -> std::optional<NativeRun> {
      auto k = backend.build(group->graph, bo);
      if (!k.ok()) {
        std::printf("build: %s\n", k.status().ToString().c_str());
        return std::nullopt;
      }
      NativeRun r{std::move(*k), Tensor(DType::f32, {1, m, hw, hw}), {}};
      r.args = {const_cast<void*>(xb.raw()), r.out.raw()};
      return r;
    };
    std::optional<NativeRun> rd = make(*direct), r4 = make(*f4), r2 = make(*f2);
    if (!rd || !r4 || !r2) return 1;
    DnnlConv dn(c, m, hw, block, xb, w, b);
    std::vector<double> td, t4, t2, tn;
    for (int done = 0; done < o.reps; done += 5) {
      const int n = std::min(5, o.reps - done);
      measure_block([&] { rd->run(pool.get()); }, n, td, clock);
      measure_block([&] { r4->run(pool.get()); }, n, t4, clock);
      measure_block([&] { r2->run(pool.get()); }, n, t2, clock);
      measure_block([&] { dn.run(); }, n, tn, clock);
    }
    const std::vector<double> want = reference(x, w, b, c, m, hw);
    const double md = median(td), m4 = median(t4), m2 = median(t2), mn = median(tn);
    char name[32];
    std::snprintf(name, sizeof name, "%lldx%lldx%lld", static_cast<long long>(c),
                  static_cast<long long>(hw), static_cast<long long>(hw));
    std::printf("%-10s %7.3fms %7.3fms %7.3fms %7.3fms %6.2f %7.2f %8.1e %8.1e %8.1e %8.1e  %s\n",
                name, md, m4, m2, mn, md / m4, mn / m4,
                blocked_error(rd->out.data<float>(), want, m, hw, block),
                blocked_error(r4->out.data<float>(), want, m, hw, block),
                blocked_error(r2->out.data<float>(), want, m, hw, block),
                blocked_error(dn.out(), want, m, hw, block),
                dn.impl.c_str());
    std::fflush(stdout);
  }
  print_load();
  return 0;
}
