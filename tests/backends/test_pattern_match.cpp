// Pattern matching: operators and inputs, commutative inputs, optional, alternatives, predicates,
// shared patterns, bindings, and rejection of matches whose intermediate values escape.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "collage/pattern.h"

using namespace collage;

namespace {

Tensor weights(Shape s) {
  return Tensor(DType::f32, std::move(s));
}

// conv(x, w) -> add(conv, y) -> relu; plus a side branch leaky = LeakyRelu(y, 0.1).
struct ConvGraph {
  Graph g;
  NodeId conv, add, relu, leaky;
};

ConvGraph conv_graph(const Context& ctx, bool weight_is_constant = true,
                     bool conv_escapes = false) {
  GraphBuilder b(ctx, "conv");
  ValueId x = b.add_input("x", {DType::f32, {1, 3, 8, 8}});
  ValueId y = b.add_input("y", {DType::f32, {1, 4, 8, 8}});
  ValueId w = weight_is_constant ? b.add_constant("w", weights({4, 3, 3, 3}))
                                 : b.add_input("w", {DType::f32, {4, 3, 3, 3}});
  auto attrs = make_attrs<ConvAttrs>([](ConvAttrs& a) { a.pads = {1, 1, 1, 1}; });
  ValueId c = *b.add("Conv", {x, w}, attrs, "conv");
  ValueId s = *b.add("Add", {y, c}, nullptr, "add");  // conv on the right: commutative matching
  ValueId r = *b.add("Relu", {s}, nullptr, "relu");
  auto la = make_attrs<LeakyReluAttrs>([](LeakyReluAttrs& a) { a.alpha = 0.1f; });
  ValueId l = *b.add("LeakyRelu", {conv_escapes ? c : y}, la, "leaky");
  b.add_output(r);
  b.add_output(l);
  return {*b.finish(), 0, 1, 2, 3};
}

std::vector<NodeId> nodes_of(const std::optional<PatternMatch>& m) {
  return m ? m->nodes.to_vector() : std::vector<NodeId>{};
}

}  // namespace

TEST_CASE("operator patterns match nodes with matching inputs", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  Pattern conv = is_op("Conv")(wildcard(), is_constant());
  auto m = match(cg.g, conv, cg.conv);
  REQUIRE(m);
  CHECK(m->root == cg.conv);
  CHECK(nodes_of(m) == std::vector<NodeId>{cg.conv});
  CHECK(m->inputs.size() == 2);  // x and the constant w
  CHECK_FALSE(match(cg.g, conv, cg.add));

  ConvGraph no_const = conv_graph(ctx, /*weight_is_constant=*/false);
  CHECK_FALSE(match(no_const.g, conv, no_const.conv));
  CHECK(match(no_const.g, is_op("Conv")(wildcard(), wildcard()), no_const.conv));
  // The number of inputs must agree (Conv has an optional bias input, absent here).
  CHECK_FALSE(match(cg.g, is_op("Conv")(wildcard(), wildcard(), wildcard()), cg.conv));
  // A bare operator pattern takes any inputs.
  CHECK(match(cg.g, is_op("Conv"), cg.conv));
}

TEST_CASE("commutative operators match their first two inputs in either order", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  Pattern conv = is_op("Conv")(wildcard(), is_constant());
  Pattern add = is_op("Add")(conv, wildcard());  // the graph has Add(y, conv)
  auto m = match(cg.g, add, cg.add);
  REQUIRE(m);
  CHECK(nodes_of(m) == std::vector<NodeId>{cg.conv, cg.add});
  CHECK(m->node_of(conv) == cg.conv);

  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4}});
  ValueId y = b.add_input("y", {DType::f32, {4}});
  ValueId r = *b.add("Relu", {x});
  ValueId s = *b.add("Sub", {y, r});
  b.add_output(s);
  Graph g = *b.finish();
  CHECK_FALSE(match(g, is_op("Sub")(is_op("Relu")(wildcard()), wildcard()), 1));
  CHECK(match(g, is_op("Sub")(wildcard(), is_op("Relu")(wildcard())), 1));
}

TEST_CASE("optional patterns match with and without the wrapping operator", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  Pattern add = is_op("Add")(is_op("Conv")(wildcard(), is_constant()), wildcard());
  Pattern p = add.optional([](const Pattern& x) { return is_op("Relu")(x); });
  CHECK(nodes_of(match(cg.g, p, cg.relu)) == std::vector<NodeId>{cg.conv, cg.add, cg.relu});
  CHECK(nodes_of(match(cg.g, p, cg.add)) == std::vector<NodeId>{cg.conv, cg.add});
  CHECK_FALSE(match(cg.g, p, cg.conv));
  auto all = find_matches(cg.g, p);
  REQUIRE(all.size() == 2);
  CHECK(all[0].root == cg.add);
  CHECK(all[1].root == cg.relu);
}

TEST_CASE("alternatives of operator names and of patterns", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  Pattern either = is_op("Relu", "LeakyRelu")(wildcard());
  CHECK(find_matches(cg.g, either).size() == 2);
  Pattern alt = is_op("Conv")(wildcard(), wildcard()) | is_op("Relu")(wildcard());
  auto all = find_matches(cg.g, alt);
  REQUIRE(all.size() == 2);
  CHECK(all[0].root == cg.conv);
  CHECK(all[1].root == cg.relu);
}

