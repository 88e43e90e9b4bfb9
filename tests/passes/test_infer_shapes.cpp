// Shape inference pass: unchanged graphs, graphs from another context, inference errors.
#include <catch2/catch.hpp>

#include "passes/infer_shapes.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// An operator "Twice" whose output shape doubles the first axis, or (when `broken`) whose
// inference always fails; it stands for an operator whose definition differs between contexts.
void register_twice(Context& ctx, int64_t factor, bool broken = false) {
  OpDef d = make_op<NoAttrs>(
      "Twice", FusionKind::opaque, 1, 1,
      [factor, broken](InferContext& c) {
        if (broken) return c.error("cannot infer");
        TensorType t = c.input(0);
        t.shape[0] *= factor;
        c.set_output(0, t);
        return absl::OkStatus();
      },
      [](const KernelArgs&) { return absl::OkStatus(); });
  REQUIRE(ctx.ops().add(std::move(d)).ok());
}

Graph twice_graph(const Context& ctx) {
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId t = add(b, "Twice", {x}, nullptr, "twice");
  b.add_output(add(b, "Relu", {t}, nullptr, "relu"));
  return finish(b);
}

}  // namespace

TEST_CASE("infer_shapes leaves a graph built in the same context unchanged", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId c = b.add_constant("c", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  b.add_output(add(b, "Relu", {add(b, "Add", {x, c})}));
  Graph g = finish(b);
  auto r = passes::infer_shapes(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("infer_shapes re-infers a graph built in another context", "[passes]") {
  Context a, b;
  register_twice(a, 1);
  register_twice(b, 2);
  Graph g = twice_graph(a);
  CHECK_FALSE(verify_graph(b, g).ok());  // its operators belong to context a

  auto r = passes::infer_shapes(b, g);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  const Graph& out = **r;
  CHECK(verify_graph(b, out).ok());
  CHECK(out.value(out.outputs()[0]).type == TensorType{DType::f32, {4, 3}});
  CHECK(out.value(out.outputs()[0]).name == g.value(g.outputs()[0]).name);
  CHECK(out.node(0).name == "twice");
}

TEST_CASE("infer_shapes reports the node whose inference fails", "[passes]") {
  Context a, b;
  register_twice(a, 1);
  register_twice(b, 1, /*broken=*/true);
  auto r = passes::infer_shapes(b, twice_graph(a));
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(r.status().message()), Catch::Contains("Twice 'twice'"));
}
