// dnnl conformance: Conv and ConvTranspose (1-D/2-D/3-D, strides, pads, dilations, auto_pad,
// groups, depthwise) with bias and every post-op, against the reference executor.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "common/backend_check.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct ConvCase {
  std::string name;
  Shape x, w;
  bool bias = true;
  std::function<void(ConvAttrs&)> attrs = [](ConvAttrs&) {};
};

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 pad 1, 3 channels, 7x9",
       {1, 3, 7, 9},
       {8, 3, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.pads = {1, 1, 1, 1};
       }},
      {"1x1, 16 -> 5, no bias", {1, 16, 7, 9}, {5, 16, 1, 1}, false},
      {"5x5 stride 2 pad 2, batch 2",
       {2, 4, 7, 9},
       {6, 4, 5, 5},
       true,
       [](ConvAttrs& a) {
         a.strides = {2, 2};
         a.pads = {2, 2, 2, 2};
       }},
      {"3x3 dilation 2, stride 2, uneven pads",
       {1, 3, 9, 11},
       {4, 3, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.strides = {2, 2};
         a.dilations = {2, 2};
         a.pads = {0, 1, 2, 1};
       }},
      {"groups 2", {1, 4, 7, 9}, {6, 2, 3, 3}, true, [](ConvAttrs& a) { a.group = 2; }},
      {"depthwise 3x3",
       {1, 8, 7, 9},
       {8, 1, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.group = 8;
         a.pads = {1, 1, 1, 1};
       }},
      {"depthwise multiplier 2, stride 2",
       {1, 4, 7, 9},
       {8, 1, 3, 3},
       false,
       [](ConvAttrs& a) {
         a.group = 4;
         a.strides = {2, 2};
         a.pads = {1, 1, 1, 1};
       }},
      {"SAME_UPPER stride 2",
       {1, 3, 7, 9},
       {5, 3, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.auto_pad = "SAME_UPPER";
         a.strides = {2, 2};
       }},
      {"SAME_LOWER even kernel",
       {1, 3, 7, 9},
       {5, 3, 4, 4},
       true,
       [](ConvAttrs& a) { a.auto_pad = "SAME_LOWER"; }},
      {"VALID 5x5", {1, 3, 7, 9}, {4, 3, 5, 5}, true, [](ConvAttrs& a) { a.auto_pad = "VALID"; }},
      {"1x1 stride 2",
       {1, 8, 7, 9},
       {16, 8, 1, 1},
       true,
       [](ConvAttrs& a) {
         a.strides = {2, 2};
       }},
      {"32 -> 64 channels (blocked layouts)",
       {1, 32, 14, 14},
       {64, 32, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.pads = {1, 1, 1, 1};
       }},
      {"1-D stride 2",
       {2, 3, 11},
       {5, 3, 3},
       true,
       [](ConvAttrs& a) {
         a.strides = {2};
         a.pads = {1, 1};
       }},
      {"3-D",
       {1, 3, 5, 6, 7},
       {4, 3, 3, 3, 3},
       true,
       [](ConvAttrs& a) { a.pads = {1, 1, 1, 1, 1, 1}; }},
  };
}

ValueId add_conv(TestGraph& t, const ConvCase& c) {
  std::vector<ValueId> in = {t.input(c.x), t.constant(c.w)};
  if (c.bias) in.push_back(t.constant({c.w[0]}));
  return t.op("Conv", in, make_attrs<ConvAttrs>(c.attrs));
}

}  // namespace

TEST_CASE("dnnl conv: every geometry, alone and with BN + sum + Relu", "[dnnl][conv]") {
  for (const ConvCase& c : conv_cases()) {
    for (bool fused : {false, true}) {
      DYNAMIC_SECTION(c.name << (fused ? " + BN, Add, Relu" : "")) {
        TestGraph t;
        ValueId v = add_conv(t, c);
        if (fused) {
          const Shape ch = {c.w[0]};
          v = t.op("BatchNormalization",
                   {v, t.constant(ch), t.constant(ch), t.constant(ch), t.constant(ch, 0.5f, 2.f)});
          v = t.op("Relu", {t.op("Add", {v, t.input(t.shape(v))})});
        }
        Graph g = t.finish(v);
        GroupResult r = check_group(dnnl_backend(), g, dnnl_check(t, g));
        CHECK(r.origin == "dnnl.conv");
      }
    }
  }
}