TEST_CASE("attribute, dtype, rank, shape and fusion-kind predicates", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  auto matches = [&](const Pattern& p, NodeId root) { return match(cg.g, p, root).has_value(); };
  Pattern conv = is_op("Conv")(wildcard(), is_constant());
  CHECK(matches(conv.has_attr("group", 1), cg.conv));
  CHECK_FALSE(matches(conv.has_attr("group", 2), cg.conv));
  CHECK(matches(conv.has_attr("auto_pad", "NOTSET"), cg.conv));
  CHECK(matches(conv.has_attr("pads", {1, 1, 1, 1}), cg.conv));
  CHECK_FALSE(matches(conv.has_attr("pads", {0, 0, 0, 0}), cg.conv));
  CHECK_FALSE(matches(conv.has_attr("no_such_attribute", 1), cg.conv));
  Pattern leaky = is_op("LeakyRelu")(wildcard());
  CHECK(matches(leaky.has_attr("alpha", 0.1), cg.leaky));  // double vs float field: f32 rounding
  CHECK_FALSE(matches(leaky.has_attr("alpha", 0.2), cg.leaky));
  CHECK(matches(conv.has_dtype(DType::f32), cg.conv));
  CHECK_FALSE(matches(conv.has_dtype(DType::f16), cg.conv));
  CHECK(matches(conv.has_rank(4), cg.conv));
  CHECK(matches(conv.has_shape({1, 4, -1, 8}), cg.conv));
  CHECK_FALSE(matches(conv.has_shape({1, 3, -1, 8}), cg.conv));
  CHECK(matches(conv.has_fusion_kind(FusionKind::out_elementwise_fusable), cg.conv));
  CHECK_FALSE(matches(conv.has_fusion_kind(FusionKind::elementwise), cg.conv));
  // Predicates on inputs constrain the values the wildcards bind.
  CHECK(matches(is_op("Conv")(wildcard().has_shape({1, 3, 8, 8}), wildcard()), cg.conv));
  CHECK_FALSE(matches(is_op("Conv")(wildcard().has_rank(2), wildcard()), cg.conv));
  // Fusion kind of a wildcard is its producer's.
  Pattern after_conv =
      is_op("Add")(wildcard().has_fusion_kind(FusionKind::out_elementwise_fusable), wildcard());
  CHECK(matches(after_conv, cg.add));
}

TEST_CASE("a match whose intermediate value is used outside it is rejected", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx, true, /*conv_escapes=*/true);  // LeakyRelu also reads the conv
  Pattern add = is_op("Add")(is_op("Conv")(wildcard(), is_constant()), wildcard());
  CHECK_FALSE(match(cg.g, add, cg.add));
  // With the conv optional the Add alone is still a valid match.
  Pattern opt_conv =
      is_op("Add")(is_op("Conv")(wildcard(), is_constant()) | wildcard(), wildcard());
  auto m = match(cg.g, opt_conv, cg.add);
  REQUIRE(m);
  CHECK(nodes_of(m) == std::vector<NodeId>{cg.add});

  // A graph output is used outside too.
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4}});
  ValueId r = *b.add("Relu", {x});
  ValueId e = *b.add("Exp", {r});
  b.add_output(e);
  b.add_output(r);
  Graph g = *b.finish();
  CHECK_FALSE(match(g, is_op("Exp")(is_op("Relu")(wildcard())), 1));
  CHECK(match(g, is_op("Exp")(wildcard()), 1));
}

TEST_CASE("a pattern object used twice binds one value", "[pattern]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {4}});
  ValueId y = b.add_input("y", {DType::f32, {4}});
  ValueId sq = *b.add("Mul", {x, x});
  ValueId xy = *b.add("Mul", {x, y});
  b.add_output(sq);
  b.add_output(xy);
  Graph g = *b.finish();
  Pattern v = wildcard();
  Pattern square = is_op("Mul")(v, v);
  auto m = match(g, square, 0);
  REQUIRE(m);
  CHECK(m->value_of(v) == x);
  CHECK(m->inputs == std::vector<ValueId>{x});
  CHECK_FALSE(match(g, square, 1));
  CHECK(match(g, is_op("Mul")(wildcard(), wildcard()), 1));
}

TEST_CASE("bindings name the value and node of each pattern", "[pattern]") {
  Context ctx;
  ConvGraph cg = conv_graph(ctx);
  Pattern data = wildcard(), weight = is_constant(), other = wildcard();
  Pattern conv = is_op("Conv")(data, weight);
  Pattern add = is_op("Add")(conv, other);
  auto m = match(cg.g, add, cg.add);
  REQUIRE(m);
  CHECK(m->value_of(data) == cg.g.inputs()[0]);
  CHECK(m->value_of(other) == cg.g.inputs()[1]);
  CHECK(cg.g.constant_of(m->value_of(weight)) != nullptr);
  CHECK(m->node_of(conv) == cg.conv);
  CHECK(m->node_of(add) == cg.add);
  CHECK(m->node_of(data) == -1);
  CHECK(m->value_of(is_op("Relu")) == kNoValue);
  // Inputs in first use order: x, w (the conv), then y (the add).
  REQUIRE(m->inputs.size() == 3);
  CHECK(m->inputs[0] == cg.g.inputs()[0]);
  CHECK(m->inputs[2] == cg.g.inputs()[1]);
}
