// Fused groups: chains of TE computes lowered as one kernel with the default schedule (inlined
// elementwise chains, reductions computed at the output's parallel loop, several outputs), and
// the errors for operators and dtypes the library does not support.
#include <catch2/catch.hpp>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"
#include "common/backend_check.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

}  // namespace

TEST_CASE("te_ops fused: elementwise chain with broadcast constants", "[te_ops]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {3, 41, 37}});
  ValueId bias = b.add_constant("bias", random_f32({37}, 5));
  ValueId scale = b.add_constant("scale", random_f32({41, 1}, 6));
  ValueId v = add(b, "Add", {x, bias});
  v = add(b, "Relu", {v});
  v = add(b, "Mul", {v, scale});
  v = add(b, "Sigmoid", {v});
  b.add_output(v);
  check_group(native_backend(), finish(b));
}

TEST_CASE("te_ops fused: reductions inside a chain", "[te_ops]") {
  Context ctx;
  SECTION("softmax then affine") {
    GraphBuilder b(ctx);
    ValueId x = b.add_input("x", {DType::f32, {4, 9, 67}});
    ValueId v = add(b, "Softmax", {x});
    v = add(b, "Mul", {v, b.add_constant("s", random_f32({67}, 2))});
    v = add(b, "Add", {v, x});
    b.add_output(v);
    check_group(native_backend(), finish(b), {.tolerance = 1e-5, .elementwise = false});
  }
  SECTION("decomposed layer norm (BERT's ReduceMean, Sub, Pow, Sqrt, Div)") {
    GraphBuilder b(ctx);
    ValueId x = b.add_input("x", {DType::f32, {2, 7, 48}});
    auto mean_attrs = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {-1}; });
    ValueId mean = add(b, "ReduceMean", {x}, mean_attrs);
    ValueId d = add(b, "Sub", {x, mean});
    ValueId sq = add(b, "Pow", {d, b.add_constant("two", Tensor::scalar_f32(2.f))});
    ValueId var = add(b, "ReduceMean", {sq}, mean_attrs);
    ValueId den = add(b, "Sqrt", {add(b, "Add", {var, b.add_constant("eps", Tensor::scalar_f32(1e-5f))})});
    ValueId y = add(b, "Div", {d, den});
    y = add(b, "Erf", {y});
    b.add_output(y);
    check_group(native_backend(), finish(b), {.tolerance = 1e-5, .elementwise = false});
  }
  SECTION("layer norm then gelu") {
    GraphBuilder b(ctx);
    ValueId x = b.add_input("x", {DType::f32, {5, 131}});
    ValueId v = add(b, "LayerNormalization",
                    {x, b.add_constant("g", random_f32({131}, 3)), b.add_constant("b", random_f32({131}, 4))});
    v = add(b, "Gelu", {v});
    b.add_output(v);
    check_group(native_backend(), finish(b), {.tolerance = 1e-5, .elementwise = false});
  }
  SECTION("pool then relu") {
    GraphBuilder b(ctx);
    ValueId x = b.add_input("x", {DType::f32, {1, 8, 33, 33}});
    ValueId v = add(b, "MaxPool", {x}, make_attrs<MaxPoolAttrs>([](auto& a) {
                      a.kernel_shape = {3, 3};
                      a.strides = {2, 2};
                    }));
    v = add(b, "Relu", {add(b, "Add", {v, b.add_constant("c", random_f32({8, 1, 1}, 8))})});
    b.add_output(v);
    check_group(native_backend(), finish(b));
  }
}

TEST_CASE("te_ops fused: layout chains and several outputs", "[te_ops]") {
  Context ctx;
  GraphBuilder b(ctx);
  ValueId x = b.add_input("x", {DType::f32, {2, 3, 5, 7}});
  ValueId t = add(b, "Transpose", {x}, make_attrs<TransposeAttrs>([](auto& a) { a.perm = {0, 2, 3, 1}; }));
  ValueId r = add(b, "Reshape", {t}, make_attrs<ReshapeAttrs>([](auto& a) { a.shape = {2, 35, 3}; }));
  ValueId e = add(b, "Exp", {r});
  ValueId c = add(b, "Concat", {e, r}, make_attrs<ConcatAttrs>([](auto& a) { a.axis = -1; }));
  b.add_output(c);
  b.add_output(e);  // an intermediate that is also an output
  b.add_output(x);  // a graph input passed through
  check_group(native_backend(), finish(b));
}

