// cnn_layer_bench: MobileNetV2's depthwise and pointwise convolutions, ResNet-50's 1x1 and strided
// 3x3 ones, SqueezeNet's and GoogLeNet's at their widths (13, 27, 55; 7, 14) (batch 1, + bias +
// Relu), as the native backend builds them between native convolutions (input and output channel-
// blocked: 16 channels, 8 on an AVX2 target), against oneDNN's convolution in the same blocked
// layout (weight reordered ahead of time, not timed), measured alternately in blocks. Prints each
// side's median, GFLOP/s, native's time over oneDNN's, and the largest difference between the two
// outputs over the largest magnitude.
//
//   cnn_layer_bench [--threads=1] [--build-threads=2] [--reps=20] [--target=CPU] [--only=SUBSTRING]
//
// --threads=1 times each run by the thread's CPU time (the work, whatever other processes take
// of the core); more threads by wall time on a thread pool (oneDNN with as many OpenMP threads).
// The native kernel is built for --build-threads threads (its split and the default tiles depend
// on them: 2, as model_bench runs, whatever --threads says), its tasks run on --threads.
// With --target=avx2 the native code is AVX2 code in 8-channel blocks; oneDNN picks its own ISA
// (limit it with ONEDNN_MAX_CPU_ISA=AVX2 for a like-for-like pair).
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
  int build_threads = 2;
  int reps = 20;
  std::string target;
  std::string only;
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
    else if (const char* v = value("--build-threads="))
      o.build_threads = std::max(1, std::atoi(v));
    else if (const char* v = value("--reps="))
      o.reps = std::max(5, std::atoi(v));
    else if (const char* v = value("--target="))
      o.target = v;
    else if (const char* v = value("--only="))
      o.only = v;
    else
      std::fprintf(stderr, "ignoring unknown argument %s\n", a);
  }
  return o;
}

// One convolution: C -> M channels on an HW x HW input, K x K window, stride S, pads K / 2,
// `group` groups (C for depthwise).
struct Layer {
  const char* name;
  int64_t c, m, hw, k, s, group;
  int64_t ohw() const { return (hw + 2 * (k / 2) - k) / s + 1; }
  double flops() const { return 2.0 * m * ohw() * ohw() * (c / group) * k * k; }
};

Tensor random_tensor(Shape shape, uint32_t seed, float scale) {
  Tensor t(DType::f32, std::move(shape));
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = (static_cast<float>(s >> 8) / 16777216.f - 0.5f) * scale;
  }
  return t;
}

// oneDNN's convolution with bias and a Relu post-op, data in nChw{block}c, the weight in the
// layout the primitive prefers, reordered once.
struct DnnlConv {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::convolution_forward conv;
  dnnl::memory src, weights, bias, dst;
  std::string impl;

  DnnlConv(const Layer& l, int64_t block, const Tensor& x_blocked, const Tensor& w,
           const Tensor& b) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    const tag data_tag = block == 8 ? tag::nChw8c : tag::nChw16c;
    const int64_t o = l.ohw(), p = l.k / 2;
    dnnl::memory::dims xd = {1, l.c, l.hw, l.hw}, yd = {1, l.m, o, o};
    dnnl::memory::dims wd = l.group == 1
                                ? dnnl::memory::dims{l.m, l.c, l.k, l.k}
                                : dnnl::memory::dims{l.group, l.m / l.group, l.c / l.group, l.k, l.k};
    dnnl::memory::desc src_md(xd, dt::f32, data_tag), w_any(wd, dt::f32, tag::any),
        b_md({l.m}, dt::f32, tag::a), dst_md(yd, dt::f32, data_tag);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src_md, w_any, b_md,
                                      dst_md, {l.s, l.s}, {p, p}, {p, p});
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
    src = dnnl::memory(src_md, eng, const_cast<void*>(x_blocked.raw()));
    dnnl::memory user_w({wd, dt::f32, l.group == 1 ? tag::oihw : tag::goihw}, eng,
                        const_cast<void*>(w.raw()));
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

double difference(const float* a, const float* b, int64_t n) {
  double diff = 0, mag = 0;
  for (int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(double(a[i]) - b[i]));
    mag = std::max(mag, std::fabs(double(b[i])));
  }
  return diff / std::max(mag, 1e-30);
}

