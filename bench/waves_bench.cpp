// The wave executor (inter-operator parallelism) against the sequential executor on multi-branch
// models at batch 1: each model placed twice, on generated code alone (single:native, the whole
// model) and on the library backends (eigen and dnnl, the CNNs' trunk), written as an artifact
// with a wave schedule, loaded twice through the runtime's C API (one per executor) and run
// alternately; prints medians, the ratio, the scheduling overhead per run and whether the
// outputs are bit-identical. Not a test: it never fails on a timing.
//
//   waves_bench [RUNS] [--write DIR] [--read DIR] [--native] [MODEL...]
//     --write DIR: also write each model's artifact to DIR/MODEL_PLACEMENT.collage (for
//       `collage run`)
//     --read DIR: run the artifacts an earlier --write left in DIR instead of compiling (to
//       compare two runtimes on the same schedules; the compile-time columns then stay empty)
//     --native: only the single:native placements
//     --tasks-per-thread N: the native backend's max_tasks_per_thread (1: one task per thread)
//     models: nasnet_cell, bert_attention (BERT-base's twelve attention heads), or a model of
//       the model cache, $COLLAGE_MODEL_CACHE or else ~/.cache/collage/models (googlenet,
//       inceptionv3, squeezenet, ... and their _small variants; on the library backends their
//       trunk up to the first Flatten or Reshape)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "artifact/artifact.h"
#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/onnx.h"
#include "collage/ops.h"
#include "collage/passes.h"
#include "collage/runtime.h"
#include "collage/subgraph.h"
#include "placement/baselines.h"
#include "placement/timing.h"

using namespace collage;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Tensor weights(Shape shape, uint32_t seed) {
  return random_tensor({DType::f32, std::move(shape)}, seed);
}

// A NASNet-style normal cell, three times: five branches of a 1x64x28x28 input (3x3 and 5x5
// convolutions, max and average pooling, a 1x1 convolution, the identity) added pairwise,
// concatenated, and reduced back to 64 channels by a 1x1 convolution.
absl::StatusOr<Graph> nasnet_cells(const Context& ctx) {
  GraphBuilder b(ctx, "nasnet_cell");
  ValueId x = b.add_input("x", {DType::f32, {1, 64, 28, 28}});
  uint32_t seed = 1;
  auto conv = [&](ValueId in, int64_t cin, int64_t cout, int64_t k) -> absl::StatusOr<ValueId> {
    char name[16];
    std::snprintf(name, sizeof name, "w%u", seed);
    ValueId w = b.add_constant(name, weights({cout, cin, k, k}, seed));
    ++seed;
    auto c = b.add("Conv", {in, w}, make_attrs<ConvAttrs>([&](ConvAttrs& a) {
                     a.pads = {k / 2, k / 2, k / 2, k / 2};
                   }));
    if (!c.ok()) return c.status();
    return b.add("Relu", {*c});
  };
  for (int cell = 0; cell < 3; ++cell) {
    auto c3 = conv(x, 64, 32, 3), c5 = conv(x, 64, 32, 5), c1 = conv(x, 64, 32, 1);
    auto c3b = conv(x, 64, 32, 3);
    if (!c3.ok() || !c5.ok() || !c1.ok() || !c3b.ok()) return c3.status();
    auto max = b.add("MaxPool", {x}, make_attrs<MaxPoolAttrs>([](MaxPoolAttrs& a) {
                       a.kernel_shape = {3, 3};
                       a.pads = {1, 1, 1, 1};
                     }));
    auto avg = b.add("AveragePool", {x}, make_attrs<AveragePoolAttrs>([](AveragePoolAttrs& a) {
                       a.kernel_shape = {3, 3};
                       a.pads = {1, 1, 1, 1};
                       a.count_include_pad = 1;
                     }));
    if (!max.ok() || !avg.ok()) return max.status();
    auto max32 = conv(*max, 64, 32, 1), avg32 = conv(*avg, 64, 32, 1);
    if (!max32.ok() || !avg32.ok()) return max32.status();
    auto s0 = b.add("Add", {*c3, *c5}), s1 = b.add("Add", {*c1, *max32}),
         s2 = b.add("Add", {*avg32, *c3b});
    if (!s0.ok() || !s1.ok() || !s2.ok()) return s0.status();
    auto cat = b.add("Concat", {*s0, *s1, *s2},
                     make_attrs<ConcatAttrs>([](ConcatAttrs& a) { a.axis = 1; }));
    if (!cat.ok()) return cat.status();
    auto out = conv(*cat, 96, 64, 1);
    if (!out.ok()) return out.status();
    x = *out;
  }
  b.add_output(x);
  return b.finish();
}

