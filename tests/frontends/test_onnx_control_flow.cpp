// ONNX If, Loop and Scan: inlined or unrolled when the import can decide them, If/Loop/Scan
// nodes with body graphs otherwise, run by the reference executor; checked against values
// worked out by hand.
#include <catch2/catch.hpp>

#include "collage/onnx.h"
#include "collage/passes.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "frontends/onnx_test_model.h"

namespace collage::testing {
namespace {

using TP = onnx::TensorProto;

std::vector<float> floats(const Tensor& t) {
  REQUIRE(t.dtype() == DType::f32);
  return {t.data<float>(), t.data<float>() + t.numel()};
}

// A graph attribute of `node`, to be filled in.
onnx::GraphProto& graph_attr(onnx::NodeProto& node, const std::string& name) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return *a->mutable_g();
}

void value_info(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                const std::string& name, int32_t elem, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

onnx::NodeProto& body_node(onnx::GraphProto& g, const std::string& op,
                           const std::vector<std::string>& in,
                           const std::vector<std::string>& out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return *n;
}

// If(cond) { y = x + 1 } else { y = x * w } with x and w from the outer graph.
OnnxModel if_model(bool constant_cond) {
  OnnxModel m(17);
  m.input("x", TP::FLOAT, {3});
  if (constant_cond) {
    Tensor c(DType::boolean, {});
    c.data<uint8_t>()[0] = 0;
    m.initializer("c", c);
  } else {
    m.input("c", TP::BOOL, {});
  }
  m.initializer("w", Tensor::from_f32({3}, std::vector<float>{2, 3, 4}));
  m.initializer("one", Tensor::scalar_f32(1));
  auto& n = m.node("If", {"c"}, {"y"}, "branch");
  onnx::GraphProto& then_g = graph_attr(n, "then_branch");
  body_node(then_g, "Add", {"x", "one"}, {"t_y"});
  value_info(then_g.mutable_output(), "t_y", TP::FLOAT, {3});
  onnx::GraphProto& else_g = graph_attr(n, "else_branch");
  body_node(else_g, "Mul", {"x", "w"}, {"e_y"});
  value_info(else_g.mutable_output(), "e_y", TP::FLOAT, {3});
  m.output("y");
  return m;
}

TEST_CASE("If with a constant condition becomes its branch's nodes", "[onnx][control-flow]") {
  Context ctx;
  auto g = if_model(/*constant_cond=*/true).import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  for (const Node& n : g->nodes()) CHECK(n.op_name() != "If");
  auto outs = run_reference(*g, {Tensor::from_f32({3}, std::vector<float>{1, 2, 3})});
  REQUIRE(outs.ok());
  CHECK(floats((*outs)[0]) == std::vector<float>{2, 6, 12});
}

TEST_CASE("If with a run-time condition runs the branch it picks", "[onnx][control-flow]") {
  Context ctx;
  auto g = if_model(/*constant_cond=*/false).import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto placed = run_passes(ctx, *g);
  REQUIRE(placed.ok());
  const Tensor x = Tensor::from_f32({3}, std::vector<float>{1, 2, 3});
  for (bool c : {true, false}) {
    Tensor cond(DType::boolean, {});
    cond.data<uint8_t>()[0] = c;
    auto outs = run_reference(*placed, {x, cond});
    INFO(outs.status().ToString());
    REQUIRE(outs.ok());
    CHECK(floats((*outs)[0]) ==
          (c ? std::vector<float>{2, 3, 4} : std::vector<float>{2, 6, 12}));
  }
}

// Loop M times: acc = acc * 2 + i, scan output acc each iteration.
OnnxModel loop_model(bool constant_trips) {
  OnnxModel m(17);
  m.input("acc0", TP::FLOAT, {2});
  if (constant_trips)
    m.initializer("m", Tensor::from_i64({}, std::vector<int64_t>{3}));
  else
    m.input("m", TP::INT64, {});
  m.initializer("two", Tensor::scalar_f32(2));
  auto& n = m.node("Loop", {"m", "", "acc0"}, {"acc", "history"}, "doubling");
  onnx::GraphProto& body = graph_attr(n, "body");
  value_info(body.mutable_input(), "i", TP::INT64, {});
  value_info(body.mutable_input(), "cond_in", TP::BOOL, {});
  value_info(body.mutable_input(), "acc_in", TP::FLOAT, {2});
  body_node(body, "Mul", {"acc_in", "two"}, {"doubled"});
  auto& cast = body_node(body, "Cast", {"i"}, {"i_f"});
  attr_int(cast, "to", TP::FLOAT);
  body_node(body, "Add", {"doubled", "i_f"}, {"acc_out"});
  body_node(body, "Identity", {"cond_in"}, {"cond_out"});
  body_node(body, "Identity", {"acc_out"}, {"acc_scan"});
  value_info(body.mutable_output(), "cond_out", TP::BOOL, {});
  value_info(body.mutable_output(), "acc_out", TP::FLOAT, {2});
  value_info(body.mutable_output(), "acc_scan", TP::FLOAT, {2});
  m.output("acc").output("history");
  return m;
}

TEST_CASE("Loop with a constant trip count is unrolled", "[onnx][control-flow]") {
  Context ctx;
  auto g = loop_model(/*constant_trips=*/true).import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  for (const Node& n : g->nodes()) CHECK(n.op_name() != "Loop");
  CHECK(g->value(g->outputs()[1]).type.shape == Shape{3, 2});
  auto outs = run_reference(*g, {Tensor::from_f32({2}, std::vector<float>{1, -1})});
  REQUIRE(outs.ok());
  // acc: 1 -> 2 -> 5 -> 12; -1 -> -2 -> -3 -> -4.
  CHECK(floats((*outs)[0]) == std::vector<float>{12, -4});
  CHECK(floats((*outs)[1]) == std::vector<float>{2, -2, 5, -3, 12, -4});
}

TEST_CASE("Loop with a run-time trip count runs as a node", "[onnx][control-flow]") {
  Context ctx;
  auto g = loop_model(/*constant_trips=*/false).import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[1]).type.shape == Shape{kDynamicDim, 2});
  for (int64_t trips : {0, 2, 3}) {
    auto outs = run_reference(
        *g, {Tensor::from_f32({2}, std::vector<float>{1, -1}), Tensor::scalar_i64(trips)});
    INFO(outs.status().ToString());
    REQUIRE(outs.ok());
    CHECK((*outs)[1].shape() == Shape{trips, 2});
    if (trips == 3) CHECK(floats((*outs)[0]) == std::vector<float>{12, -4});
    if (trips == 0) CHECK(floats((*outs)[0]) == std::vector<float>{1, -1});
  }
}

