// Small graphs the openvino backend's tests compile as regions, and the backends and the
// one-region placement those tests share.
#pragma once

#include <catch2/catch.hpp>

#include "collage/backends/openvino.h"
#include "collage/graph.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "placement/baselines.h"

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

// Registers the reference backend (the fallback) and openvino on `backends`.
inline void add_reference_and_openvino(BackendRegistry& backends) {
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_openvino_backend(backends).ok());
}

// `single:openvino` of `g`, required to make the whole graph one openvino region.
inline Placement one_openvino_region(const Graph& g, const BackendRegistry& backends) {
  auto placement = place_single(g, backends, kOpenvinoBackend);
  INFO(placement.status().ToString());
  REQUIRE(placement.ok());
  REQUIRE(placement->groups.size() == 1);
  CHECK(placement->groups[0].backend == kOpenvinoBackend);
  return *std::move(placement);
}

}  // namespace collage::testing