TEST_CASE("te_ops: unsupported operators and dtypes are InvalidArgument naming the node",
          "[te_ops]") {
  Context ctx;
  std::vector<Tensor> none;
  Graph resize = single_op_graph(ctx, "Resize", {{DType::f32, {1, 1, 4, 4}}},
                                 make_attrs<ResizeAttrs>([](auto& a) { a.mode = "cubic"; a.scales = {1, 1, 2, 2}; }));
  auto k = native_backend().build(resize, {});
  REQUIRE(!k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(k.status().message()), Catch::Contains("Resize 'op'"));

  Graph pow = single_op_graph(ctx, "Pow", {{DType::i32, {3}}, {DType::i32, {3}}});
  k = native_backend().build(pow, {});
  REQUIRE(!k.ok());
  CHECK(k.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(k.status().message()),
             Catch::Contains("Pow 'op': base i32 to an exponent of i32 is not supported"));
}

TEST_CASE("te_ops: empty tensors and f16 data", "[te_ops]") {
  Context ctx;
  check_group(native_backend(),
              single_op_graph(ctx, "Add", {{DType::f32, {0, 5}}, {DType::f32, {5}}}));
  check_group(native_backend(),
              single_op_graph(ctx, "Concat", {{DType::f32, {2, 0}}, {DType::f32, {2, 3}}},
                              make_attrs<ConcatAttrs>([](auto& a) { a.axis = 1; })));
  check_group(native_backend(),
              single_op_graph(ctx, "ReduceSum", {{DType::f32, {3, 0}}},
                              make_attrs<ReduceAttrs>([](auto& a) { a.axes = {1}; })));
  check_group(native_backend(),
              single_op_graph(ctx, "Mul", {{DType::f16, {3, 37}}, {DType::f16, {37}}}),
              {.tolerance = 1e-3});
  check_group(native_backend(), single_op_graph(ctx, "Exp", {{DType::bf16, {3, 37}}}),
              {.tolerance = 1e-2});
}

// ONNX rounds every node's 16-bit output to its type (numpy, which made ONNX's expected values,
// does too); a fused chain computes each step in f32 and must round where the graph rounds, not
// keep f32 between the nodes. The arithmetic steps (each one correctly rounded in f32, then to the
// type) must then equal the reference bit for bit; with f32 kept between the nodes, 37% of these
// f16 elements would differ (numpy, inputs drawn as here).
TEST_CASE("te_ops fused: a 16-bit elementwise chain rounds at every node", "[te_ops]") {
  for (DType t : {DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    Context ctx;
    GraphBuilder b(ctx);
    ValueId x = b.add_input("x", {t, {3, 41, 37}});
    ValueId y = b.add_input("y", {t, {37}});
    ValueId v = add(b, "Mul", {x, b.add_constant("s", random_f32({41, 1}, 6, 0.5f, 3.f).cast(t))});
    v = add(b, "Add", {v, y});
    v = add(b, "Div", {v, b.add_constant("d", random_f32({37}, 7, 0.7f, 1.3f).cast(t))});
    v = add(b, "Sub", {v, x});
    v = add(b, "Abs", {v});
    v = add(b, "Sqrt", {v});
    b.add_output(v);
    check_group(native_backend(), finish(b), {.tolerance = 0, .claim = true});
  }
}

// Softmax on f16 rounds each step as ONNX defines it (x - max, its exp, the sum, the quotient), as
// the reference computes it; bf16, whose sum ONNX rounds at every add, is refused.
TEST_CASE("te_ops: f16 Softmax rounds each step; bf16 is refused", "[te_ops]") {
  Context ctx;
  auto attrs = make_attrs<SoftmaxAttrs>([](auto& a) { a.axis = -1; });
  check_group(native_backend(), single_op_graph(ctx, "Softmax", {{DType::f16, {4, 9, 37}}}, attrs),
              {.tolerance = 0, .lo = -4.f, .hi = 4.f});
  auto k = native_backend().build(
      single_op_graph(ctx, "Softmax", {{DType::bf16, {4, 9}}}, attrs), {});
  REQUIRE_FALSE(k.ok());
  CHECK_THAT(std::string(k.status().message()), Catch::Contains("bf16 softmax"));
}