// Loop M times: tokens = Concat(tokens, [i]), a carried value one longer each iteration (the
// body, typed with the initial i64[1], would give i64[2]).
OnnxModel growing_loop_model() {
  OnnxModel m(17);
  m.input("m", TP::INT64, {});
  m.input("start", TP::INT64, {1});
  auto& n = m.node("Loop", {"m", "", "start"}, {"tokens"}, "grow");
  onnx::GraphProto& body = graph_attr(n, "body");
  value_info(body.mutable_input(), "i", TP::INT64, {});
  value_info(body.mutable_input(), "cond_in", TP::BOOL, {});
  value_info(body.mutable_input(), "tokens_in", TP::INT64, {1});
  body_node(body, "Identity", {"cond_in"}, {"cond_out"});
  attr_ints(body_node(body, "Constant", {}, {"zero"}), "value_ints", {0});
  body_node(body, "Unsqueeze", {"i", "zero"}, {"i_1"});
  auto& cat = body_node(body, "Concat", {"tokens_in", "i_1"}, {"tokens_out"});
  attr_int(cat, "axis", 0);
  value_info(body.mutable_output(), "cond_out", TP::BOOL, {});
  value_info(body.mutable_output(), "tokens_out", TP::INT64, {2});
  m.output("tokens");
  return m;
}

