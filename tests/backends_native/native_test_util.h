// Shared by the native backend's tests of blocked CNN kernels: convolution attributes, a placement
// of given node groups on native, and the check of a compiled placement against the reference on
// both channel blocks, plain values and the AVX2 target.
#pragma once

#include <catch2/catch.hpp>

#include <initializer_list>
#include <memory>
#include <vector>

#include "collage/backends/native.h"
#include "collage/executor.h"
#include "collage/ops/nn.h"
#include "collage/placement.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace collage::testing {

// A 2-D convolution's attributes: `pad` on every side, `stride` on both axes, `group` groups.
inline std::shared_ptr<ConvAttrs> conv_attrs(int64_t pad, int64_t stride = 1, int64_t group = 1) {
  auto a = std::make_shared<ConvAttrs>();
  a->pads = {pad, pad, pad, pad};
  a->strides = {stride, stride};
  a->group = group;
  return a;
}

// Every group of `groups` (node ids of g) on the native backend.
inline Placement native_groups(const Graph& g, const std::vector<std::vector<NodeId>>& groups) {
  Placement p;
  for (const std::vector<NodeId>& nodes : groups)
    p.groups.push_back(PlacedGroup{.nodes = NodeSet::of(g.nodes().size(), nodes),
                                   .backend = std::string(kNativeBackend)});
  return p;
}

// Compiles placement `p` of g (native and the reference registered) for the host and for AVX2,
// with channel blocks of 16, 8 and none, on each thread count of `threads`, runs it on `x` and
// checks its one output against the reference's within `tolerance` (max_scaled_error).
inline void check_like_reference(const Context& ctx, const Graph& g, const Placement& p,
                                 const Tensor& x, double tolerance,
                                 std::initializer_list<int> threads = {1, 2}) {
  BackendRegistry backends;
  REQUIRE(backends.add(make_reference_backend()).ok());
  REQUIRE(register_native_backend(backends).ok());
  auto expected = run_reference(g, {x});
  REQUIRE(expected.ok());
  for (const char* target : {"", "avx2"})
    for (int32_t block : {16, 8, 0})
      for (int n : threads) {
        INFO("target '" << target << "', channel block " << block << ", threads " << n);
        auto model = compile_placement(
            ctx, backends, g, p,
            BuildOptions{.num_threads = n, .target = target, .channel_block = block});
        INFO(model.status().ToString());
        REQUIRE(model.ok());
        auto out = model->run({x});
        INFO(out.status().ToString());
        REQUIRE(out.ok());
        REQUIRE(out->size() == 1);
        INFO(describe_mismatch((*out)[0], (*expected)[0]));
        CHECK(max_scaled_error((*out)[0], (*expected)[0]) <= tolerance);
      }
}

}  // namespace collage::testing
