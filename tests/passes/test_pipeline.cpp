// The pass pipeline: every pass in order on one graph, the options, the hook, determinism.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "collage/passes.h"
#include "common/test_util.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// A small network with work for every pass: a shape computation on a static shape, Conv +
// BatchNormalization, a LayerNorm and a GELU decomposition, and a dead branch.
Graph network(const Context& ctx) {
  GraphBuilder b(ctx, "net");
  ValueId x = b.add_input("x", {DType::f32, {1, 3, 4, 4}});
  ValueId conv = add(b, "Conv", {x, b.add_constant("w", random_f32({8, 3, 3, 3}, 1))},
                     make_attrs<ConvAttrs>([](auto& a) { a.pads = {1, 1, 1, 1}; }), "conv");
  ValueId bn = add(b, "BatchNormalization",
                   {conv, b.add_constant("s", random_f32({8}, 2, 0.5f, 2.f)),
                    b.add_constant("b", random_f32({8}, 3)), b.add_constant("m", random_f32({8}, 4)),
                    b.add_constant("v", random_f32({8}, 5, 0.5f, 2.f))},
                   nullptr, "bn");
  ValueId h = add(b, "Reshape", {bn}, make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {1, 8, 16}; }));
  // The element count of the last axis, computed from the static shape: folds to a constant.
  ValueId last = add(b, "Gather", {add(b, "Shape", {h}), b.add_constant("i", Tensor::scalar_i64(2))});
  ValueId count = add(b, "Cast", {last}, make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
  auto mean_attrs = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {-1}; });
  ValueId mean = add(b, "Div", {add(b, "ReduceSum", {h}, mean_attrs), count}, nullptr, "sum_mean");
  ValueId d = add(b, "Sub", {h, add(b, "ReduceMean", {h}, mean_attrs)});
  ValueId var = add(b, "ReduceMean", {add(b, "Pow", {d, scalar(b, "two", 2.f)})}, mean_attrs);
  ValueId sd = add(b, "Sqrt", {add(b, "Add", {var, scalar(b, "eps", 1e-5f)})});
  ValueId n = add(b, "Mul", {add(b, "Div", {d, sd}), b.add_constant("gamma", random_f32({16}, 6))});
  ValueId erf = add(b, "Erf", {add(b, "Div", {n, scalar(b, "sqrt2", 1.4142135f)})});
  ValueId gelu = add(b, "Mul", {add(b, "Mul", {n, add(b, "Add", {erf, scalar(b, "one", 1.f)})}),
                                scalar(b, "half", 0.5f)});
  add(b, "Relu", {gelu}, nullptr, "dead");
  b.add_output(add(b, "Add", {gelu, mean}, nullptr, "out"));
  return finish(b);
}

}  // namespace

TEST_CASE("run_passes runs every pass and keeps the graph's meaning", "[passes]") {
  Context ctx;
  Graph g = network(ctx);
  std::vector<std::string> seen;
  PassOptions options;
  options.after_pass = [&](std::string_view pass, const Graph& after) {
    seen.emplace_back(pass);
    CHECK(verify_graph(ctx, after).ok());
  };
  auto r = run_passes(ctx, g, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(seen == std::vector<std::string>{"infer_shapes", "fold_constants", "canonicalize",
                                         "fold_batch_norm", "split_dynamic_quantize",
                                         "eliminate_dead_code"});
  CHECK(op_names(*r) == std::vector<std::string>{"Conv", "Reshape", "ReduceSum", "Div",
                                                 "LayerNormalization", "Gelu", "Add"});
  CHECK(r->value(r->outputs()[0]).name == "out");
  require_same_outputs(g, *r);
  // The input graph is untouched.
  CHECK(g.nodes().size() == network(ctx).nodes().size());
}

TEST_CASE("run_passes options turn passes off", "[passes]") {
  Context ctx;
  Graph g = network(ctx);
  PassOptions options;
  options.canonicalize = false;
  options.fold_batch_norm = false;
  options.fold_constants = false;
  options.split_dynamic_quantize = false;
  options.eliminate_dead_code = false;
  std::vector<std::string> seen;
  options.after_pass = [&](std::string_view pass, const Graph&) { seen.emplace_back(pass); };
  auto r = run_passes(ctx, g, options);
  REQUIRE(r.ok());
  CHECK(seen == std::vector<std::string>{"infer_shapes"});
  CHECK(print_graph(*r) == print_graph(g));
}

TEST_CASE("run_passes is deterministic", "[passes]") {
  Context ctx;
  auto a = run_passes(ctx, network(ctx));
  auto b = run_passes(ctx, network(ctx));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(print_graph(*a) == print_graph(*b));
  REQUIRE(a->constants().size() == b->constants().size());
  for (size_t i = 0; i < a->constants().size(); ++i)
    CHECK(a->constants()[i].identical(b->constants()[i]));
}

TEST_CASE("run_passes reports a node whose inference fails", "[passes]") {
  Context a, b;
  auto def = [](bool broken) {
    return make_op<NoAttrs>(
        "Custom", FusionKind::opaque, 1, 1,
        [broken](InferContext& c) {
          if (broken) return c.error("refused");
          c.set_output(0, c.input(0));
          return absl::OkStatus();
        },
        [](const KernelArgs&) { return absl::OkStatus(); });
  };
  REQUIRE(a.ops().add(def(false)).ok());
  REQUIRE(b.ops().add(def(true)).ok());
  GraphBuilder gb(a, "g");
  gb.add_output(add(gb, "Custom", {gb.add_input("x", {DType::f32, {2}})}, nullptr, "custom"));
  auto r = run_passes(b, finish(gb));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("Custom 'custom': refused"));
}