TEST_CASE("a Loop's carried value that grows each iteration is typed dynamic",
          "[onnx][control-flow]") {
  Context ctx;
  auto g = growing_loop_model().import(ctx);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  CHECK(g->value(g->outputs()[0]).type.shape == Shape{kDynamicDim});
  for (int64_t trips : {0, 1, 4}) {
    auto outs = run_reference(*g, {Tensor::scalar_i64(trips),
                                   Tensor::from_i64({1}, std::vector<int64_t>{7})});
    INFO(outs.status().ToString());
    REQUIRE(outs.ok());
    std::vector<int64_t> want{7};
    for (int64_t i = 0; i < trips; ++i) want.push_back(i);
    const Tensor& t = (*outs)[0];
    CHECK(std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.numel()) == want);
  }
}

// Scan over the rows of xs: state s = s + x_t, scan output s each step (a running sum), with
// the sequence read backwards when `reverse`.
OnnxModel scan_model(int64_t length, bool reverse) {
  OnnxModel m(17);
  m.input("s0", TP::FLOAT, {2});
  m.input("xs", TP::FLOAT, {length, 2});
  auto& n = m.node("Scan", {"s0", "xs"}, {"s", "sums"}, "running_sum");
  attr_int(n, "num_scan_inputs", 1);
  if (reverse) attr_ints(n, "scan_input_directions", {1});
  onnx::GraphProto& body = graph_attr(n, "body");
  value_info(body.mutable_input(), "s_in", TP::FLOAT, {2});
  value_info(body.mutable_input(), "x_t", TP::FLOAT, {2});
  body_node(body, "Add", {"s_in", "x_t"}, {"s_out"});
  body_node(body, "Identity", {"s_out"}, {"s_scan"});
  value_info(body.mutable_output(), "s_out", TP::FLOAT, {2});
  value_info(body.mutable_output(), "s_scan", TP::FLOAT, {2});
  m.output("s").output("sums");
  return m;
}

TEST_CASE("Scan is unrolled when short and runs as a node when long", "[onnx][control-flow]") {
  Context ctx;
  for (int64_t length : {3, 100}) {
    for (bool reverse : {false, true}) {
      INFO("length " << length << (reverse ? ", reversed" : ""));
      auto g = scan_model(length, reverse).import(ctx);
      INFO(g.status().ToString());
      REQUIRE(g.ok());
      bool has_scan = false;
      for (const Node& n : g->nodes()) has_scan = has_scan || n.op_name() == "Scan";
      CHECK(has_scan == (length > 64));
      Tensor xs(DType::f32, {length, 2});
      for (int64_t i = 0; i < xs.numel(); ++i) xs.data<float>()[i] = static_cast<float>(i);
      auto outs = run_reference(*g, {Tensor::from_f32({2}, std::vector<float>{1, 1}), xs});
      INFO(outs.status().ToString());
      REQUIRE(outs.ok());
      // Sum of rows: column 0 holds 0, 2, 4, ...; column 1 holds 1, 3, 5, ....
      const float col0 = static_cast<float>(length * (length - 1));
      CHECK(floats((*outs)[0]) == std::vector<float>{1 + col0, 1 + col0 + length});
      const std::vector<float> sums = floats((*outs)[1]);
      REQUIRE(sums.size() == static_cast<size_t>(2 * length));
      // The first step adds the first row read: row 0, or the last one backwards.
      CHECK(sums[0] == (reverse ? 1 + 2 * (length - 1) : 1));
    }
  }
}

