// Constant folding: constant subgraphs, shape chains, size limits, growth, determinism.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "passes/fold_constants.h"
#include "passes/pass_test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

Graph fold(const Context& ctx, const Graph& g, const passes::FoldConstantsOptions& options = {}) {
  auto r = passes::fold_constants(ctx, g, options);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK(verify_graph(ctx, **r).ok());
  return std::move(**r);
}

}  // namespace

TEST_CASE("fold_constants evaluates nodes whose inputs are all constants", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId c1 = b.add_constant("c1", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  ValueId c2 = b.add_constant("c2", Tensor::from_f32({3}, std::vector<float>{4, 5, 6}));
  ValueId sum = add(b, "Add", {c1, c2}, nullptr, "sum");
  ValueId root = add(b, "Sqrt", {sum}, nullptr, "root");
  b.add_output(add(b, "Mul", {x, root}, nullptr, "out"));
  Graph g = finish(b);

  Graph out = fold(ctx, g);
  CHECK(op_names(out) == std::vector<std::string>{"Mul"});
  // Only the folded value is left; the constants it came from are no longer read.
  REQUIRE(out.constants().size() == 1);
  const Tensor& k = out.constants()[0];
  CHECK(k.get_as_double(0) == Approx(std::sqrt(5.0)));
  CHECK(k.get_as_double(2) == Approx(3.0));
  CHECK(out.value(out.node(0).inputs[1]).name == "root");
  require_same_outputs(g, out);
}

TEST_CASE("fold_constants collapses Shape -> Gather -> Unsqueeze -> Concat chains", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3, 4}});
  ValueId shape = add(b, "Shape", {x}, nullptr, "shape");
  ValueId dim = add(b, "Gather", {shape, b.add_constant("zero", Tensor::scalar_i64(0))},
                    nullptr, "dim");
  ValueId dim1 = add(b, "Unsqueeze", {dim},
                     make_attrs<UnsqueezeAttrs>([](auto& a) { a.axes = {0}; }), "dim1");
  ValueId minus_one = b.add_constant("minus_one", Tensor::from_i64({1}, std::vector<int64_t>{-1}));
  ValueId new_shape = add(b, "Concat", {dim1, minus_one},
                          make_attrs<ConcatAttrs>([](auto& a) { a.axis = 0; }), "new_shape");
  b.add_output(add(b, "Relu", {x}, nullptr, "relu"));
  b.add_output(new_shape);
  Graph g = finish(b);

  Graph out = fold(ctx, g);
  CHECK(op_names(out) == std::vector<std::string>{"Relu"});
  const Tensor* folded = out.constant_of(out.outputs()[1]);
  REQUIRE(folded);
  CHECK(folded->to_int64_vector() == std::vector<int64_t>{2, -1});
  CHECK(out.value(out.outputs()[1]).name == "new_shape");
  require_same_outputs(g, out);
}

TEST_CASE("fold_constants keeps nodes that would grow the model", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {256, 256}});
  // A scalar expanded to 256 KB, read by a non-constant consumer: the Expand stays.
  ValueId big = add(b, "Expand", {scalar(b, "two", 2.f)},
                    make_attrs<ExpandAttrs>([](auto& a) { a.shape = {256, 256}; }), "big");
  ValueId scaled = add(b, "Mul", {x, big}, nullptr, "scaled");
  // The same kind of value reduced to a small one before use: it folds to a small constant.
  ValueId big2 = add(b, "Expand", {scalar(b, "three", 3.f)},
                     make_attrs<ExpandAttrs>([](auto& a) { a.shape = {256, 256}; }), "big2");
  ValueId row = add(b, "ReduceSum", {big2},
                    make_attrs<ReduceAttrs>([](auto& a) { a.axes = {0}; }), "row");
  b.add_output(add(b, "Add", {scaled, row}, nullptr, "out"));
  Graph g = finish(b);

  Graph out = fold(ctx, g);
  CHECK(op_names(out) == std::vector<std::string>{"Expand", "Mul", "Add"});
  for (const Tensor& t : out.constants()) CHECK(t.bytes() <= 256 * sizeof(float));
  const Tensor* sums = out.constant_of(out.node(2).inputs[1]);
  REQUIRE(sums);
  CHECK(sums->shape() == Shape{1, 256});
  CHECK(sums->get_as_double(17) == 768.0);
  require_same_outputs(g, out);
}

