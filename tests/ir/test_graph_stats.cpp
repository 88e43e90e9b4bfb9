// Graph statistics: FLOP formulas per operator, operator counts and parameter totals.
#include <catch2/catch.hpp>

#include "collage/graph_stats.h"
#include "collage/ops.h"

using namespace collage;

namespace {

Tensor zeros(Shape s) {
  return Tensor(DType::f32, std::move(s));
}

// The FLOPs of the node producing `v`.
int64_t flops_of(const Graph& g, ValueId v) {
  return node_flops(g, g.node(g.value(v).producer));
}

}  // namespace

TEST_CASE("graph_stats counts FLOPs per operator", "[ir]") {
  Context ctx;
  GraphBuilder b(ctx, "stats");
  ValueId x = b.add_input("x", {DType::f32, {1, 3, 8, 8}});
  ValueId a = b.add_input("a", {DType::f32, {2, 3, 5}});
  ValueId t = b.add_input("t", {DType::f32, {1, 2, 4, 4}});
  auto pad1 = make_attrs<ConvAttrs>([](auto& c) { c.pads = {1, 1, 1, 1}; });
  auto conv = b.add("Conv", {x, b.add_constant("w", zeros({4, 3, 3, 3}))}, pad1);
  REQUIRE(conv.ok());
  auto dw = b.add("Conv", {*conv, b.add_constant("wd", zeros({4, 1, 3, 3}))},
                  make_attrs<ConvAttrs>([](auto& c) {
                    c.pads = {1, 1, 1, 1};
                    c.group = 4;
                  }));
  REQUIRE(dw.ok());
  auto pool = b.add("MaxPool", {*dw}, make_attrs<MaxPoolAttrs>([](auto& p) {
                      p.kernel_shape = {2, 2};
                      p.strides = {2, 2};
                    }));
  REQUIRE(pool.ok());
  auto relu = b.add("Relu", {*pool});
  REQUIRE(relu.ok());
  auto flat = b.add("Reshape", {*relu}, make_attrs<ReshapeAttrs>([](auto& r) {
                      r.shape = {1, 64};
                    }));
  REQUIRE(flat.ok());
  auto gemm = b.add(
      "Gemm", {*flat, b.add_constant("g", zeros({64, 10})), b.add_constant("gc", zeros({10}))});
  REQUIRE(gemm.ok());
  auto mm = b.add("MatMul", {a, b.add_constant("b", zeros({5, 7}))});
  REQUIRE(mm.ok());
  auto mean = b.add("ReduceMean", {a});
  REQUIRE(mean.ok());
  auto deconv = b.add("ConvTranspose", {t, b.add_constant("wt", zeros({2, 3, 3, 3}))});
  REQUIRE(deconv.ok());
  for (ValueId v : {*gemm, *mm, *mean, *deconv}) b.add_output(v);
  auto g = b.finish();
  REQUIRE(g.ok());

  CHECK(flops_of(*g, *conv) == 2 * (4 * 8 * 8) * (3 * 3 * 3));
  CHECK(flops_of(*g, *dw) == 2 * (4 * 8 * 8) * (1 * 3 * 3));
  CHECK(flops_of(*g, *pool) == (4 * 4 * 4) * 4);
  CHECK(flops_of(*g, *relu) == 64);
  CHECK(flops_of(*g, *flat) == 0);
  CHECK(flops_of(*g, *gemm) == 2 * 10 * 64);
  CHECK(flops_of(*g, *mm) == 2 * (2 * 3 * 7) * 5);
  CHECK(flops_of(*g, *mean) == 30);
  CHECK(flops_of(*g, *deconv) == 2 * (2 * 4 * 4) * (3 * 3 * 3));

  const GraphStats s = graph_stats(*g);
  CHECK(s.nodes == 9);
  CHECK(s.parameters == 108 + 36 + 640 + 10 + 35 + 54);
  CHECK(s.parameter_bytes == 4 * s.parameters);
  CHECK(s.flops == 13824 + 4608 + 256 + 64 + 1280 + 420 + 30 + 1728);
  REQUIRE(s.ops.size() == 8);
  CHECK(s.ops[0].op == "Conv");  // the only operator used twice, then by name
  CHECK(s.ops[0].count == 2);
  CHECK(s.ops[0].flops == 13824 + 4608);
  CHECK(s.ops[1].op == "ConvTranspose");
  CHECK(s.ops[7].op == "Reshape");
}