// BERT-base self-attention at sequence length 128: twelve heads, each its own branch of
// MatMuls and a Softmax (Q K^T computed as Q (W_k^T X^T), X^T a second input), their outputs
// projected by their slice of W_o and summed (the concatenation and projection of the layer).
absl::StatusOr<Graph> bert_attention(const Context& ctx) {
  constexpr int64_t kSeq = 128, kHidden = 768, kHeads = 12, kHead = kHidden / kHeads;
  GraphBuilder b(ctx, "bert_attention");
  ValueId x = b.add_input("x", {DType::f32, {kSeq, kHidden}});
  ValueId xt = b.add_input("x_t", {DType::f32, {kHidden, kSeq}});
  ValueId scale = b.add_constant("scale", Tensor::from_f32({1}, std::vector<float>{0.125f}));
  uint32_t seed = 100;
  auto w = [&](Shape shape) { return b.add_constant("", weights(std::move(shape), seed++)); };
  std::optional<ValueId> sum;
  for (int64_t h = 0; h < kHeads; ++h) {
    auto q = b.add("MatMul", {x, w({kHidden, kHead})});
    auto v = b.add("MatMul", {x, w({kHidden, kHead})});
    if (!q.ok() || !v.ok()) return q.status();
    auto qk = b.add("MatMul", {*q, w({kHead, kHidden})});
    if (!qk.ok()) return qk.status();
    auto scores = b.add("MatMul", {*qk, xt});
    if (!scores.ok()) return scores.status();
    auto scaled = b.add("Mul", {*scores, scale});
    if (!scaled.ok()) return scaled.status();
    auto p =
        b.add("Softmax", {*scaled}, make_attrs<SoftmaxAttrs>([](SoftmaxAttrs& a) { a.axis = -1; }));
    if (!p.ok()) return p.status();
    auto ctx_h = b.add("MatMul", {*p, *v});
    if (!ctx_h.ok()) return ctx_h.status();
    auto out_h = b.add("MatMul", {*ctx_h, w({kHead, kHidden})});
    if (!out_h.ok()) return out_h.status();
    if (!sum) {
      sum = *out_h;
      continue;
    }
    auto s = b.add("Add", {*sum, *out_h});
    if (!s.ok()) return s.status();
    sum = *s;
  }
  b.add_output(*sum);
  return b.finish();
}

// The model without the nodes no library backend runs (Flatten, Reshape) and everything after
// them: for the CNNs, the convolutional trunk up to the classifier.
absl::StatusOr<Graph> trunk(const Context& ctx, const Graph& g) {
  std::vector<bool> cut(g.nodes().size(), false);
  NodeSet keep(g.nodes().size());
  bool any_cut = false;
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const Node& node = g.node(static_cast<NodeId>(n));
    cut[n] = node.op_name() == "Flatten" || node.op_name() == "Reshape";
    for (ValueId v : node.inputs)
      if (v >= 0 && g.value(v).producer >= 0 && cut[g.value(v).producer]) cut[n] = true;
    if (cut[n])
      any_cut = true;
    else
      keep.insert(static_cast<NodeId>(n));
  }
  if (!any_cut) return g;
  auto sub = extract_subgraph(ctx, g, keep);
  if (!sub.ok()) return sub.status();
  return std::move(sub->graph);
}

absl::StatusOr<Graph> load(const Context& ctx, const std::string& name, bool trunk_only) {
  if (name == "nasnet_cell") return nasnet_cells(ctx);
  if (name == "bert_attention") return bert_attention(ctx);
  const char* cache = std::getenv("COLLAGE_MODEL_CACHE");
  const char* home = std::getenv("HOME");
  const std::string path =
      (cache ? std::string(cache) : std::string(home ? home : ".") + "/.cache/collage/models") +
      "/" + name + ".onnx";
  auto g = import_onnx_file(ctx, path);
  if (!g.ok()) return g.status();
  auto optimized = run_passes(ctx, *g);
  if (!optimized.ok()) return optimized.status();
  return trunk_only ? trunk(ctx, *optimized) : optimized;
}

// The artifact of single:native (generated code runs every node).
absl::StatusOr<std::string> compile_native(const Context& ctx, const Graph& g,
                                           const BackendRegistry& backends,
                                           const ArtifactOptions& options, ArtifactSummary* summary,
                                           std::string* placement) {
  BaselineOptions o;
  o.fallback = "native";
  auto p = place_single(g, backends, "native", o);
  if (!p.ok()) return p.status();
  *placement = p->strategy;
  return compile_artifact(ctx, backends, g, *p, options, summary);
}

