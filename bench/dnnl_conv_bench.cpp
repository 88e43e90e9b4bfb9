// ResNet-50's 3x3 convolutions (+ Relu) on the dnnl backend against the reference kernel, timed
// interleaved in the same process; prints median milliseconds and the ratio. Not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "collage/backends/dnnl.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "collage/subgraph.h"

using namespace collage;

namespace {

Tensor random_tensor(Shape shape, uint32_t seed) {
  Tensor t(DType::f32, std::move(shape));
  uint32_t s = seed;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = static_cast<float>(s >> 8) / 16777216.f - 0.5f;
  }
  return t;
}

template <typename F>
double time_ms(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  Context ctx;
  auto backend = make_dnnl_backend();
  std::printf("%-28s %12s %12s %8s\n", "conv 3x3 + Relu (N=1)", "dnnl ms", "reference ms",
              "speedup");
  for (int64_t c : {64, 128, 256, 512}) {
    const int64_t hw = 56 * 64 / c;
    GraphBuilder b(ctx, "conv");
    ValueId x = b.add_input("x", {DType::f32, {1, c, hw, hw}});
    ValueId w = b.add_constant("w", random_tensor({c, c, 3, 3}, 1));
    ValueId bias = b.add_constant("b", random_tensor({c}, 2));
    auto conv = b.add("Conv", {x, w, bias}, make_attrs<ConvAttrs>([](ConvAttrs& a) {
                        a.pads = {1, 1, 1, 1};
                      }));
    auto relu = b.add("Relu", {*conv});
    b.add_output(*relu);
    auto g = b.finish();
    NodeSet all(g->nodes().size());
    all.insert(0);
    all.insert(1);
    auto sub = extract_subgraph(ctx, *g, all);
    auto kernel = backend->build(sub->graph, {});
    if (!kernel.ok()) {
      std::printf("build failed: %s\n", kernel.status().ToString().c_str());
      return 1;
    }
    const Tensor input = random_tensor({1, c, hw, hw}, 3);
    Tensor out(DType::f32, {1, c, hw, hw});
    void* args[] = {const_cast<void*>(input.raw()), out.raw()};
    std::vector<double> dnnl_ms, ref_ms;
    (void)(*kernel)->run_task(args, 0);  // warm-up
    for (int r = 0; r < reps; ++r) {
      dnnl_ms.push_back(time_ms([&] { (void)(*kernel)->run_task(args, 0); }));
      ref_ms.push_back(time_ms([&] { (void)run_reference(*g, {input}); }));
    }
    char name[64];
    std::snprintf(name, sizeof name, "%ldx%ldx%ld", static_cast<long>(c), static_cast<long>(hw),
                  static_cast<long>(hw));
    const double d = median(dnnl_ms), r = median(ref_ms);
    std::printf("%-28s %12.3f %12.3f %7.1fx\n", name, d, r, r / d);
  }
  return 0;
}
