// The graph-level search's end-to-end score under the executor a placement will run with: a
// placement the runtime can run is scored by its wave-scheduled artifact, one with a group on
// the reference backend in process, sequentially.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/compiler.h"
#include "collage/executor.h"
#include "common/test_util.h"
#include "placement/baselines.h"
#include "placement/end_to_end.h"

using namespace collage;
using collage::testing::random_f32;

namespace {

// x f32[4x32] -> two branches MatMul(w_i) -> Relu, joined by Add.
Graph two_branches(const Context& ctx) {
  GraphBuilder b(ctx, "two");
  ValueId x = b.add_input("x", {DType::f32, {4, 32}});
  ValueId w0 = b.add_constant("w0", random_f32({32, 32}, 1));
  ValueId w1 = b.add_constant("w1", random_f32({32, 32}, 2));
  ValueId l = *b.add("Relu", {*b.add("MatMul", {x, w0})});
  ValueId r = *b.add("Relu", {*b.add("MatMul", {x, w1})});
  b.add_output(*b.add("Add", {l, r}));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace

TEST_CASE("waves: placements are scored under the executor they will run with",
          "[waves][placement]") {
  Context ctx;
  const Graph g = two_branches(ctx);
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_eigen_backend(backends).ok());
  ThreadPool pool(2);
  EndToEndOptions options;
  options.executor = PlacementExecutor::waves;
  options.executor_latency = artifact_executor_latency(ctx, /*runs=*/3);
  EndToEndMeasurer measurer(ctx, backends, g, &pool, options);

  auto on_eigen = place_single(g, backends, "eigen", {});
  REQUIRE(on_eigen.ok());
  auto ms = measurer.latency_ms(*on_eigen);
  REQUIRE(ms.ok());
  CHECK(*ms > 0);
  CHECK(measurer.wave_scored() == 1);
  CHECK(measurer.sequential_scored() == 0);

  auto on_reference = place_single(g, backends, "reference", {});
  REQUIRE(on_reference.ok());
  ms = measurer.latency_ms(*on_reference);
  REQUIRE(ms.ok());
  CHECK(measurer.wave_scored() == 1);
  CHECK(measurer.sequential_scored() == 1);

  EndToEndMeasurer sequential(ctx, backends, g, &pool, EndToEndOptions{});
  REQUIRE(sequential.latency_ms(*on_eigen).ok());
  CHECK(sequential.wave_scored() == 0);
  CHECK(sequential.sequential_scored() == 1);
}