// The artifact of single:FIRST with SECOND taking the rest, for the first of (eigen, dnnl) and
// (dnnl, eigen) whose kernels all build; `placement` receives its strategy.
absl::StatusOr<std::string> compile_libraries(const Context& ctx, const Graph& g,
                                              const BackendRegistry& backends,
                                              const ArtifactOptions& options,
                                              ArtifactSummary* summary, std::string* placement) {
  absl::Status last = absl::UnimplementedError("no placement");
  for (auto [first, second] : {std::pair{"eigen", "dnnl"}, std::pair{"dnnl", "eigen"}}) {
    BaselineOptions o;
    o.fallback = second;
    auto p = place_single(g, backends, first, o);
    if (!p.ok()) {
      last = p.status();
      continue;
    }
    auto bytes = compile_artifact(ctx, backends, g, *p, options, summary);
    if (bytes.ok()) {
      *placement = p->strategy + " + " + second;
      return bytes;
    }
    last = bytes.status();
  }
  return last;
}

struct Loaded {
  collage_module_t* m = nullptr;
  std::vector<DLTensor> in, out;
  std::vector<Tensor> outputs;
  ~Loaded() { collage_module_release(m); }
};

bool load_module(const std::string& bytes, uint32_t flags, const std::vector<Tensor>& inputs,
                 Loaded* l) {
  collage_load_options_t o;
  collage_load_options_init(&o);
  o.flags = flags;
  collage_status_t* s = collage_module_load_memory(bytes.data(), bytes.size(), &o, &l->m);
  if (s) {
    std::printf("  load failed: %s\n", collage_status_message(s));
    collage_status_free(s);
    return false;
  }
  auto view = [](const Tensor& t) {
    DLTensor d{};
    d.data = const_cast<void*>(t.raw());
    d.device = {kDLCPU, 0};
    d.ndim = static_cast<int32_t>(t.rank());
    d.dtype = collage_dtype_to_dlpack(static_cast<int32_t>(t.dtype()));
    d.shape = const_cast<int64_t*>(t.shape().data());
    return d;
  };
  for (const Tensor& t : inputs) l->in.push_back(view(t));
  for (int32_t i = 0; i < collage_module_num_outputs(l->m); ++i) {
    collage_tensor_info_t info{};
    info.struct_size = sizeof info;
    collage_status_free(collage_module_output_info(l->m, i, &info));
    l->outputs.emplace_back(static_cast<DType>(info.dtype),
                            Shape(info.shape, info.shape + info.ndim));
  }
  for (const Tensor& t : l->outputs) l->out.push_back(view(t));
  return true;
}

double run_ms(Loaded& l) {
  const auto start = std::chrono::steady_clock::now();
  collage_status_t* s = collage_module_run(l.m, l.in.data(), static_cast<int32_t>(l.in.size()),
                                           l.out.data(), static_cast<int32_t>(l.out.size()));
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (s) {
    std::printf("  run failed: %s\n", collage_status_message(s));
    collage_status_free(s);
    return -1;
  }
  return ms;
}

struct BenchOptions {
  int runs = 20;
  std::string write_dir;  // write each compiled artifact there
  std::string read_dir;   // run the artifacts written there instead of compiling
  bool native_only = false;
  int tasks_per_thread = NativeBackendOptions{}.max_tasks_per_thread;
};

std::string artifact_path(const std::string& dir, const std::string& name, bool native) {
  return dir + "/" + name + (native ? "_native" : "_libraries") + ".collage";
}

