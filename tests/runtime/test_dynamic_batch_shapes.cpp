// Dynamic-batch artifacts whose plans have data-dependent shapes: a plan per batch (the writer
// refuses padding them), each run at its own batch through collage_module_run_outputs and
// compared with the reference executor; collage_module_run refuses their outputs of unknown size.
#include <catch2/catch.hpp>

#include "collage/backends/dynamic.h"
#include "collage/backends/eigen.h"
#include "collage/executor.h"
#include "collage/reference.h"
#include "common/runtime_c_util.h"
#include "common/test_util.h"
#include "runtime/runtime_test_util.h"

namespace collage::testing {
namespace {

// x f32[B,4] -> Relu -> "r" (batched); NonZero(r) -> "picked" i64[2,?].
Graph picks_at(const Context& ctx, int64_t batch) {
  GraphBuilder b(ctx, "picks");
  const ValueId x = b.add_input("x", {DType::f32, {batch, 4}});
  const ValueId r = *b.add("Relu", {x});
  const ValueId nz = *b.add("NonZero", {r});
  b.set_value_name(r, "r");
  b.set_value_name(nz, "picked");
  b.add_output(r);
  b.add_output(nz);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// NonZero on the dynamic backend, Relu on eigen.
Placement split(const Graph& g) {
  Placement p;
  p.strategy = "test";
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    p.groups.push_back({NodeSet::of(g.nodes().size(), {n}),
                        g.node(n).op_name() == "NonZero" ? "dynamic" : "eigen", "test", -1, {}});
  return p;
}

absl::StatusOr<std::string> picks_artifact(const Context& ctx, std::vector<Graph>& graphs,
                                           const std::vector<int64_t>& batches, bool padded) {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  REQUIRE(register_dynamic_backend(backends).ok());
  std::vector<Placement> placements;
  for (int64_t b : batches) {
    graphs.push_back(picks_at(ctx, b));
    placements.push_back(split(graphs.back()));
  }
  std::vector<PlacedBatch> placed;
  for (size_t i = 0; i < batches.size(); ++i)
    placed.push_back({batches[i], &graphs[i], &placements[i]});
  DynamicBatchInfo info{batches.front(), batches.back(), {0}, {0, -1}, padded};
  return compile_batch_artifact(ctx, backends, placed, info);
}

TEST_CASE("a dynamic-batch artifact with data-dependent shapes runs a plan per batch",
          "[runtime][dynamic-batch][dynamic-shapes]") {
  Context ctx;
  std::vector<Graph> graphs;
  auto refused = picks_artifact(ctx, graphs, {1, 3}, /*padded=*/true);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()),
             Catch::Contains("value 'picked' has a data-dependent shape") &&
                 Catch::Contains("every batch of the range needs a plan"));

  graphs.clear();
  auto bytes = picks_artifact(ctx, graphs, {1, 2, 3}, /*padded=*/false);
  INFO(bytes.status().ToString());
  REQUIRE(bytes.ok());
  auto m = load_bytes(*bytes, nullptr, nullptr, nullptr);
  REQUIRE(m);
  for (int64_t b = 1; b <= 3; ++b) {
    INFO("batch " << b);
    const Tensor x = random_f32({b, 4}, 20 + static_cast<uint64_t>(b));
    std::string message;
    const std::vector<Tensor> got = run_module_outputs(m.get(), {x}, &message);
    INFO(message);
    REQUIRE(got.size() == 2);
    auto want = run_reference(picks_at(ctx, b), {x});
    REQUIRE(want.ok());
    CHECK(got[0].shape() == Shape{b, 4});
    CHECK(max_relative_error(got[0], (*want)[0]) == 0);
    CHECK(got[1].identical((*want)[1]));
  }
  std::string message;
  CHECK(run_module_outputs(m.get(), {random_f32({4, 4}, 1)}, &message).empty());
  CHECK_THAT(message, Catch::Contains("input 0 'x' has a batch of 4; the artifact was compiled "
                                      "for batches 1 to 3"));
  // collage_module_run cannot take the output of unknown size.
  const Tensor x = random_f32({2, 4}, 1);
  Tensor r(DType::f32, {2, 4}), idx(DType::i64, {2, 8});
  DLTensor in = dl_view(x), out[2] = {dl_view(r), dl_view(idx)};
  message = take_message(collage_module_run(m.get(), &in, 1, out, 2));
  CHECK_THAT(message, Catch::Contains("output 1 'picked'") &&
                          Catch::Contains("collage_module_run_outputs"));
}

}  // namespace
}  // namespace collage::testing
