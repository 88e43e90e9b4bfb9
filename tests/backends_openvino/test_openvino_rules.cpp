// The openvino backend's candidates: which nodes it runs, its chains, and its maximal convex
// regions (one region around a node it cannot run on a path between two it can, the whole graph
// when it runs every node), and single:openvino placing a graph it fully runs as one group.
#include <catch2/catch.hpp>

#include "backends/openvino/openvino_rules.h"
#include "backends/openvino/region_ends.h"
#include "backends/openvino/region_onnx.h"
#include "collage/backends/openvino.h"
#include "collage/executor.h"
#include "collage/ops.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "core/str_cat.h"
#include "openvino_test_graphs.h"
#include "placement/baselines.h"

using namespace collage;
using namespace collage::openvino_backend;

namespace {

// x -> 0 Conv -> 1 Relu and 2 Tanh (both of the conv) -> 3 Add -> 4 Sigmoid (topological order).
struct Diamond {
  Context ctx;
  Graph g;
  Diamond() {
    GraphBuilder b(ctx, "diamond");
    ValueId x = b.add_input("x", {DType::f32, {1, 4, 8, 8}});
    Tensor w = testing::random_f32({4, 4, 3, 3}, 7);
    ValueId wc = b.add_constant("w", w);
    auto conv = b.add_node("Conv", {x, wc}, make_attrs<ConvAttrs>([](auto& a) {
                             a.pads = {1, 1, 1, 1};
                           }));
    auto relu = b.add_node("Relu", {(*conv)[0]});
    auto tanh = b.add_node("Tanh", {(*conv)[0]});
    auto add = b.add_node("Add", {(*relu)[0], (*tanh)[0]});
    auto sig = b.add_node("Sigmoid", {(*add)[0]});
    b.add_output((*sig)[0]);
    auto done = b.finish();
    REQUIRE(done.ok());
    g = *std::move(done);
  }
};

std::vector<std::vector<NodeId>> as_lists(const std::vector<NodeSet>& sets) {
  std::vector<std::vector<NodeId>> out;
  for (const NodeSet& s : sets) out.push_back(s.to_vector());
  return out;
}

}  // namespace

TEST_CASE("openvino rules: every IR operator of the diamond is supported", "[openvino][rules]") {
  Diamond d;
  CHECK(supported_nodes(d.g) == std::vector<bool>(5, true));
  CHECK(has_onnx_form("Conv"));
  CHECK_FALSE(has_onnx_form("TreeEnsemble"));
}

TEST_CASE("openvino rules: the whole graph is one region when every node is supported",
          "[openvino][rules]") {
  Diamond d;
  GraphReachability reach(d.g);
  CHECK(as_lists(regions(d.g, reach, supported_nodes(d.g))) ==
        std::vector<std::vector<NodeId>>{{0, 1, 2, 3, 4}});
}

TEST_CASE("openvino rules: regions stay convex around a node OpenVINO does not run",
          "[openvino][rules]") {
  Diamond d;
  GraphReachability reach(d.g);
  // Without Relu (1), Conv -> ... -> Add would leave the region through Relu and come back.
  std::vector<bool> supported = {true, false, true, true, true};
  const auto lists = as_lists(regions(d.g, reach, supported));
  CHECK(lists == std::vector<std::vector<NodeId>>{{0, 2}, {3, 4}});
  for (const auto& l : lists) CHECK(reach.is_convex(NodeSet::of(5, l)));
}

// Conv has two users: no chain starts there.
TEST_CASE("openvino rules: chains follow single users through elementwise operators",
          "[openvino][rules]") {
  Diamond d;
  GraphReachability reach(d.g);
  RuleOptions options;
  options.max_depth = 3;
  CHECK(as_lists(chains(d.g, reach, options, supported_nodes(d.g))) ==
        std::vector<std::vector<NodeId>>{{1, 3}, {1, 3, 4}, {2, 3}, {2, 3, 4}, {3, 4}});
}

// x -> 0 Conv -> 1 Relu -> 2 Conv and 3 Conv -> 4 Add -> 5 Conv -> 6 Relu (topological order).
struct Branches {
  Context ctx;
  Graph g;
  Branches() {
    GraphBuilder b(ctx, "branches");
    ValueId x = b.add_input("x", {DType::f32, {1, 4, 8, 8}});
    const auto conv = [&](ValueId in, uint64_t seed) {
      ValueId w = b.add_constant(str_cat("w", seed), testing::random_f32({4, 4, 3, 3}, seed));
      return (*b.add_node("Conv", {in, w}, make_attrs<ConvAttrs>([](auto& a) {
        a.pads = {1, 1, 1, 1};
      })))[0];
    };
    ValueId r = (*b.add_node("Relu", {conv(x, 1)}))[0];
    ValueId sum = (*b.add_node("Add", {conv(r, 2), conv(r, 3)}))[0];
    b.add_output((*b.add_node("Relu", {conv(sum, 4)}))[0]);
    auto done = b.finish();
    REQUIRE(done.ok());
    g = *std::move(done);
  }
};

