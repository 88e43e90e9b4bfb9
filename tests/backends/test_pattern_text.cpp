// The pattern text form: what C++ patterns print as, print(parse(s)) == s, and parse errors.
#include <catch2/catch.hpp>

#include "collage/pattern.h"

using namespace collage;

TEST_CASE("C++ patterns print in the documented text form", "[pattern][text]") {
  Pattern conv = is_op("Conv")(wildcard(), is_constant());
  CHECK(conv.to_string() == "(Conv * const)");
  Pattern add = is_op("Add")(conv, wildcard());
  CHECK(add.optional([](const Pattern& x) { return is_op("Relu")(x); }).to_string() ==
        "(Relu? (Add (Conv * const) *))");
  Pattern bias = wildcard();
  CHECK(conv.optional([&](const Pattern& x) { return is_op("Add")(x, bias); }).to_string() ==
        "(Add? (Conv * const) *)");
  CHECK(is_op("Add", "Mul")(wildcard(), wildcard()).has_dtype(DType::f32).to_string() ==
        "(Add|Mul * *)[dtype=f32]");
  Pattern v = wildcard();
  CHECK(is_op("Mul")(v, v).to_string() == "(Mul $0=* $0)");
  CHECK((is_op("Conv")(wildcard(), wildcard()) | is_op("Relu")(wildcard()) | is_op("Sigmoid"))
            .to_string() == "(| (Conv * *) (Relu *) Sigmoid)");
  CHECK(conv.has_attr("group", 1)
            .has_attr("auto_pad", "NOTSET")
            .has_attr("strides", {2, 2})
            .to_string() ==
        "(Conv * const)[attr.group=1, attr.auto_pad=\"NOTSET\", attr.strides=[2,2]]");
  CHECK(is_op("LeakyRelu").has_attr("alpha", 0.5).has_attr("beta", 1.0).to_string() ==
        "LeakyRelu[attr.alpha=0.5, attr.beta=1.0]");
  CHECK(is_op("Resize")
            .has_attr("scales", PatternAttr(std::vector<double>{1, 2.5}))
            .has_attr("mode", "a\"b\\c")
            .to_string() == "Resize[attr.scales=[1.0,2.5], attr.mode=\"a\\\"b\\\\c\"]");
  CHECK(wildcard().has_shape({1, -1, 3}).has_rank(3).to_string() == "*[shape=1x?x3, rank=3]");
  CHECK(wildcard().has_shape({}).to_string() == "*[shape=scalar]");
  CHECK(is_op("MatMul").has_fusion_kind(FusionKind::out_elementwise_fusable).to_string() ==
        "MatMul[fusion=out-elementwise-fusable]");
}

TEST_CASE("print(parse(s)) round-trips canonical text", "[pattern][text]") {
  const char* texts[] = {
      "*",
      "const",
      "Relu",
      "(ConstantOfShape)",
      "(Conv * const)",
      "(Relu? (Add (Conv * const) *))",
      "(Add? (Conv * const)[attr.group=1] *)[dtype=f32]",
      "(Add|Mul * *)[dtype=f32, rank=2]",
      "(Mul $0=* $0)",
      "(| (Conv * *) (Relu *) Sigmoid)",
      "(| $0=(Conv * *) (Relu $0))",
      "(Relu? (Relu? *))",
      "(MatMul *[rank=2, dtype=f32] *[shape=16x?])[fusion=out-elementwise-fusable]",
      "Clip[attr.min=-inf, attr.max=6.0, attr.name=\"x\\\"y\", attr.axes=[], "
      "attr.scales=[1.0,0.25]]",
      "Gemm[attr.alpha=1e-05, attr.transB=1]",
      "*[shape=scalar]",
  };
  for (const char* t : texts) {
    INFO(t);
    auto p = parse_pattern(t);
    REQUIRE(p.ok());
    CHECK(p->to_string() == t);
  }
  // Non-canonical spacing and nesting parse to the canonical form.
  auto p = parse_pattern("  ( Conv\t*  const )[ dtype = f32 ]");
  REQUIRE(p.ok());
  CHECK(p->to_string() == "(Conv * const)[dtype=f32]");
  auto nested = parse_pattern("(| (| Relu Tanh) Exp)");
  REQUIRE(nested.ok());
  CHECK(nested->to_string() == "(| Relu Tanh Exp)");
}

TEST_CASE("pattern parse errors say what was expected and where", "[pattern][text]") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"", "expected a pattern"},
      {"(Conv * const", "expected ')'"},
      {"(Conv * const) extra", "expected end of pattern at offset 15"},
      {"(Conv *)[dtype=f99]", "unknown dtype 'f99'"},
      {"(Conv *)[color=red]", "unknown predicate 'color'"},
      {"(Conv *)[rank=-1]", "bad rank '-1'"},
      {"(Conv *)[shape=1xax3]", "bad shape '1xax3'"},
      {"(Conv *)[fusion=fast]", "unknown fusion kind 'fast'"},
      {"(Conv *)[attr.auto_pad=\"SAME]", "unterminated string"},
      {"(Conv *)[attr.pads=[1,x]]", "bad number 'x'"},
      {"(Conv *)[rank=2", "expected ',' or ']'"},
      {"(Relu?)", "an optional operator needs the pattern it wraps"},
      {"(| *)", "alternatives need at least two patterns"},
      {"(Mul $x $x)", "undefined label $x"},
      {"(Add $x=* $x=*)", "label $x defined twice"},
      {"(const *)", "expected an operator name or '|' after '('"},
      {"(Add| * *)", "expected an operator name after '|'"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto p = parse_pattern(c.text);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(p.status().message()), Catch::Contains(c.message));
    CHECK_THAT(std::string(p.status().message()), Catch::Contains("pattern '"));
  }
}

TEST_CASE("parsed patterns match like the C++ patterns they print from", "[pattern][text]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId w = b.add_constant("w", Tensor(DType::f32, {3, 4}));
  ValueId m = *b.add("MatMul", {x, w});
  ValueId r = *b.add("Relu", {m});
  b.add_output(r);
  Graph g = *b.finish();
  Pattern cpp =
      is_op("MatMul")(wildcard().has_rank(2), is_constant()).optional([](const Pattern& p) {
        return is_op("Relu")(p);
      });
  auto parsed = parse_pattern(cpp.to_string());
  REQUIRE(parsed.ok());
  for (NodeId n : {0, 1}) {
    auto a = match(g, cpp, n), c = match(g, *parsed, n);
    REQUIRE(a.has_value() == c.has_value());
    if (a) CHECK(a->nodes == c->nodes);
  }
  CHECK(find_matches(g, *parsed).size() == 2);
}
