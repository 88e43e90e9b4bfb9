// The native backend's ConvTranspose as phase convolutions (te_ops/conv_transpose_phases.h):
// against the reference over strides, kernels the stride does not divide, pads at least the
// stride, output_padding, channel counts that leave partial blocks, batches and a fused
// epilogue; the phase form is what the kernel lowers to, and the direct form stays where the
// phases do not apply.
#include <catch2/catch.hpp>

#include "backends/native/native_lower.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Sums over up to 16 x 12 products, in another order than the reference's: errors relative to the
// output's largest magnitude (a single small element is all rounding).
GroupCheck scaled() {
  GroupCheck check;
  check.elementwise = false;
  return check;
}

struct Case {
  Shape x, w;
  std::vector<int64_t> strides, pads = {}, output_padding = {};
  int64_t group = 1;
};

std::shared_ptr<const OpAttrs> attrs_of(const Case& c) {
  return make_attrs<ConvTransposeAttrs>([&](auto& a) {
    a.strides = c.strides;
    a.pads = c.pads;
    a.output_padding = c.output_padding;
    a.group = c.group;
  });
}

// ConvTranspose (constant weight and bias) then Relu.
Graph with_relu(const Context& ctx, const Case& c) {
  GraphBuilder b(ctx, "deconv_relu");
  ValueId x = b.add_input("x", {DType::f32, c.x});
  ValueId w = b.add_constant("w", random_f32(c.w, 7));
  ValueId bias = b.add_constant("b", random_f32({c.w[1] * c.group}, 8));
  auto t = b.add("ConvTranspose", {x, w, bias}, attrs_of(c));
  REQUIRE(t.ok());
  auto y = b.add("Relu", {*t});
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

// The graph lowered as one native group.
native::LoweredGroup lowered(const Graph& g) {
  const te_ops::TeOpRegistry ops = te_ops::default_te_ops();
  auto group = native::lower_group(g, ops, {codegen::TargetSpec::host(), 2}, "k");
  REQUIRE(group.ok());
  return std::move(*group);
}

}  // namespace

TEST_CASE("conv transpose: phase convolutions compute what the reference does",
          "[te_ops][conv_transpose]") {
  Context ctx;
  const std::vector<Case> cases = {
      // DCGAN's upsampling layer, smaller.
      {{1, 32, 4, 4}, {32, 24, 4, 4}, {2, 2}, {1, 1, 1, 1}},
      // 12 input channels (a partial block of 8), 20 output channels (a partial block of 16),
      // batch 2, output_padding.
      {{2, 12, 6, 5}, {12, 20, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      // Stride 3 with a kernel of 5 (phases admit 2 or 1 taps); 5 output channels (block of 8).
      {{1, 9, 4, 4}, {9, 5, 5, 5}, {3, 3}, {1, 1, 1, 1}},
      // Different strides and kernels per dimension.
      {{1, 16, 5, 7}, {16, 24, 4, 3}, {2, 1}, {1, 1, 1, 1}},
      // Pads larger than the stride.
      {{1, 8, 6, 6}, {8, 16, 6, 6}, {2, 2}, {3, 3, 3, 3}},
      // Stride 1 over a 1x1 input (DCGAN's first layer).
      {{1, 10, 1, 1}, {10, 32, 4, 4}, {1, 1}}};
  for (const Case& c : cases) {
    INFO("ConvTranspose " << shape_to_string(c.x) << " * " << shape_to_string(c.w));
    const Graph g = with_relu(ctx, c);
    const native::LoweredGroup lg = lowered(g);
    CHECK(lg.schedule == "anchor ConvTranspose");
    CHECK(te::to_string(lg.kernel).find(".phases[") != std::string::npos);
    check_group(native_backend(), g, scaled());
    // A weight given at run time: packed by each chunk instead of once.
    std::vector<TensorType> in = {{DType::f32, c.x}, {DType::f32, c.w}};
    check_group(native_backend(), single_op_graph(ctx, "ConvTranspose", in, attrs_of(c)), scaled());
  }
}

TEST_CASE(
    "conv transpose: outputs that are not a multiple of the stride, and groups, keep the "
    "direct form",
    "[te_ops][conv_transpose]") {
  Context ctx;
  const std::vector<Case> cases = {// (5 - 1) * 2 + 3 = 11 rows: not a multiple of 2.
                                   {{1, 8, 5, 5}, {8, 8, 3, 3}, {2, 2}},
                                   {{1, 8, 4, 4}, {8, 4, 4, 4}, {2, 2}, {1, 1, 1, 1}, {}, 2}};
  for (const Case& c : cases) {
    INFO("ConvTranspose " << shape_to_string(c.x) << " * " << shape_to_string(c.w));
    const Graph g = with_relu(ctx, c);
    CHECK(te::to_string(lowered(g).kernel).find(".phases[") == std::string::npos);
    check_group(native_backend(), g, scaled());
  }
}
