// Nothing is compiled twice in one compile: the OpenVINO regions the measurer compiled are taken
// by the artifact build (CompileResult::kernels_*), which compiles none of them again.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "collage/compiler.h"
#include "collage/ops/nn.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"

namespace collage {
namespace {

// x f32[1x8x10x10] -> Conv 3x3 -> Relu -> Conv 1x1 -> Sigmoid: no two groups alike, so every
// candidate the measurer times is one it compiles.
Graph chain(const Context& ctx) {
  GraphBuilder b(ctx, "chain");
  ValueId x = b.add_input("x", {DType::f32, {1, 8, 10, 10}});
  auto conv = [&](ValueId in, int64_t k, uint64_t seed) {
    ValueId w = b.add_constant("w" + std::to_string(seed),
                               testing::random_f32({8, 8, k, k}, seed, -0.3f, 0.3f));
    auto a = std::make_shared<ConvAttrs>();
    a->pads = {k / 2, k / 2, k / 2, k / 2};
    return testing::add(b, "Conv", {in, w}, a);
  };
  ValueId y = testing::add(b, "Relu", {conv(x, 3, 1)});
  y = testing::add(b, "Sigmoid", {conv(y, 1, 2)});
  b.add_output(y);
  return testing::finish(b);
}

}  // namespace

TEST_CASE("compiler: the artifact build compiles no region the measurer compiled", "[driver]") {
  auto compiler = Compiler::create();
  REQUIRE(compiler.ok());
  if (!compiler->backends().find("openvino")) {
    // A build without OpenVINO: the registry says why, and no backend keeps kernels.
    CHECK_FALSE(compiler->backends().unavailable_reason("openvino").empty());
    return;
  }
  const Graph g = chain(compiler->context());
  CompileOptions o;
  o.placement.strategy = "op-level";
  o.placement.backends = {"openvino", "native"};
  o.placement.num_threads = 2;
  auto r = compiler->compile(ModelSource::graph(g), o);
  INFO(r.status());
  REQUIRE(r.ok());
  size_t regions = 0;
  for (const PlacedGroup& group : r->optimized.placement.groups)
    regions += group.backend == "openvino";
  CHECK(r->kernels_built >= 1);  // the regions the measurer compiled
  CHECK(r->kernels_built_by_build == 0);
  CHECK(r->kernels_reused >= regions);
  const auto report = nlohmann::json::parse(r->report_json());
  CHECK(report["kernels_built"] == r->kernels_built);
  CHECK(report["kernels_built_by_build"] == 0);
  CHECK(report["kernels_reused"] == r->kernels_reused);
}

}  // namespace collage