constexpr Layer kLayers[] = {
    {"mnv2 dw 32x112", 32, 32, 112, 3, 1, 32},
    {"mnv2 dw 96x112 s2", 96, 96, 112, 3, 2, 96},
    {"mnv2 dw 144x56", 144, 144, 56, 3, 1, 144},
    {"mnv2 dw 192x28", 192, 192, 28, 3, 1, 192},
    {"mnv2 dw 384x14", 384, 384, 14, 3, 1, 384},
    {"mnv2 dw 576x14 s2", 576, 576, 14, 3, 2, 576},
    {"mnv2 dw 960x7", 960, 960, 7, 3, 1, 960},
    {"mnv2 pw 16>96 @112", 16, 96, 112, 1, 1, 1},
    {"mnv2 pw 144>32 @28", 144, 32, 28, 1, 1, 1},
    {"mnv2 pw 32>192 @28", 32, 192, 28, 1, 1, 1},
    {"mnv2 pw 384>64 @14", 384, 64, 14, 1, 1, 1},
    {"mnv2 pw 960>160 @7", 960, 160, 7, 1, 1, 1},
    {"mnv2 pw 320>1280 @7", 320, 1280, 7, 1, 1, 1},
    {"r50 pw 64>256 @56", 64, 256, 56, 1, 1, 1},
    {"r50 pw 256>64 @56", 256, 64, 56, 1, 1, 1},
    {"r50 pw 512>128 @28", 512, 128, 28, 1, 1, 1},
    {"r50 pw 1024>256 @14", 1024, 256, 14, 1, 1, 1},
    {"r50 pw 2048>512 @7", 2048, 512, 7, 1, 1, 1},
    {"r50 pw 256>1024 @14", 256, 1024, 14, 1, 1, 1},
    {"r50 pw 512>2048 @7", 512, 2048, 7, 1, 1, 1},
    {"r50 pw 256>512 @56 s2", 256, 512, 56, 1, 2, 1},
    {"r50 pw 512>1024 @28 s2", 512, 1024, 28, 1, 2, 1},
    {"r50 pw 1024>2048 @14 s2", 1024, 2048, 14, 1, 2, 1},
    {"r50 3x3 128 @56 s2", 128, 128, 56, 3, 2, 1},
    {"r50 3x3 256 @28 s2", 256, 256, 28, 3, 2, 1},
    {"r50 3x3 512 @14 s2", 512, 512, 14, 3, 2, 1},
    {"sq pw 512>1000 @13", 512, 1000, 13, 1, 1, 1},
    {"sq pw 512>64 @13", 512, 64, 13, 1, 1, 1},
    {"sq pw 64>256 @13", 64, 256, 13, 1, 1, 1},
    {"sq 3x3 64>256 @13", 64, 256, 13, 3, 1, 1},
    {"sq 3x3 32>128 @27", 32, 128, 27, 3, 1, 1},
    {"sq 3x3 16>64 @55", 16, 64, 55, 3, 1, 1},
    {"sq pw 16>64 @55", 16, 64, 55, 1, 1, 1},
    {"gn 3x3 64>192 @56", 64, 192, 56, 3, 1, 1},
    {"gn 3x3 96>208 @14", 96, 208, 14, 3, 1, 1},
    {"gn 3x3 16>48 @14", 16, 48, 14, 3, 1, 1},
    {"gn pw 512>24 @14", 512, 24, 14, 1, 1, 1},
    {"gn pw 480>192 @14", 480, 192, 14, 1, 1, 1},
    {"gn 3x3 160>320 @7", 160, 320, 7, 3, 1, 1},
    {"gn pw 832>48 @7", 832, 48, 7, 1, 1, 1},
    {"dn pw 224>128 @56", 224, 128, 56, 1, 1, 1},
    {"dn pw 480>128 @28", 480, 128, 28, 1, 1, 1},
    {"dn pw 992>128 @14", 992, 128, 14, 1, 1, 1},
    {"dn pw 992>128 @7", 992, 128, 7, 1, 1, 1},
    {"dn 3x3 128>32 @56", 128, 32, 56, 3, 1, 1},
    {"dn 3x3 128>32 @14", 128, 32, 14, 3, 1, 1},
    // Grouped 3x3: RegNetY-400MF (8 channels a group), ResNeXt-50 32x4d (32 groups).
    {"rgy g8 48 @56", 48, 48, 56, 3, 1, 6},
    {"rgy g8 104 @28", 104, 104, 28, 3, 1, 13},
    {"rgy g8 208 @14", 208, 208, 14, 3, 1, 26},
    {"rgy g8 440 @7", 440, 440, 7, 3, 1, 55},
    {"rgy g8 208 @28 s2", 208, 208, 28, 3, 2, 26},
    {"rx g32 128 @56", 128, 128, 56, 3, 1, 32},
    {"rx g32 256 @28", 256, 256, 28, 3, 1, 32},
    {"rx g32 512 @14", 512, 512, 14, 3, 1, 32},
    {"rx g32 1024 @7", 1024, 1024, 7, 3, 1, 32},
    {"rx g32 256 @56 s2", 256, 256, 56, 3, 2, 32},
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const int64_t block = native_channel_block(o.target.empty() ? "host" : o.target);
  std::printf("cnn_layer_bench: conv + bias + Relu, batch 1, nChw%lldc in and out, %d thread%s "
              "(%s), native kernels built for %d threads, target %s\n",
              static_cast<long long>(block), o.threads, o.threads > 1 ? "s" : "",
              o.threads > 1 ? "wall time" : "CPU time", o.build_threads,
              o.target.empty() ? "host" : o.target.c_str());
  omp_set_num_threads(o.threads);
  std::unique_ptr<ThreadPool> pool = o.threads > 1 ? std::make_unique<ThreadPool>(o.threads) : nullptr;
  double (*clock)() = o.threads > 1 ? now_ms : thread_cpu_ms;
  const std::unique_ptr<Backend> native = make_native_backend();
  Context ctx;
  std::printf("%-22s %9s %9s %8s %8s %7s %8s\n", "layer", "native", "oneDNN", "GF/s nat",
              "GF/s dnn", "nat/dnn", "diff");
  for (const Layer& l : kLayers) {
    if (!o.only.empty() && std::string(l.name).find(o.only) == std::string::npos) continue;
    const Tensor x = random_tensor({1, l.c, l.hw, l.hw}, 3, 1.f);
    const Tensor w = random_tensor({l.m, l.c / l.group, l.k, l.k}, 1,
                                   2.f * std::sqrt(6.f / float(l.k * l.k * (l.c / l.group))));
    const Tensor b = random_tensor({l.m}, 2, 0.2f);
    GraphBuilder gb(ctx, "conv");
    ValueId xv = gb.add_input("x", x.type());
    auto conv = gb.add("Conv", {xv, gb.add_constant("w", w), gb.add_constant("b", b)},
                       make_attrs<ConvAttrs>([&](ConvAttrs& a) {
                         const int64_t p = l.k / 2;
                         a.pads = {p, p, p, p};
                         a.strides = {l.s, l.s};
                         a.group = l.group;
                       }));
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
    bo.num_threads = o.build_threads;
    bo.target = o.target;
    auto k = native->build(group->graph, bo);
    if (!k.ok()) {
      std::printf("build: %s\n", k.status().ToString().c_str());
      return 1;
    }
    const int64_t out_numel = l.m * l.ohw() * l.ohw();
    NativeRun nr{std::move(*k), Tensor(DType::f32, {out_numel}), {}};
    nr.args = {const_cast<void*>(xb.raw()), nr.out.raw()};
    DnnlConv dn(l, block, xb, w, b);
    std::vector<double> tn, td;
    for (int done = 0; done < o.reps; done += 5) {
      const int n = std::min(5, o.reps - done);
      measure_block([&] { nr.run(pool.get()); }, n, tn, clock);
      measure_block([&] { dn.run(); }, n, td, clock);
    }
    const double mn = median(tn), md = median(td);
    std::printf("%-22s %7.3fms %7.3fms %8.1f %8.1f %7.2f %8.1e  %s\n", l.name, mn, md,
                l.flops() / mn / 1e6, l.flops() / md / 1e6, mn / md,
                difference(nr.out.data<float>(), dn.out(), out_numel), dn.impl.c_str());
    std::fflush(stdout);
  }
  print_load();
  return 0;
}
