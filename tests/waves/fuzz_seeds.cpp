// Not a test of its own: writes small artifacts with a wave schedule, the seeds with which
// fuzz/run_fuzzer.sh reaches the schedule's decoder and checks (runtime/core/wave_plan.cpp,
// wave_check.cpp). Hidden from the default test list; run_fuzzer.sh runs it as
// `test_waves "[.fuzz-seeds]"`.
#include <catch2/catch.hpp>
#include <filesystem>

#include "collage/backends/dnnl.h"
#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "runtime/runtime_test_util.h"

using namespace collage;
using namespace collage::testing;
namespace fs = std::filesystem;

namespace {

// x f32[2x8] -> three branches MatMul(w_i 8x8) -> Relu, joined by Adds; two outputs.
Graph matmul_branches(const Context& ctx) {
  GraphBuilder b(ctx, "matmul_branches");
  ValueId x = b.add_input("x", {DType::f32, {2, 8}});
  std::vector<ValueId> branch;
  const char* names[] = {"w0", "w1", "w2"};
  for (int i = 0; i < 3; ++i) {
    ValueId w = b.add_constant(names[i], random_f32({8, 8}, 40 + i));
    branch.push_back(*b.add("Relu", {*b.add("MatMul", {x, w})}));
  }
  ValueId sum = *b.add("Add", {*b.add("Add", {branch[0], branch[1]}), branch[2]});
  b.add_output(sum);
  b.add_output(branch[2]);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// x f32[1x4x6x6] -> a 3x3 and a 1x1 convolution (each + Relu) and a 3x3 max pooling, the
// convolutions added, concatenated with the pooling and reduced to 4 channels by a 1x1
// convolution: a NASNet-like cell in miniature.
Graph conv_cell(const Context& ctx) {
  GraphBuilder b(ctx, "conv_cell");
  ValueId x = b.add_input("x", {DType::f32, {1, 4, 6, 6}});
  auto conv = [&](ValueId in, int64_t cin, int64_t k, uint64_t seed) {
    ValueId w = b.add_constant("", random_f32({4, cin, k, k}, seed));
    auto c = b.add("Conv", {in, w}, make_attrs<ConvAttrs>([&](ConvAttrs& a) {
                     a.pads = {k / 2, k / 2, k / 2, k / 2};
                   }));
    REQUIRE(c.ok());
    return *b.add("Relu", {*c});
  };
  ValueId c3 = conv(x, 4, 3, 50), c1 = conv(x, 4, 1, 51);
  auto pool = b.add("MaxPool", {x}, make_attrs<MaxPoolAttrs>([](MaxPoolAttrs& a) {
                      a.kernel_shape = {3, 3};
                      a.pads = {1, 1, 1, 1};
                    }));
  REQUIRE(pool.ok());
  auto cat = b.add("Concat", {*b.add("Add", {c3, c1}), *pool},
                   make_attrs<ConcatAttrs>([](ConcatAttrs& a) { a.axis = 1; }));
  REQUIRE(cat.ok());
  b.add_output(conv(*cat, 8, 1, 52));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

struct Seed {
  const char* name;
  Graph (*graph)(const Context&);
  const char* backend;
  waves::ExecutorChoice executor;
  uint32_t workers;
  bool merge_waves = true;
  bool select_variants = true;
};

std::string compile(const Seed& seed) {
  Context ctx;
  const Graph g = seed.graph(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_dnnl_backend(backends).ok());
  BaselineOptions baseline;
  baseline.fallback = std::string(seed.backend) == "eigen" ? "dnnl" : "eigen";
  auto placement = place_single(g, backends, seed.backend, baseline);
  INFO(seed.name << ": " << placement.status().ToString());
  REQUIRE(placement.ok());
  ArtifactOptions options;
  options.waves.executor = seed.executor;
  options.waves.workers = seed.workers;
  options.waves.scheduler.merge_waves = seed.merge_waves;
  options.waves.scheduler.select_variants = seed.select_variants;
  options.waves.measure_runs = 1;
  options.waves.profile_repeats = 1;
  ArtifactSummary summary;
  auto bytes = compile_artifact(ctx, backends, g, *placement, options, &summary);
  INFO(seed.name << ": " << bytes.status().ToString());
  REQUIRE(bytes.ok());
  REQUIRE(summary.workers == seed.workers);
  return std::move(*bytes);
}

}  // namespace

// In COLLAGE_BINARY_DIR/test-data/fuzz-seeds: one artifact per Seed below (a few KB each), all
// with a wave schedule: two graphs on eigen and dnnl, 2 to 4 workers, merged and unmerged waves,
// every executor preference.
TEST_CASE("fuzz seeds: small artifacts with a wave schedule", "[.fuzz-seeds]") {
  using waves::ExecutorChoice;
  const Seed seeds[] = {
      {"matmul_eigen_w2", matmul_branches, "eigen", ExecutorChoice::waves, 2},
      {"matmul_eigen_w3", matmul_branches, "eigen", ExecutorChoice::waves, 3},
      {"matmul_dnnl_w4", matmul_branches, "dnnl", ExecutorChoice::waves, 4},
      {"matmul_eigen_w3_unmerged", matmul_branches, "eigen", ExecutorChoice::waves, 3, false},
      {"matmul_eigen_w2_sequential", matmul_branches, "eigen", ExecutorChoice::sequential, 2},
      {"conv_dnnl_w2", conv_cell, "dnnl", ExecutorChoice::waves, 2},
      {"conv_dnnl_w3", conv_cell, "dnnl", ExecutorChoice::waves, 3},
      {"conv_eigen_w4", conv_cell, "eigen", ExecutorChoice::waves, 4},
      {"conv_eigen_w3_unmerged", conv_cell, "eigen", ExecutorChoice::waves, 3, false},
      {"conv_dnnl_w4_fixed_variants", conv_cell, "dnnl", ExecutorChoice::waves, 4, true, false},
      {"conv_eigen_w2_automatic", conv_cell, "eigen", ExecutorChoice::automatic, 2},
  };
  const fs::path dir = fs::path(COLLAGE_BINARY_DIR) / "test-data" / "fuzz-seeds";
  fs::create_directories(dir);
  for (const Seed& seed : seeds)
    write_file((dir / (std::string(seed.name) + ".collage")).string(), compile(seed));
}
