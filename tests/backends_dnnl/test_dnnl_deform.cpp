// dnnl conformance: DeformConv against the reference: offsets that move taps between and past
// pixels, with and without mask and bias, strides, dilations, pads, groups and offset groups,
// batches, and weights given as constants or as inputs.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "collage/ops/geometry.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "dnnl_module.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct DeformCase {
  std::string name;
  int64_t n = 1, c = 4, h = 7, w = 8, m = 6, k = 3;
  int64_t stride = 1, dilation = 1, pad = 0, group = 1, offset_group = 1;
  bool mask = true, bias = true, constant_weights = true;
};

void check_deform(const DeformCase& c) {
  Context ctx;
  GraphBuilder b(ctx, "deform");
  const int64_t ext = (c.k - 1) * c.dilation + 1;
  const int64_t oh = (c.h + 2 * c.pad - ext) / c.stride + 1,
                ow = (c.w + 2 * c.pad - ext) / c.stride + 1;
  const int64_t taps = c.offset_group * c.k * c.k;
  const Shape ws = {c.m, c.c / c.group, c.k, c.k};
  std::vector<ValueId> in = {b.add_input("X", {DType::f32, {c.n, c.c, c.h, c.w}})};
  in.push_back(c.constant_weights ? b.add_constant("W", random_f32(ws, 11))
                                  : b.add_input("W", {DType::f32, ws}));
  in.push_back(b.add_input("offset", {DType::f32, {c.n, 2 * taps, oh, ow}}));
  in.push_back(c.bias ? b.add_constant("B", random_f32({c.m}, 12)) : kNoValue);
  if (c.mask) in.push_back(b.add_input("mask", {DType::f32, {c.n, taps, oh, ow}}));
  while (in.back() == kNoValue) in.pop_back();
  auto attrs = make_attrs<DeformConvAttrs>([&](DeformConvAttrs& a) {
    a.strides = {c.stride, c.stride};
    a.dilations = {c.dilation, c.dilation};
    a.pads.assign(4, c.pad);
    a.group = c.group;
    a.offset_group = c.offset_group;
  });
  auto y = b.add(std::string("DeformConv"), in, attrs, "op");
  INFO(y.status().ToString());
  REQUIRE(y.ok());
  b.add_output(*y);
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  // Offsets of up to 2.5 pixels either way: taps land between pixels and past the border.
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < g->inputs().size(); ++i) {
    const std::string& name = g->value(g->inputs()[i]).name;
    const float lo = name == "offset" ? -2.5f : name == "mask" ? 0.f : -1.f;
    const float hi = name == "offset" ? 2.5f : 1.f;
    inputs.push_back(random_f32(g->value(g->inputs()[i]).type.shape, 40 + i, lo, hi));
  }
  GroupCheck check{.tolerance = 1e-4,
                   .elementwise = true,
                   .floor_fraction = 0.01,
                   .claim = true,
                   .threads = {1, 3},
                   .inputs = inputs};
  CHECK(check_group(dnnl_backend(), *g, check).origin == "dnnl.deform_conv");
}

}  // namespace

TEST_CASE("dnnl deform conv: geometries and optional inputs", "[dnnl][deform_conv]") {
  const std::vector<DeformCase> cases = {
      {.name = "3x3 mask bias"},
      {.name = "no mask", .mask = false},
      {.name = "no bias", .bias = false},
      {.name = "neither", .mask = false, .bias = false},
      {.name = "stride 2 pad 1", .h = 9, .w = 10, .stride = 2, .pad = 1},
      {.name = "dilation 2 pad 2", .h = 9, .w = 9, .dilation = 2, .pad = 2},
      {.name = "groups 2", .c = 4, .m = 6, .group = 2},
      {.name = "offset groups 2", .offset_group = 2},
      {.name = "groups 2 offset groups 4", .c = 8, .m = 4, .group = 2, .offset_group = 4},
      {.name = "batch 3", .n = 3},
      {.name = "1x1 kernel", .k = 1},
      {.name = "weights as input", .constant_weights = false},
      {.name = "batch 2 groups 2 weights as input", .n = 2, .group = 2, .constant_weights = false},
  };
  for (const DeformCase& c : cases) DYNAMIC_SECTION(c.name) {
      check_deform(c);
    }
}
