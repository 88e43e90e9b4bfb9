// An OpenVINO region beside a kernel of generated code, under the wave executor, the region
// treated as a team kernel as profiled (the default), forced exclusive (alone, every worker to
// itself), forced pinned (one OpenVINO thread, beside the other branch), or shared (an ordinary
// chunk beside the other branch, its OpenVINO team of all the threads competing with collage's
// busy worker for the cores: two pools), and the sequential executor
// (waves::SchedulerOptions::teams). Each artifact is loaded through the runtime's C API; the
// contenders alternate, each `repeat` runs a round; prints the median wall time per run and the
// process CPU time per run (every thread: TBB's and the pool's, spinning included). Not a test:
// it never fails on a timing.
//
//   ov_threads_bench [ROUNDS] [REPEAT]
//
// The graph: x f32[1x64x56x56]; branch A, three 3x3 convolutions with ReLU (one OpenVINO
// region); branch B, one 5x5 convolution with ReLU (about as many operations; generated code,
// one native kernel); their sum (native). Two waves: {A, B}, then the sum.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "artifact/artifact.h"
#include "collage/backends/native.h"
#include "collage/backends/openvino.h"
#include "collage/ops.h"
#include "collage/runtime.h"
#include "collage/subgraph.h"
#include "core/str_cat.h"
#include "placement/timing.h"

using namespace collage;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double process_cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

// `count` convolutions (64 channels, `kernel` x `kernel`, same padding) with ReLU from `x`.
ValueId conv_branch(GraphBuilder& b, ValueId x, int count, int64_t kernel, uint32_t seed) {
  for (int i = 0; i < count; ++i) {
    ValueId w = b.add_constant(str_cat("w", seed + i),
                               random_tensor({DType::f32, {64, 64, kernel, kernel}}, seed + i));
    auto conv = b.add_node("Conv", {x, w}, make_attrs<ConvAttrs>([&](auto& a) {
                             const int64_t pad = kernel / 2;
                             a.pads = {pad, pad, pad, pad};
                           }));
    auto relu = b.add_node("Relu", {(*conv)[0]});
    x = (*relu)[0];
  }
  return x;
}

struct Loaded {
  collage_module_t* m = nullptr;
  std::vector<DLTensor> in, out;
  std::vector<Tensor> outputs;
  ~Loaded() { collage_module_release(m); }
};

DLTensor view(const Tensor& t) {
  DLTensor d{};
  d.data = const_cast<void*>(t.raw());
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int32_t>(t.rank());
  d.dtype = collage_dtype_to_dlpack(static_cast<int32_t>(t.dtype()));
  d.shape = const_cast<int64_t*>(t.shape().data());
  return d;
}

bool load(const std::string& bytes, uint32_t flags, const Tensor& input, Loaded* l) {
  collage_load_options_t o;
  collage_load_options_init(&o);
  o.flags = flags;
  o.num_threads = 2;
  if (collage_status_t* s = collage_module_load_memory(bytes.data(), bytes.size(), &o, &l->m)) {
    std::printf("load failed: %s\n", collage_status_message(s));
    collage_status_free(s);
    return false;
  }
  l->in.push_back(view(input));
  l->outputs.emplace_back(DType::f32, Shape{1, 64, 56, 56});
  l->out.push_back(view(l->outputs[0]));
  return true;
}

