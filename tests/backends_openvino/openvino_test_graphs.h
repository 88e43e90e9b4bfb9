// Small graphs the openvino backend's tests compile as regions.
#pragma once

#include <catch2/catch.hpp>

#include "collage/graph.h"
#include "collage/ops.h"
#include "common/test_util.h"

namespace collage::testing {

// x f32[1x4x6x6] -> Conv 3x3 (8 channels, weights from `seed`) -> Relu.
inline Graph conv_relu(const Context& ctx, uint64_t seed) {
  GraphBuilder b(ctx, "conv");
  ValueId x = b.add_input("x", {DType::f32, {1, 4, 6, 6}});
  ValueId w = b.add_constant("w", random_f32({8, 4, 3, 3}, seed));
  auto conv = b.add_node("Conv", {x, w}, make_attrs<ConvAttrs>([](auto& a) {
                           a.pads = {1, 1, 1, 1};
                         }));
  auto relu = b.add_node("Relu", {(*conv)[0]});
  b.add_output((*relu)[0]);
  auto g = b.finish();
  REQUIRE(g.ok());
  return *std::move(g);
}

}  // namespace collage::testing