// Scan version 8: the running sum per batch row of xs [2, length, 2], states [2, 2]; `lens` is
// sequence_lens (empty: absent).
OnnxModel scan8_model(int64_t length, bool reverse, const std::vector<int64_t>& lens) {
  OnnxModel m(8);
  m.input("s0", TP::FLOAT, {2, 2});
  m.input("xs", TP::FLOAT, {2, length, 2});
  if (!lens.empty()) m.initializer("lens", Tensor::from_i64({2}, lens));
  auto& n = m.node("Scan", {lens.empty() ? "" : "lens", "s0", "xs"}, {"s", "sums"}, "scan8");
  attr_int(n, "num_scan_inputs", 1);
  if (reverse) attr_ints(n, "directions", {1});
  onnx::GraphProto& body = graph_attr(n, "body");
  value_info(body.mutable_input(), "s_in", TP::FLOAT, {2});
  value_info(body.mutable_input(), "x_t", TP::FLOAT, {2});
  body_node(body, "Add", {"s_in", "x_t"}, {"s_out"});
  body_node(body, "Identity", {"s_out"}, {"s_scan"});
  value_info(body.mutable_output(), "s_out", TP::FLOAT, {2});
  value_info(body.mutable_output(), "s_scan", TP::FLOAT, {2});
  m.output("s").output("sums");
  return m;
}

TEST_CASE("Scan version 8 scans each batch row", "[onnx][control-flow]") {
  Context ctx;
  for (int64_t length : {3, 100}) {
    for (bool reverse : {false, true}) {
      INFO("length " << length << (reverse ? ", reversed" : ""));
      auto g = scan8_model(length, reverse, {length, length}).import(ctx);
      INFO(g.status().ToString());
      REQUIRE(g.ok());
      Tensor xs(DType::f32, {2, length, 2});
      for (int64_t i = 0; i < xs.numel(); ++i) xs.data<float>()[i] = static_cast<float>(i);
      const Tensor s0 = Tensor::from_f32({2, 2}, std::vector<float>{1, 1, -1, 0});
      auto outs = run_reference(*g, {s0, xs});
      INFO(outs.status().ToString());
      REQUIRE(outs.ok());
      REQUIRE((*outs)[0].shape() == Shape{2, 2});
      REQUIRE((*outs)[1].shape() == Shape{2, length, 2});
      // Row b holds 2 * length * b + 0, 2, 4, ... in column 0 and one more in column 1.
      const std::vector<float> s = floats((*outs)[0]), sums = floats((*outs)[1]);
      for (int64_t b = 0; b < 2; ++b) {
        const float base = static_cast<float>(2 * length * b);
        const float col0 = static_cast<float>(length) * base + static_cast<float>(length * (length - 1));
        CHECK(s[2 * b] == s0.data<float>()[2 * b] + col0);
        CHECK(s[2 * b + 1] == s0.data<float>()[2 * b + 1] + col0 + static_cast<float>(length));
        // The first step adds the first row read: row 0, or the last one backwards.
        const float first = base + static_cast<float>(reverse ? 2 * (length - 1) : 0);
        CHECK(sums[2 * length * b] == s0.data<float>()[2 * b] + first);
      }
    }
  }
  check_error(scan8_model(3, false, {3, 0}).import(ctx).status(),
              absl::StatusCode::kInvalidArgument,
              "Scan 'scan8': sequence_lens 0 for batch row 1 is outside 1 to 3");
}

TEST_CASE("a body that reads an undefined name is refused by name", "[onnx][control-flow]") {
  Context ctx;
  OnnxModel m(17);
  m.input("c", TP::BOOL, {});
  auto& n = m.node("If", {"c"}, {"y"}, "bad_if");
  onnx::GraphProto& then_g = graph_attr(n, "then_branch");
  body_node(then_g, "Relu", {"nowhere"}, {"t_y"});
  value_info(then_g.mutable_output(), "t_y", TP::FLOAT, {1});
  onnx::GraphProto& else_g = graph_attr(n, "else_branch");
  body_node(else_g, "Relu", {"nowhere"}, {"e_y"});
  value_info(else_g.mutable_output(), "e_y", TP::FLOAT, {1});
  m.output("y");
  check_error(m.import(ctx).status(), absl::StatusCode::kInvalidArgument, "bad_if");
}

}  // namespace
}  // namespace collage::testing
