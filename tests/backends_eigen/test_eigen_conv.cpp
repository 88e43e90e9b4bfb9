// Conformance of the Eigen backend's convolution (im2col + GEMM, pointwise and depthwise paths)
// with bias and epilogues, against the reference executor.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "eigen_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct ConvCase {
  std::string name;
  Shape x, w;
  std::vector<int64_t> strides = {}, pads = {}, dilations = {};
  int64_t group = 1;
  std::string auto_pad = "NOTSET";
  bool bias = true;
  bool constant_w = true;
};

Graph conv_graph(const Context& ctx, const ConvCase& c,
                 const std::vector<EpilogueStep>& steps = {}) {
  GraphBuilder b(ctx, "conv");
  std::vector<ValueId> inputs = {b.add_input("x", {DType::f32, c.x})};
  inputs.push_back(c.constant_w ? b.add_constant("w", random_f32(c.w, 91))
                                : b.add_input("w", {DType::f32, c.w}));
  if (c.bias) inputs.push_back(b.add_constant("b", random_f32({c.w[0]}, 92)));
  auto attrs = make_attrs<ConvAttrs>([&](ConvAttrs& a) {
    a.strides = c.strides;
    a.pads = c.pads;
    a.dilations = c.dilations;
    a.group = c.group;
    a.auto_pad = c.auto_pad;
  });
  auto y = b.add("Conv", inputs, attrs);
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  const Shape out = b.value(*y).type.shape;
  b.add_output(add_steps(b, *y, out, steps));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3", {2, 3, 11, 11}, {5, 3, 3, 3}},
      {"3x3 pad 1", {2, 3, 11, 11}, {5, 3, 3, 3}, {}, {1, 1, 1, 1}},
      {"3x3 stride 2 pad 1", {1, 4, 13, 9}, {6, 4, 3, 3}, {2, 2}, {1, 1, 1, 1}},
      {"asymmetric pads", {1, 2, 8, 10}, {3, 2, 3, 2}, {1, 1}, {0, 1, 2, 1}},
      {"dilation 2", {1, 3, 12, 12}, {4, 3, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}},
      {"stride 3 dilation 2", {2, 2, 17, 15}, {3, 2, 3, 3}, {3, 3}, {1, 0, 1, 0}, {2, 2}},
      {"no bias", {1, 3, 7, 7}, {4, 3, 3, 3}, {}, {}, {}, 1, "NOTSET", false},
      {"input weights", {1, 3, 7, 7}, {4, 3, 3, 3}, {}, {}, {}, 1, "NOTSET", true, false},
      {"groups", {2, 6, 9, 9}, {9, 2, 3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 3},
      {"depthwise", {2, 8, 10, 10}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 8},
      {"depthwise stride 2", {1, 8, 11, 11}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 8},
      {"depthwise 5x5 dilated", {1, 5, 14, 13}, {5, 1, 5, 5}, {1, 2}, {4, 4, 4, 4}, {2, 2}, 5},
      {"depthwise multiplier 2", {1, 4, 9, 9}, {8, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 4},
      {"pointwise", {2, 16, 7, 9}, {24, 16, 1, 1}},
      {"pointwise stride 2", {1, 16, 8, 8}, {8, 16, 1, 1}, {2, 2}},
      {"kernel wider than input", {1, 2, 3, 3}, {2, 2, 5, 5}, {}, {2, 2, 2, 2}},
      {"SAME_UPPER", {1, 3, 10, 9}, {4, 3, 4, 3}, {2, 2}, {}, {}, 1, "SAME_UPPER"},
      {"SAME_LOWER", {1, 3, 10, 9}, {4, 3, 4, 3}, {2, 2}, {}, {}, 1, "SAME_LOWER"},
      {"VALID", {1, 3, 10, 9}, {4, 3, 3, 3}, {2, 1}, {}, {}, 1, "VALID"},
      {"1-D", {2, 3, 20}, {4, 3, 5}, {2}, {2, 1}},
      {"1-D depthwise", {1, 4, 16}, {4, 1, 3}, {1}, {1, 1}, {}, 4},
      {"large", {1, 32, 28, 28}, {64, 32, 3, 3}, {1, 1}, {1, 1, 1, 1}},
      {"large pointwise", {2, 64, 14, 14}, {128, 64, 1, 1}},
      {"large depthwise", {1, 96, 28, 28}, {96, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 96},
  };
}

}  // namespace

TEST_CASE("eigen Conv: strides, pads, dilations, groups, depthwise, pointwise, 1-D", "[eigen]") {
  Context ctx;
  for (const ConvCase& c : conv_cases()) {
    INFO("conv case " << c.name);
    check_group(eigen_backend(), conv_graph(ctx, c), eigen_check());
  }
}

TEST_CASE("eigen Conv: bias with every epilogue step", "[eigen]") {
  Context ctx;
  const std::vector<ConvCase> cases = conv_cases();
  for (const ConvCase& c : {cases[2], cases[8], cases[9], cases[13]}) {
    for (const EpilogueStep& step : epilogue_steps()) {
      INFO("conv case " << c.name << " + " << step.name);
      check_group(eigen_backend(), conv_graph(ctx, c, {step}), eigen_check());
    }
  }
}

TEST_CASE("eigen Conv: bias Add, residual Add and Relu fused", "[eigen]") {
  Context ctx;
  const EpilogueStep channel_bias = {
      "Add(x,[M,1,1])", [](GraphBuilder& b, ValueId x, const Shape& s) {
        ValueId c = b.add_constant("cb", random_f32({s[1], 1, 1}, 5));
        return *b.add("Add", {c, x});
      }};
  const EpilogueStep residual = find_step("Add(x,residual)");
  for (const EpilogueStep& act : activation_steps()) {
    for (const ConvCase& c :
         {ConvCase{"no bias", {1, 6, 9, 9}, {6, 6, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, "NOTSET", false},
          ConvCase{"depthwise", {1, 6, 9, 9}, {6, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 6}}) {
      INFO(c.name << " + channel bias + residual + " << act.name);
      check_group(eigen_backend(), conv_graph(ctx, c, {channel_bias, residual, act}),
                  eigen_check());
    }
  }
}

TEST_CASE("eigen Conv: 3-D convolutions are not claimed", "[eigen]") {
  Context ctx;
  GraphBuilder b(ctx, "conv3d");
  ValueId x = b.add_input("x", {DType::f32, {1, 2, 4, 4, 4}});
  ValueId w = b.add_constant("w", random_f32({3, 2, 2, 2, 2}, 1));
  b.add_output(*b.add("Conv", {x, w}));
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK_FALSE(claims_whole_graph(eigen_backend(), *g));
  auto built = make_eigen_backend()->build(*g, {});
  REQUIRE_FALSE(built.ok());
  CHECK_THAT(std::string(built.status().message()),
             Catch::Contains("only 1-D and 2-D convolutions are supported"));
}
