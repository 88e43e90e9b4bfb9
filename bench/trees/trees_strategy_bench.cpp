// Measured tree-strategy choice: for a model file and batch sizes, times every candidate (the
// fused TreeEnsemble kernel in each variant, PTT, TT, GEMM) placed greedily on the built-in CPU
// backends, 2 threads, and prints the table and choose_tree_strategy's pick. Not a test.
//
//   build/bin/trees_strategy_bench MODEL [BATCH ...] [--runs N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/backends/trees.h"
#include "collage/executor.h"
#include "collage/trees.h"

using namespace collage;

namespace {

constexpr int kThreads = 2;

absl::StatusOr<TreeEnsemble> load(const std::string& path) {
  auto format = detect_model_format(path);
  if (!format.ok()) return format.status();
  if (*format == ModelFormat::xgboost) return import_xgboost_json(path);
  if (*format == ModelFormat::lightgbm) return import_lightgbm_text(path);
  return absl::InvalidArgumentError(path + ": not an XGBoost or LightGBM model");
}

Tensor random_rows(int64_t batch, int64_t features) {
  Tensor t(DType::f32, {batch, features});
  uint32_t s = 12345;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    t.data<float>()[i] = (static_cast<float>(s >> 8) / 16777216.f - 0.5f) * 4.f;
  }
  return t;
}

TreesKernelVariant variant_of(const std::string& name) {
  if (name == "scalar") return TreesKernelVariant::scalar;
  if (name == "avx512") return TreesKernelVariant::avx512;
  if (name == "avx512_ranks") return TreesKernelVariant::avx512_ranks;
  if (name == "avx2") return TreesKernelVariant::avx2;
  if (name == "avx2_ranks") return TreesKernelVariant::avx2_ranks;
  return TreesKernelVariant::automatic;
}

// Median milliseconds of `runs` runs of `g` placed greedily (dnnl, eigen, trees in the candidate's
// variant, reference), after one warm-up run.
absl::StatusOr<double> measure(const Context& ctx, const TreeStrategyCandidate& c, const Graph& g,
                               int runs) {
  BackendRegistry backends;
  for (auto s : {register_dnnl_backend(backends), register_eigen_backend(backends),
                 backends.add(make_trees_backend({variant_of(c.variant)})),
                 backends.add(make_reference_backend())})
    if (!s.ok()) return s;
  PlacementOptions options;
  options.strategy = "greedy";
  options.num_threads = kThreads;
  auto placement = optimize(ctx, backends, g, options);
  if (!placement.ok()) return placement.status();
  BuildOptions build;
  build.num_threads = kThreads;
  auto model = compile_placement(ctx, backends, g, *placement, build);
  if (!model.ok()) return model.status();
  const std::vector<Tensor> inputs = {
      random_rows(g.value(g.inputs()[0]).type.shape[0], g.value(g.inputs()[0]).type.shape[1])};
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto out = model->run(inputs);
    const auto stop = std::chrono::steady_clock::now();
    if (!out.ok()) return out.status();
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(stop - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fprintf(stderr, "usage: trees_strategy_bench MODEL [BATCH ...] [--runs N]\n");
    return 2;
  }
  int runs = 5;
  std::vector<int64_t> batches;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--runs" && i + 1 < args.size())
      runs = std::max(1, std::atoi(args[++i].c_str()));
    else
      batches.push_back(std::atoll(args[i].c_str()));
  }
  if (batches.empty()) batches = {1, 10000, 100000};
  auto model = load(args[0]);
  if (!model.ok()) {
    std::fprintf(stderr, "trees_strategy_bench: %s\n",
                 std::string(model.status().message()).c_str());
    return 1;
  }
  Context ctx;
  std::vector<TreeStrategyCandidate> candidates = {
      {TreeStrategy::fused, "avx512_ranks"}, {TreeStrategy::fused, "avx512"},
      {TreeStrategy::fused, "avx2_ranks"},   {TreeStrategy::fused, "avx2"},
      {TreeStrategy::fused, "scalar"},       {TreeStrategy::perfect_tree_traversal, ""},
      {TreeStrategy::tree_traversal, ""},    {TreeStrategy::gemm, ""}};
  std::printf("%s: %zu trees, depth %d, %lld features; %d threads, median of %d runs\n",
              args[0].c_str(), model->trees.size(), tree_ensemble_depth(*model),
              static_cast<long long>(model->num_features), kThreads, runs);
  for (int64_t batch : batches) {
    auto choice = choose_tree_strategy(
        ctx, *model, batch, candidates,
        [&](const TreeStrategyCandidate& c, const Graph& g) { return measure(ctx, c, g, runs); });
    if (!choice.ok()) {
      std::printf("batch %lld: %s\n", static_cast<long long>(batch),
                  std::string(choice.status().message()).c_str());
      continue;
    }
    std::printf("batch %lld: chosen %s\n", static_cast<long long>(batch),
                tree_strategy_label(choice->best).c_str());
    for (const TreeStrategyTiming& t : choice->timings) {
      if (t.status.ok())
        std::printf("  %-14s %12.3f ms %14.0f rows/s\n", tree_strategy_label(t.candidate).c_str(),
                    t.ms, static_cast<double>(batch) / t.ms * 1e3);
      else
        std::printf("  %-14s skipped: %.110s\n", tree_strategy_label(t.candidate).c_str(),
                    std::string(t.status.message()).c_str());
    }
  }
  return 0;
}