// Cuts before a Relu or the Add part an epilogue from its convolution; cuts between Conv 2 and
// Conv 3 have two values crossing. The others keep {2..6}, {5, 6}, {0..4} and {0, 1}.
TEST_CASE("openvino rules: a region without its first or last layers, cut where one value crosses",
          "[openvino][rules]") {
  Branches d;
  GraphReachability reach(d.g);
  const std::vector<NodeSet> whole = regions(d.g, reach, supported_nodes(d.g));
  REQUIRE(as_lists(whole) == std::vector<std::vector<NodeId>>{{0, 1, 2, 3, 4, 5, 6}});
  const auto lists = as_lists(region_ends(d.g, whole, RuleOptions{}));
  CHECK(lists == std::vector<std::vector<NodeId>>{
                     {2, 3, 4, 5, 6}, {5, 6}, {0, 1, 2, 3, 4}, {0, 1}});
  for (const auto& l : lists) CHECK(reach.is_convex(NodeSet::of(7, l)));
  RuleOptions two;
  two.max_depth = 2;
  CHECK(as_lists(region_ends(d.g, whole, two)) ==
        std::vector<std::vector<NodeId>>{{2, 3, 4, 5, 6}, {0, 1, 2, 3, 4}});
  // The diamond: every cut parts an elementwise node from the convolution or crosses twice.
  Diamond diamond;
  GraphReachability diamond_reach(diamond.g);
  CHECK(region_ends(diamond.g, regions(diamond.g, diamond_reach, supported_nodes(diamond.g)),
                    RuleOptions{})
            .empty());
}

namespace {

// x -> `layers` x (Conv -> Relu): node 2i is a Conv, 2i + 1 its Relu.
Graph conv_relu_chain(Context& ctx, int layers) {
  GraphBuilder b(ctx, "conv_relu_chain");
  ValueId v = b.add_input("x", {DType::f32, {1, 4, 8, 8}});
  for (int i = 0; i < layers; ++i) {
    ValueId w = b.add_constant(str_cat("w", i), testing::random_f32({4, 4, 3, 3}, 10 + i));
    v = (*b.add_node("Conv", {v, w}, make_attrs<ConvAttrs>([](auto& a) {
      a.pads = {1, 1, 1, 1};
    })))[0];
    v = (*b.add_node("Relu", {v}))[0];
  }
  b.add_output(v);
  auto done = b.finish();
  REQUIRE(done.ok());
  return *std::move(done);
}

std::vector<NodeId> node_range(NodeId first, NodeId last) {
  std::vector<NodeId> out;
  for (NodeId n = first; n <= last; ++n) out.push_back(n);
  return out;
}

}  // namespace

// Beside the three nearest cuts of each end, the first cut past 8, 12, 16, 24, 32, 48 and 64
// nodes from the start that keeps at least half of the region: a mix may run a model's first
// blocks elsewhere.
TEST_CASE("openvino rules: region ends also reach past a model's first blocks",
          "[openvino][rules]") {
  Context ctx;
  const Graph g = conv_relu_chain(ctx, 20);
  GraphReachability reach(g);
  const std::vector<NodeSet> whole = regions(g, reach, supported_nodes(g));
  REQUIRE(whole.size() == 1);
  REQUIRE(whole[0].count() == 40);
  // The cut after node 16 keeps 24 of 40 nodes; after 24, 16 would be less than half.
  CHECK(as_lists(region_ends(g, whole, RuleOptions{})) ==
        std::vector<std::vector<NodeId>>{node_range(2, 39), node_range(4, 39), node_range(6, 39),
                                         node_range(8, 39), node_range(12, 39),
                                         node_range(16, 39), node_range(0, 37), node_range(0, 35),
                                         node_range(0, 33)});
}

TEST_CASE("openvino rules: single:openvino runs the diamond as one group matching the reference",
          "[openvino][rules]") {
  Diamond d;
  BackendRegistry backends;
  testing::add_reference_and_openvino(backends);
  const Placement placement = testing::one_openvino_region(d.g, backends);
  CHECK(placement.groups[0].origin == "openvino.region");
  auto compiled = compile_placement(d.ctx, backends, d.g, placement);
  INFO(compiled.status().ToString());
  REQUIRE(compiled.ok());
  const std::vector<Tensor> feed = {testing::random_f32({1, 4, 8, 8}, 3)};
  auto outs = compiled->run(feed);
  REQUIRE(outs.ok());
  auto expected = run_reference(d.g, feed);
  REQUIRE(expected.ok());
  CHECK(testing::max_scaled_error((*outs)[0], (*expected)[0]) <= 1e-5);
}