void bench(const std::string& name, bool native, const BenchOptions& bo) {
  Context ctx;
  auto g = load(ctx, name, /*trunk_only=*/!native);
  if (!g.ok()) {
    std::printf("%-18s skipped: %s\n", name.c_str(), std::string(g.status().message()).c_str());
    return;
  }
  ArtifactSummary summary;
  std::string placement = native ? "single:native" : "libraries";
  double compile_s = 0;
  absl::StatusOr<std::string> bytes;
  if (!bo.read_dir.empty()) {
    const std::string path = artifact_path(bo.read_dir, name, native);
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
      std::printf("%-18s skipped: cannot read %s\n", name.c_str(), path.c_str());
      return;
    }
    std::string data;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) data.append(buf, n);
    std::fclose(f);
    bytes = std::move(data);
    summary.executor = "(read)";
    placement += " (read)";
  } else {
    BackendRegistry backends;
    (void)backends.add(make_reference_backend());
    (void)register_eigen_backend(backends);
    (void)register_dnnl_backend(backends);
    NativeBackendOptions native_options;
    native_options.max_tasks_per_thread = bo.tasks_per_thread;
    (void)backends.add(make_native_backend(native_options));
    ArtifactOptions options;
    options.waves.executor = waves::ExecutorChoice::automatic;
    const auto t0 = std::chrono::steady_clock::now();
    bytes = native ? compile_native(ctx, *g, backends, options, &summary, &placement)
                   : compile_libraries(ctx, *g, backends, options, &summary, &placement);
    compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  if (!bytes.ok()) {
    std::printf("%-18s skipped: %s\n", name.c_str(), std::string(bytes.status().message()).c_str());
    return;
  }
  if (!bo.write_dir.empty()) {
    if (FILE* f = std::fopen(artifact_path(bo.write_dir, name, native).c_str(), "wb")) {
      std::fwrite(bytes->data(), 1, bytes->size(), f);
      std::fclose(f);
    }
  }
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g->inputs().size(); ++i)
    inputs.push_back(random_tensor(g->value(g->inputs()[i]).type, 7 + i));
  Loaded seq, wav;
  if (!load_module(*bytes, COLLAGE_LOAD_EXECUTOR_SEQUENTIAL, inputs, &seq) ||
      !load_module(*bytes, COLLAGE_LOAD_EXECUTOR_WAVES, inputs, &wav))
    return;
  for (int i = 0; i < 2; ++i) {
    run_ms(seq);
    run_ms(wav);
  }
  collage_executor_stats_t before{};
  before.struct_size = sizeof before;
  collage_status_free(collage_module_executor_stats(wav.m, &before));
  std::vector<double> seq_ms, wav_ms;
  bool identical = true;
  for (int i = 0; i < bo.runs; ++i) {
    seq_ms.push_back(run_ms(seq));
    wav_ms.push_back(run_ms(wav));
    for (size_t o = 0; o < seq.outputs.size(); ++o)
      identical = identical && seq.outputs[o].identical(wav.outputs[o]);
  }
  collage_executor_stats_t after{};
  after.struct_size = sizeof after;
  collage_status_free(collage_module_executor_stats(wav.m, &after));
  const double n = static_cast<double>(after.runs - before.runs);
  const double overhead_us = n ? (after.overhead_ns - before.overhead_ns) / n / 1e3 : 0;
  const double wall_us = n ? (after.wall_ns - before.wall_ns) / n / 1e3 : 0;
  const double wake_us = n ? (after.wake_ns - before.wake_ns) / n / 1e3 : 0;
  const double task_us = n ? (after.task_ns - before.task_ns) / n / 1e3 : 0;
  const double wait_us = n ? (after.wait_ns - before.wait_ns) / n / 1e3 : 0;
  const double ms_seq = median(seq_ms), ms_wav = median(wav_ms);
  std::printf(
      "%-18s %4zu %3u %3u/%-3u %3u %9.3f %9.3f %6.2fx %8.1f %6.2f%% %8.1f %9.1f %8.1f  %-9s "
      "%-10s %5.1fs  %s\n",
      name.c_str(), summary.kernels, summary.exclusive_kernels, summary.num_waves,
      summary.num_segments, summary.workers, ms_seq, ms_wav, ms_seq / ms_wav, overhead_us,
      wall_us ? 100 * overhead_us / wall_us : 0, wake_us, task_us, wait_us,
      identical ? "yes" : "NO", summary.executor.c_str(), compile_s, placement.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions bo;
  bo.runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  std::vector<std::string> models;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--write" && i + 1 < argc)
      bo.write_dir = argv[++i];
    else if (arg == "--read" && i + 1 < argc)
      bo.read_dir = argv[++i];
    else if (arg == "--native")
      bo.native_only = true;
    else if (arg == "--tasks-per-thread" && i + 1 < argc)
      bo.tasks_per_thread = std::max(1, std::atoi(argv[++i]));
    else
      models.push_back(arg);
  }
  if (models.empty())
    models = {"nasnet_cell", "bert_attention", "googlenet_small", "inceptionv3_small"};
  std::printf(
      "wave vs sequential executor, batch 1, %d alternating runs each, %u hardware threads, "
      "native kernels split into up to %d tasks per thread\n"
      "(exc: kernels run exclusive; wav/seg: waves / segments; ovh: scheduling overhead per run;\n"
      "wake: worker wake-up per run; task, wait: per run in kernels and blocked on dependencies,\n"
      "mean over the workers; compiled: the default the compile-time measurement chose)\n",
      bo.runs, std::thread::hardware_concurrency(), bo.tasks_per_thread);
  std::printf("%-18s %4s %3s %7s %3s %9s %9s %7s %8s %7s %8s %9s %8s  %-9s %-10s %6s  %s\n",
              "model", "kern", "exc", "wav/seg", "wrk", "seq ms", "waves ms", "speedup", "ovh us",
              "ovh", "wake us", "task us", "wait us", "identical", "compiled", "compile",
              "placement");
  for (const std::string& m : models)
    for (bool native : {true, false})
      if (native || !bo.native_only) bench(m, native, bo);
  return 0;
}
