// What a boundary between an OpenVINO region and another group costs is measured, not assumed
// away: the region's ports are collage's dense row-major buffers, so OpenVINO's conversions into
// the layouts its kernels want run inside the compiled model that the measurer times; and the
// placement's costing charges the measured copy of every value the candidate reads from another
// group on top.
#include <catch2/catch.hpp>

#include "backends/openvino/region_onnx.h"
#include "collage/backends/openvino.h"
#include "collage/ops.h"
#include "collage/subgraph.h"
#include "collage/thread_pool.h"
#include "common/test_util.h"
#include "ov_module.h"
#include "placement/candidates.h"
#include "placement/cost_model.h"
#include "placement/measurer.h"

using namespace collage;
using namespace collage::testing;

namespace {

// x f32[1x16x20x20] -> Relu -> Conv 3x3 (16 channels) -> Relu.
Graph relu_conv_relu(const Context& ctx) {
  GraphBuilder b(ctx, "relu_conv_relu");
  ValueId x = b.add_input("x", {DType::f32, {1, 16, 20, 20}});
  ValueId r = (*b.add_node("Relu", {x}))[0];
  ValueId w = b.add_constant("w", random_f32({16, 16, 3, 3}, 3));
  auto conv = b.add_node("Conv", {r, w}, make_attrs<ConvAttrs>([](auto& a) {
                           a.pads = {1, 1, 1, 1};
                         }));
  b.add_output((*b.add_node("Relu", {(*conv)[0]}))[0]);
  return *b.finish();
}

std::string rt_string(const ov::Node& node, const std::string& key) {
  const auto& info = node.get_rt_info();
  auto it = info.find(key);
  return it == info.end() ? "" : it->second.as<std::string>();
}

}  // namespace

TEST_CASE("openvino boundaries: layout conversions run inside the region the measurer times",
          "[openvino][boundaries]") {
  Context ctx;
  Graph g = relu_conv_relu(ctx);
  // The group {Conv, Relu}, compiled as the backend compiles it (region_to_onnx, OpenVINO's ONNX
  // frontend, compile_region with the measurer's thread count).
  auto sub = extract_subgraph(ctx, g, NodeSet::of(g.nodes().size(), {1, 2}));
  REQUIRE(sub.ok());
  auto onnx = openvino_backend::region_to_onnx(sub->graph);
  REQUIRE(onnx.ok());
  std::shared_ptr<const ov::Model> model = rt_openvino::core().read_model(*onnx, ov::Tensor());
  std::vector<rt_openvino::ArgType> args;
  for (const TensorType& t : {TensorType{DType::f32, {1, 16, 20, 20}},
                              TensorType{DType::f32, {1, 16, 20, 20}}})
    args.push_back({ov::element::f32, ov::Shape(t.shape.begin(), t.shape.end())});
  auto region = rt_openvino::compile_region(model, 2, std::move(args), 1);
  // The plugin's graph as it runs: each node's kind and the layout of what it writes.
  std::string layers;
  bool reorders = false, blocked = false;
  for (const auto& node : region->compiled().get_runtime_model()->get_ordered_ops()) {
    const std::string type = rt_string(*node, "layerType");
    const std::string layout = rt_string(*node, "outputLayouts");
    layers += type + "(" + layout + ") ";
    reorders = reorders || type == "Reorder";
    if (type == "Input") CHECK(layout == "abcd");  // the caller's dense NCHW buffer, in place
    if (type == "Output") {
      // What the region hands back is dense NCHW again.
      const ov::Node& last = *node->input_value(0).get_node_shared_ptr();
      CHECK(rt_string(last, "outputLayouts") == "abcd");
    }
    blocked = blocked || (type == "Convolution" && layout != "abcd");
  }
  INFO(layers);
  // Where the convolution wants another layout, the conversions to and from it are nodes of the
  // compiled model, so every run of the region (the measurer's included) pays for them.
  CHECK(blocked == reorders);
}

TEST_CASE("openvino boundaries: a candidate reading another group's value is charged its copy",
          "[openvino][boundaries]") {
  Context ctx;
  Graph g = relu_conv_relu(ctx);
  BackendRegistry backends;
  REQUIRE(register_openvino_backend(backends).ok());
  const Backend* openvino = backends.find(kOpenvinoBackend);
  REQUIRE(openvino);
  const size_t n = g.nodes().size();
  GraphReachability reach(g);
  const CandidateSet all = collect_candidates(g, reach, {openvino}, CandidateOptions{});
  const int reads_relu = all.find(NodeSet::of(n, {1, 2}), openvino);   // reads Relu's output
  const int reads_input = all.find(NodeSet::of(n, {0, 1, 2}), openvino);  // the graph input
  REQUIRE(reads_relu >= 0);
  REQUIRE(reads_input >= 0);
  MeasureOptions quick;
  quick.sampling.min_samples = 3;
  quick.sampling.max_samples = 6;
  quick.sampling.max_ms = 50;
  quick.warmup_runs = 1;
  ThreadPool pool(2);
  Measurer measurer(quick, nullptr, "test-device", &pool);
  std::vector<CandidateCost> costs;
  cost_candidates(ctx, g, all, 0, measurer, CostingOptions{}, costs);
  REQUIRE(costs.size() == all.size());
  const CandidateCost& inner = costs[reads_relu];
  const CandidateCost& whole = costs[reads_input];
  INFO(inner.error << whole.error);
  REQUIRE(inner.kernel_ms > 0);
  REQUIRE(whole.kernel_ms > 0);
  const double copy = measurer.boundary_ms(TensorType{DType::f32, {1, 16, 20, 20}});
  CHECK(copy > 0);
  CHECK(inner.boundary_ms == copy);
  CHECK(inner.total() == inner.kernel_ms + copy);
  CHECK(whole.boundary_ms == 0);  // graph inputs are not charged
}