TEST_CASE("fold_constants folds a small ConstantOfShape and keeps a big one", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {512, 64}});
  auto filled = [&](Shape shape, std::string name) {
    return add(b, "ConstantOfShape", {},
               make_attrs<ConstantOfShapeAttrs>([&](auto& a) {
                 a.shape = shape;
                 a.value = Tensor::from_f32({1}, std::vector<float>{0.5f});
               }),
               name);
  };
  ValueId small = filled({64}, "small");
  ValueId big = filled({512, 64}, "big");
  b.add_output(add(b, "Add", {add(b, "Mul", {x, big}), small}));
  Graph g = finish(b);

  Graph out = fold(ctx, g);
  CHECK(op_names(out) == std::vector<std::string>{"ConstantOfShape", "Mul", "Add"});
  CHECK(out.constants().size() == 1);
  require_same_outputs(g, out);
}

TEST_CASE("fold_constants reports no change when every evaluated value stays a node",
          "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {300, 300}});
  ValueId big = add(b, "Expand", {scalar(b, "two", 2.f)},
                    make_attrs<ExpandAttrs>([](auto& a) { a.shape = {300, 300}; }), "big");
  b.add_output(add(b, "Mul", {x, big}));
  auto r = passes::fold_constants(ctx, finish(b));
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("fold_constants does not evaluate nodes past the size limit", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {1024}});
  ValueId c = b.add_constant("c", Tensor(DType::f32, {1024}));
  b.add_output(add(b, "Add", {x, add(b, "Exp", {c}, nullptr, "e")}));
  Graph g = finish(b);

  passes::FoldConstantsOptions small;
  small.max_folded_bytes = 1024;
  auto r = passes::fold_constants(ctx, g, small);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());

  Graph out = fold(ctx, g);
  CHECK(op_names(out) == std::vector<std::string>{"Add"});
}

TEST_CASE("fold_constants leaves a graph without constant work unchanged", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {2, 3}});
  ValueId c = b.add_constant("c", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  b.add_output(add(b, "Relu", {add(b, "Add", {x, c})}));
  Graph g = finish(b);
  auto r = passes::fold_constants(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("fold_constants keeps a node whose kernel fails", "[passes]") {
  Context ctx;
  GraphBuilder b(ctx, "g");
  ValueId x = b.add_input("x", {DType::f32, {3}});
  ValueId data = b.add_constant("data", Tensor::from_f32({3}, std::vector<float>{1, 2, 3}));
  ValueId index = b.add_constant("index", Tensor::from_i64({1}, std::vector<int64_t>{7}));
  ValueId picked = add(b, "Gather", {data, index}, nullptr, "picked");
  b.add_output(add(b, "Add", {x, picked}));
  Graph g = finish(b);
  auto r = passes::fold_constants(ctx, g);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("fold_constants is deterministic", "[passes]") {
  Context ctx;
  auto build = [&] {
    GraphBuilder b(ctx, "g");
    ValueId x = b.add_input("x", {DType::f32, {4, 8}});
    ValueId n = add(b, "Shape", {x});
    ValueId f = add(b, "Cast", {n}, make_attrs<CastAttrs>([](auto& a) { a.to = "f32"; }));
    ValueId s = add(b, "ReduceSum", {f}, make_attrs<ReduceAttrs>([](auto& a) { a.keepdims = 0; }));
    b.add_output(add(b, "Div", {x, s}));
    return finish(b);
  };
  Graph a = fold(ctx, build()), c = fold(ctx, build());
  CHECK(print_graph(a) == print_graph(c));
  CHECK(op_names(a) == std::vector<std::string>{"Div"});
  CHECK(a.constants()[0].get_as_double(0) == 12.0);
}
