// Conformance of the Eigen backend's MatMul and Gemm kernels, alone and with every epilogue,
// against the reference executor.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"
#include "eigen_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

struct MatMulCase {
  Shape a, b;
  bool constant_b = true;
};

Graph matmul_graph(const Context& ctx, const MatMulCase& c,
                   const std::vector<EpilogueStep>& steps = {}) {
  GraphBuilder b(ctx, "matmul");
  ValueId a = b.add_input("a", {DType::f32, c.a});
  ValueId w =
      c.constant_b ? b.add_constant("w", random_f32(c.b, 77)) : b.add_input("w", {DType::f32, c.b});
  ValueId y = *b.add("MatMul", {a, w});
  const Shape out = b.value(y).type.shape;
  b.add_output(add_steps(b, y, out, steps));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

struct GemmCase {
  int64_t m, n, k;
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1.f, beta = 1.f;
  std::optional<Shape> c;  // bias shape, none when absent
  bool constant_b = true, constant_c = true;
};

Graph gemm_graph(const Context& ctx, const GemmCase& c,
                 const std::vector<EpilogueStep>& steps = {}) {
  GraphBuilder b(ctx, "gemm");
  const Shape as = c.trans_a ? Shape{c.k, c.m} : Shape{c.m, c.k};
  const Shape bs = c.trans_b ? Shape{c.n, c.k} : Shape{c.k, c.n};
  std::vector<ValueId> inputs = {b.add_input("a", {DType::f32, as})};
  inputs.push_back(c.constant_b ? b.add_constant("w", random_f32(bs, 78))
                                : b.add_input("w", {DType::f32, bs}));
  if (c.c)
    inputs.push_back(c.constant_c ? b.add_constant("c", random_f32(*c.c, 79))
                                  : b.add_input("c", {DType::f32, *c.c}));
  auto attrs = make_attrs<GemmAttrs>([&](GemmAttrs& a) {
    a.alpha = c.alpha;
    a.beta = c.beta;
    a.transA = c.trans_a;
    a.transB = c.trans_b;
  });
  ValueId y = *b.add("Gemm", inputs, attrs);
  b.add_output(add_steps(b, y, {c.m, c.n}, steps));
  auto g = b.finish();
  REQUIRE(g.ok());
  return std::move(*g);
}

}  // namespace

TEST_CASE("eigen MatMul: 2-D, batched, broadcast batch and vector operands", "[eigen]") {
  Context ctx;
  const std::vector<MatMulCase> cases = {
      {{1, 1}, {1, 1}},
      {{7, 13}, {13, 5}},
      {{7, 13}, {13, 5}, false},
      {{1, 300}, {300, 257}},            // one row: split by columns
      {{130, 70}, {70, 1}},              // one column
      {{200, 300}, {300, 190}},          // several row blocks
      {{3, 5, 7}, {7, 9}},               // batch folds into M
      {{3, 5, 7}, {3, 7, 9}, false},     // both batched
      {{2, 3, 5, 7}, {3, 7, 4}, false},  // broadcast batch
      {{5, 7}, {4, 7, 3}},               // A broadcast over B's batch
      {{1, 4, 6}, {3, 6, 2}, false},
      {{4, 1, 6, 8}, {1, 3, 8, 5}, false},
      {{7}, {7, 3}},             // vector times matrix
      {{2, 5, 7}, {7}},          // matrix times vector
      {{7}, {7}},                // dot product
      {{64, 96, 40}, {40, 48}},  // many rows once folded
      {{40, 33, 20}, {40, 20, 17}, false},
      {{3, 0, 4}, {4, 5}},  // empty
  };
  for (const MatMulCase& c : cases) {
    INFO("A " << shape_to_string(c.a) << " B " << shape_to_string(c.b));
    check_group(eigen_backend(), matmul_graph(ctx, c), eigen_check());
  }
}

TEST_CASE("eigen MatMul: every epilogue step", "[eigen]") {
  Context ctx;
  for (const MatMulCase& c :
       {MatMulCase{{5, 17}, {17, 11}}, MatMulCase{{2, 3, 9}, {9, 6}},
        MatMulCase{{2, 9, 33}, {2, 33, 70}, false}, MatMulCase{{150, 260}, {260, 130}}}) {
    for (const EpilogueStep& step : epilogue_steps()) {
      INFO("A " << shape_to_string(c.a) << " epilogue " << step.name);
      check_group(eigen_backend(), matmul_graph(ctx, c, {step}), eigen_check());
    }
  }
}

