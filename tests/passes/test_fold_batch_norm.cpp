// Batch-norm folding: Conv or ConvTranspose + BatchNormalization merged, and the cases that must
// stay apart.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "common/test_util.h"
#include "passes/fold_batch_norm.h"
#include "passes/fold_constants.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct ConvBn {
  ValueId x, conv, bn;
};

// x[1x4x6x6] -> Conv(8 channels, 3x3, pad 1, optional bias, `group`) -> BatchNormalization.
ConvBn conv_bn(GraphBuilder& b, bool with_bias, int64_t group = 1, bool variable_mean = false) {
  ConvBn r;
  r.x = b.add_input("x", {DType::f32, {1, 4, 6, 6}});
  ValueId w = b.add_constant("w", random_f32({8, 4 / group, 3, 3}, 1));
  std::vector<ValueId> ins = {r.x, w};
  if (with_bias) ins.push_back(b.add_constant("bias", random_f32({8}, 2)));
  r.conv = add(b, "Conv", ins, make_attrs<ConvAttrs>([&](auto& a) {
                 a.pads = {1, 1, 1, 1};
                 a.group = group;
               }),
               "conv");
  ValueId mean = variable_mean ? b.add_input("mean", {DType::f32, {8}})
                               : b.add_constant("mean", random_f32({8}, 3));
  r.bn = add(b, "BatchNormalization",
             {r.conv, b.add_constant("scale", random_f32({8}, 4, 0.5f, 2.f)),
              b.add_constant("shift", random_f32({8}, 5)), mean,
              b.add_constant("var", random_f32({8}, 6, 0.1f, 3.f))},
             make_attrs<BatchNormalizationAttrs>([](auto& a) { a.epsilon = 1e-3f; }), "bn");
  return r;
}

// `g` after fold_batch_norm, which must have rewritten it into a valid graph of the operators
// `ops` computing what `g` computes.
Graph folded(const Context& ctx, const Graph& g, const std::vector<std::string>& ops) {
  auto r = passes::fold_batch_norm(ctx, g);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  Graph out = std::move(**r);
  CHECK(verify_graph(ctx, out).ok());
  CHECK(op_names(out) == ops);
  require_same_outputs(g, out);
  return out;
}

}  // namespace

TEST_CASE("fold_batch_norm merges BatchNormalization into the Conv before it", "[passes]") {
  const bool with_bias = GENERATE(false, true);
  const int64_t group = GENERATE(1, 2);
  Context ctx;
  GraphBuilder b(ctx, "g");
  ConvBn cb = conv_bn(b, with_bias, group);
  b.add_output(add(b, "Relu", {cb.bn}, nullptr, "relu"));
  Graph g = finish(b);

  const Graph out = folded(ctx, g, {"Conv", "Relu"});
  CHECK(out.node(0).name == "conv");
  CHECK(out.node(0).inputs.size() == 3);
  CHECK(out.value(out.node(0).outputs[0]).name == "bn");
  CHECK(out.node(0).get<ConvAttrs>().group == group);
  // The original weights are no longer read, so they are not carried over.
  CHECK(out.constants().size() == 2);
}

TEST_CASE("fold_batch_norm merges BatchNormalization into the ConvTranspose before it",
          "[passes]") {
  const bool with_bias = GENERATE(false, true);
  const int64_t group = GENERATE(1, 2);
  Context ctx;
  GraphBuilder b(ctx, "g");
  // x[1x4x5x5] -> ConvTranspose(6 output channels, 4x4, stride 2, pad 1) -> BatchNormalization:
  // the weight is [4, 6 / group, 4, 4], output channel m of group i its column m - 3i.
  ValueId x = b.add_input("x", {DType::f32, {1, 4, 5, 5}});
  std::vector<ValueId> ins = {x, b.add_constant("w", random_f32({4, 6 / group, 4, 4}, 1))};
  if (with_bias) ins.push_back(b.add_constant("bias", random_f32({6}, 2)));
  ValueId t = add(b, "ConvTranspose", ins, make_attrs<ConvTransposeAttrs>([&](auto& a) {
                    a.strides = {2, 2};
                    a.pads = {1, 1, 1, 1};
                    a.group = group;
                  }),
                  "deconv");
  ValueId bn =
      add(b, "BatchNormalization",
          {t, b.add_constant("scale", random_f32({6}, 4, 0.5f, 2.f)),
           b.add_constant("shift", random_f32({6}, 5)), b.add_constant("mean", random_f32({6}, 3)),
           b.add_constant("var", random_f32({6}, 6, 0.1f, 3.f))},
          make_attrs<BatchNormalizationAttrs>([](auto& a) { a.epsilon = 1e-3f; }), "bn");
  b.add_output(add(b, "Relu", {bn}, nullptr, "relu"));
  Graph g = finish(b);

  const Graph out = folded(ctx, g, {"ConvTranspose", "Relu"});
  CHECK(out.node(0).get<ConvTransposeAttrs>().group == group);
  CHECK(out.node(0).get<ConvTransposeAttrs>().strides == std::vector<int64_t>{2, 2});
}

TEST_CASE("fold_batch_norm leaves a Conv whose output has another reader", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ConvBn cb = conv_bn(b, true);
  b.add_output(cb.bn);
  b.add_output(add(b, "Relu", {cb.conv}, nullptr, "other_reader"));
  Graph g = finish(b);

  std::vector<std::string> reasons;
  passes::RewriteOptions options;
  options.on_failure = [&](const passes::RewritePattern&, const Node&, std::string_view why) {
    reasons.emplace_back(why);
  };
  auto r = passes::fold_batch_norm(ctx, g, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  REQUIRE(reasons.size() == 1);
  CHECK_THAT(reasons[0], Catch::Contains("'conv'") && Catch::Contains("other_reader"));
}

TEST_CASE("fold_batch_norm needs constant statistics", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ConvBn cb = conv_bn(b, true, 1, /*variable_mean=*/true);
  b.add_output(cb.bn);
  Graph g = finish(b);
  std::string reason;
  passes::RewriteOptions options;
  options.on_failure = [&](const auto&, const Node&, std::string_view why) { reason = why; };
  auto r = passes::fold_batch_norm(ctx, g, options);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  CHECK_THAT(reason, Catch::Contains("BatchNormalization 'bn'") && Catch::Contains("'mean'"));
}

TEST_CASE("a BatchNormalization on constants is left to constant folding", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {1, 2, 3}});
  auto param = [&](const char* name, float v) {
    return b.add_constant(name, Tensor::from_f32({2}, std::vector<float>{v, v}));
  };
  ValueId bn = add(b, "BatchNormalization",
                   {b.add_constant("c", random_f32({1, 2, 3}, 9)), param("s", 2.f),
                    param("b", 1.f), param("m", 0.f), param("v", 1.f)});
  b.add_output(add(b, "Add", {x, bn}));
  Graph g = finish(b);

  auto r = passes::fold_batch_norm(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  auto folded = passes::fold_constants(ctx, g);
  REQUIRE(folded.ok());
  REQUIRE(folded->has_value());
  CHECK(op_names(**folded) == std::vector<std::string>{"Add"});
  require_same_outputs(g, **folded);
}