bool run(Loaded& l) {
  collage_status_t* s = collage_module_run(l.m, l.in.data(), 1, l.out.data(), 1);
  if (!s) return true;
  std::printf("run failed: %s\n", collage_status_message(s));
  collage_status_free(s);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  const int repeat = argc > 2 ? std::atoi(argv[2]) : 10;
  Context ctx;
  GraphBuilder b(ctx, "two_branches");
  ValueId x = b.add_input("x", {DType::f32, {1, 64, 56, 56}});
  ValueId a = conv_branch(b, x, 3, 3, 1);
  ValueId c = conv_branch(b, x, 1, 5, 11);
  b.add_output((*b.add_node("Add", {a, c}))[0]);
  auto g = b.finish();
  if (!g.ok()) {
    std::printf("%s\n", std::string(g.status().message()).c_str());
    return 1;
  }
  // Nodes 0-5: branch A; 6-7: branch B; 8: the sum.
  const size_t n = g->nodes().size();
  if (n != 9 || g->node(8).op_name() != "Add") {
    std::printf("unexpected graph: %zu nodes\n", n);
    return 1;
  }
  Placement p;
  p.strategy = "openvino + native";
  p.groups.push_back({NodeSet::of(n, {0, 1, 2, 3, 4, 5}), "openvino", "manual", -1, {}});
  p.groups.push_back({NodeSet::of(n, {6, 7}), "native", "manual", -1, {}});
  p.groups.push_back({NodeSet::of(n, {8}), "native", "manual", -1, {}});

  BackendRegistry backends;
  if (!register_native_backend(backends).ok() || !register_openvino_backend(backends).ok()) {
    std::printf("cannot register the backends\n");
    return 1;
  }
  // The wave schedules, by how the region (the one kernel with a team) is treated.
  using Teams = waves::SchedulerOptions::Teams;
  struct Contender {
    const char* name;
    Teams teams;
    uint32_t flags;
    Loaded l = {};
    std::vector<double> wall = {}, cpu = {};
  };
  Contender cs[5] = {
      {"waves, region as profiled (the default)", Teams::profiled, COLLAGE_LOAD_EXECUTOR_WAVES},
      {"waves, region exclusive (alone, 2 threads)", Teams::exclusive,
       COLLAGE_LOAD_EXECUTOR_WAVES},
      {"waves, region pinned (1 thread, beside B)", Teams::pinned, COLLAGE_LOAD_EXECUTOR_WAVES},
      {"waves, region shared (2 threads, beside B)", Teams::shared, COLLAGE_LOAD_EXECUTOR_WAVES},
      {"sequential executor", Teams::profiled, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL}};
  const Tensor input = random_tensor({DType::f32, {1, 64, 56, 56}}, 99);
  for (Contender& c : cs) {
    ArtifactOptions o;
    o.build.num_threads = 2;
    o.waves.executor = waves::ExecutorChoice::waves;
    o.waves.workers = 2;
    o.waves.scheduler.teams = c.teams;
    ArtifactSummary summary;
    auto bytes = compile_artifact(ctx, backends, *g, p, o, &summary);
    if (!bytes.ok()) {
      std::printf("%s\n", std::string(bytes.status().message()).c_str());
      return 1;
    }
    std::printf("%s: %zu kernels, %u waves, %u exclusive, %u pinned%s\n", c.name,
                summary.kernels, summary.num_waves, summary.exclusive_kernels,
                summary.pinned_kernels,
                summary.teams_measured ? " (measured against pinned)" : "");
    if (!load(*bytes, c.flags, input, &c.l)) return 1;
  }
  for (Contender& c : cs)
    if (!run(c.l)) return 1;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 5; ++k) {
      Contender& c = cs[(k + r) % 5];
      for (int i = 0; i < repeat; ++i) {
        const double cpu0 = process_cpu_ms();
        const auto t0 = std::chrono::steady_clock::now();
        if (!run(c.l)) return 1;
        c.wall.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        c.cpu.push_back(process_cpu_ms() - cpu0);
      }
      // TBB's and OpenMP's workers spin after a run: let them sleep before the next contender.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  bool same = true;
  for (int k = 1; k < 5; ++k) same = same && cs[k].l.outputs[0].identical(cs[0].l.outputs[0]);
  const double base = median(cs[0].wall);
  std::printf("%d rounds x %d runs each (alternating), 2 worker threads, batch 1; outputs %s\n",
              rounds, repeat, same ? "identical" : "DIFFER");
  std::printf("  %-44s %10s %8s %14s\n", "contender", "median ms", "ratio", "CPU ms per run");
  for (Contender& c : cs)
    std::printf("  %-44s %10.3f %7.2fx %14.3f\n", c.name, median(c.wall), median(c.wall) / base,
                median(c.cpu));
  return 0;
}