TEST_CASE("eigen MatMul: bias then every activation, and three-step epilogues", "[eigen]") {
  Context ctx;
  auto find = find_step;
  const MatMulCase c{{9, 31}, {31, 21}};
  for (const EpilogueStep& act : activation_steps()) {
    INFO("bias + " << act.name);
    check_group(eigen_backend(), matmul_graph(ctx, c, {find("Add(x,bias)"), act}), eigen_check());
    INFO("bias + residual + " << act.name);
    check_group(eigen_backend(),
                matmul_graph(ctx, c, {find("Add(bias,x)"), find("Add(x,residual)"), act}),
                eigen_check());
  }
  check_group(eigen_backend(),
              matmul_graph(ctx, {{3, 4, 9}, {9, 12}},
                           {find("Mul(x,scalar)"), find("Sub(bias,x)"), find("Tanh")}),
              eigen_check());
}

TEST_CASE("eigen Gemm: transposes, alpha, beta and every bias shape", "[eigen]") {
  Context ctx;
  std::vector<GemmCase> cases;
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1})
      for (bool const_b : {true, false}) {
        cases.push_back({13, 7, 11, ta, tb, 1.f, 1.f, Shape{7}, const_b});
        cases.push_back({13, 7, 11, ta, tb, 0.5f, 2.f, Shape{13, 7}, const_b});
      }
  for (bool const_c : {true, false})
    for (float beta : {0.f, 1.f, -1.5f})
      for (const Shape& cs : {Shape{}, Shape{1}, Shape{9}, Shape{1, 9}, Shape{6, 1}, Shape{6, 9}})
        cases.push_back({6, 9, 5, 0, 1, 1.25f, beta, cs, true, const_c});
  cases.push_back({1, 300, 200, 0, 1, 1.f, 1.f, Shape{300}});
  cases.push_back({120, 250, 180, 0, 1, 1.f, 1.f, Shape{250}});
  cases.push_back({4, 5, 6, 1, 1, 1.f, 1.f, std::nullopt});
  for (const GemmCase& c : cases) {
    INFO("Gemm M=" << c.m << " N=" << c.n << " K=" << c.k << " transA=" << c.trans_a
                   << " transB=" << c.trans_b << " alpha=" << c.alpha << " beta=" << c.beta
                   << " C=" << (c.c ? shape_to_string(*c.c) : "none") << " const B/C "
                   << c.constant_b << c.constant_c);
    check_group(eigen_backend(), gemm_graph(ctx, c), eigen_check());
  }
}

TEST_CASE("eigen Gemm: bias then every activation", "[eigen]") {
  Context ctx;
  for (const EpilogueStep& act : activation_steps()) {
    INFO("Gemm + " << act.name);
    check_group(eigen_backend(), gemm_graph(ctx, {10, 12, 14, 0, 1, 1.f, 1.f, Shape{12}}, {act}),
                eigen_check());
  }
}

TEST_CASE("eigen MatMul: a constant weight with transB is stored transposed", "[eigen]") {
  Context ctx;
  const Graph g = gemm_graph(ctx, {3, 4, 5, 0, 1, 1.f, 1.f, Shape{4}});
  auto kernel = make_eigen_backend()->build(g, {});
  REQUIRE(kernel.ok());
  const auto& constants = (*kernel)->record().constants;
  REQUIRE(constants.size() == 2);
  CHECK(constants[0].shape() == Shape{5, 4});
  const Tensor& w = *g.constant_of(g.nodes()[0].inputs[1]);
  CHECK(constants[0].data<float>()[1 * 4 + 2] == w.data<float>()[2 * 5 + 1]);
}

TEST_CASE("eigen MatMul: unsupported groups are not claimed", "[eigen]") {
  Context ctx;
  // An epilogue operand that would broadcast the result up: only the MatMul alone is offered.
  GraphBuilder b(ctx, "grow");
  ValueId a = b.add_input("a", {DType::f32, {3, 4}});
  ValueId w = b.add_constant("w", random_f32({4, 5}, 1));
  ValueId m = *b.add("MatMul", {a, w});
  ValueId big = b.add_input("big", {DType::f32, {2, 3, 5}});
  b.add_output(*b.add("Add", {m, big}));
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK_FALSE(claims_whole_graph(eigen_backend(), *g));
  GraphReachability reach(*g);
  auto candidates = make_eigen_backend()->candidates(*g, reach);
  bool matmul_alone = false;
  for (const Candidate& c : candidates) matmul_alone |= c.nodes.count() == 1 && c.nodes.contains(0);
  CHECK(matmul_alone);
  auto built = make_eigen_backend()->build(*g, {});
  REQUIRE_FALSE(built.ok());
  CHECK(built.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(built.status().message()),
             Catch::Contains("output shape 2x3x5 differs from the running value's 3x5"));
}