TEST_CASE("dnnl conv: every post-op and chain", "[dnnl][conv]") {
  std::vector<PostOpCase> cases = single_post_ops();
  for (PostOpCase& p : chained_post_ops()) cases.push_back(std::move(p));
  const std::vector<ConvCase> geoms = conv_cases();
  for (const PostOpCase& p : cases) {
    for (size_t gi : {size_t{0}, size_t{5}, size_t{12}}) {  // 2-D, depthwise, 1-D
      DYNAMIC_SECTION(p.name << " on " << geoms[gi].name) {
        TestGraph t;
        Graph g = t.finish(p.apply(t, add_conv(t, geoms[gi])));
        check_post_op_case(t, g, p);
      }
    }
  }
}

namespace {

struct DeconvCase {
  std::string name;
  Shape x, w;
  bool bias = true;
  std::function<void(ConvTransposeAttrs&)> attrs = [](ConvTransposeAttrs&) {};
};

std::vector<DeconvCase> deconv_cases() {
  return {
      {"3x3 stride 2 pad 1 output_padding 1",
       {1, 4, 5, 6},
       {4, 3, 3, 3},
       true,
       [](ConvTransposeAttrs& a) {
         a.strides = {2, 2};
         a.pads = {1, 1, 1, 1};
         a.output_padding = {1, 1};
       }},
      {"4x4 stride 2 pad 1 (DCGAN)",
       {2, 8, 4, 4},
       {8, 4, 4, 4},
       false,
       [](ConvTransposeAttrs& a) {
         a.strides = {2, 2};
         a.pads = {1, 1, 1, 1};
       }},
      {"groups 2", {1, 4, 5, 6}, {4, 3, 3, 3}, true, [](ConvTransposeAttrs& a) { a.group = 2; }},
      {"2x2 stride 1", {1, 3, 7, 9}, {3, 5, 2, 2}, true},
      {"SAME_UPPER stride 2",
       {1, 3, 5, 6},
       {3, 2, 3, 3},
       true,
       [](ConvTransposeAttrs& a) {
         a.auto_pad = "SAME_UPPER";
         a.strides = {2, 2};
       }},
      {"output_shape",
       {1, 3, 5, 6},
       {3, 2, 3, 3},
       true,
       [](ConvTransposeAttrs& a) {
         a.strides = {2, 2};
         a.output_shape = {10, 12};
       }},
      {"dilation 2",
       {1, 3, 5, 6},
       {3, 2, 3, 3},
       true,
       [](ConvTransposeAttrs& a) {
         a.dilations = {2, 2};
       }},
      {"1-D", {2, 3, 7}, {3, 4, 3}, true, [](ConvTransposeAttrs& a) { a.strides = {2}; }},
  };
}

ValueId add_deconv(TestGraph& t, const DeconvCase& c) {
  std::vector<ValueId> in = {t.input(c.x), t.constant(c.w)};
  const int64_t group = [&] {
    ConvTransposeAttrs a;
    c.attrs(a);
    return a.group;
  }();
  if (c.bias) in.push_back(t.constant({c.w[1] * group}));
  return t.op("ConvTranspose", in, make_attrs<ConvTransposeAttrs>(c.attrs));
}

}  // namespace

TEST_CASE("dnnl conv_transpose: geometries and post-ops", "[dnnl][conv_transpose]") {
  for (const DeconvCase& c : deconv_cases()) {
    DYNAMIC_SECTION(c.name) {
      TestGraph t;
      Graph g = t.finish(add_deconv(t, c));
      GroupResult r = check_group(dnnl_backend(), g, dnnl_check(t, g));
      CHECK(r.origin == "dnnl.conv_transpose");
    }
  }
  std::vector<PostOpCase> cases = single_post_ops();
  for (PostOpCase& p : chained_post_ops()) cases.push_back(std::move(p));
  for (const PostOpCase& p : cases) {
    DYNAMIC_SECTION("post-op " << p.name) {
      TestGraph t;
      Graph g = t.finish(p.apply(t, add_deconv(t, deconv_cases()[1])));
      check_post_op_case(t, g, p);
    }
  }
}
