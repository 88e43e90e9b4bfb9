// The Eigen backend's candidates: which node sets each pattern offers (epilogue prefixes
// included) and which matches its checks turn down.
#include <catch2/catch.hpp>

#include "collage/backends/eigen.h"
#include "collage/ops.h"
#include "common/test_util.h"

using namespace collage;
using namespace collage::testing;

namespace {

// "origin{n0,n1}" per candidate, in the backend's order.
std::vector<std::string> describe(const Graph& g) {
  GraphReachability reach(g);
  std::vector<std::string> out;
  for (const Candidate& c : make_eigen_backend()->candidates(g, reach)) {
    std::string s = c.origin + "{";
    for (NodeId n : c.nodes.to_vector()) {
      if (s.back() != '{') s += ',';
      s += std::to_string(n);
    }
    out.push_back(s + "}");
  }
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace

TEST_CASE("eigen candidates: every pattern, with each epilogue prefix", "[eigen]") {
  Context ctx;
  GraphBuilder b(ctx, "net");
  ValueId x = b.add_input("x", {DType::f32, {1, 3, 8, 8}});
  // n0 Conv, n1 Relu, n2 ReduceMean, n3 Gemm, n4 Add, n5 Tanh, n6 Softmax, n7 MatMul,
  // n8 Div (matmul output first), n9 Sub (matmul output second)
  ValueId v = *b.add("Conv", {x, b.add_constant("w", random_f32({4, 3, 3, 3}, 1)),
                              b.add_constant("b", random_f32({4}, 2))});
  v = *b.add("Relu", {v});
  v = *b.add("ReduceMean", {v}, make_attrs<ReduceAttrs>([](ReduceAttrs& a) {
               a.axes = {2, 3};
               a.keepdims = 0;
             }));
  v = *b.add("Gemm", {v, b.add_constant("fc", random_f32({5, 4}, 3))},
             make_attrs<GemmAttrs>([](GemmAttrs& a) { a.transB = 1; }));
  v = *b.add("Add", {b.add_constant("fb", random_f32({5}, 4)), v});
  v = *b.add("Tanh", {v});
  v = *b.add("Softmax", {v});
  v = *b.add("MatMul", {v, b.add_constant("m", random_f32({5, 5}, 5))});
  v = *b.add("Div", {v, b.add_constant("d", random_f32({5}, 6, 1.f, 2.f))});
  b.add_output(*b.add("Sub", {b.add_constant("s", random_f32({1, 5}, 7)), v}));
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK(describe(*g) == Strings{
                            "eigen.matmul{7}",
                            "eigen.matmul{7,8}",
                            "eigen.matmul{7,8,9}",
                            "eigen.gemm{3}",
                            "eigen.gemm{3,4}",
                            "eigen.gemm{3,4,5}",
                            "eigen.conv{0}",
                            "eigen.conv{0,1}",
                            "eigen.elementwise{1}",
                            "eigen.elementwise{4}",
                            "eigen.elementwise{4,5}",
                            "eigen.elementwise{8}",
                            "eigen.elementwise{8,9}",
                            // from the shorter patterns: a single node ending a longer chain
                            "eigen.elementwise{5}",
                            "eigen.elementwise{9}",
                            "eigen.reduce{2}",
                            "eigen.softmax{6}",
                        });
}

TEST_CASE("eigen candidates: checks turn down what the kernels cannot run", "[eigen]") {
  Context ctx;
  GraphBuilder b(ctx, "rejects");
  ValueId x = b.add_input("x", {DType::f32, {4, 6}});
  ValueId i = b.add_input("i", {DType::i64, {4, 6}});
  // n0 integer Add: not f32. n1 Mul(x, x) then n2 Add reading n1 twice: the chain step is
  // refused, the Mul alone is offered. n3 ReduceSum over no axes with noop: a copy.
  b.add_output(*b.add("Add", {i, i}));
  ValueId sq = *b.add("Mul", {x, x});
  b.add_output(*b.add("Add", {sq, sq}));
  b.add_output(*b.add("ReduceSum", {x},
                      make_attrs<ReduceAttrs>([](ReduceAttrs& a) { a.noop_with_empty_axes = 1; })));
  auto g = b.finish();
  REQUIRE(g.ok());
  CHECK(describe(*g) == Strings{"eigen.elementwise{1}", "eigen.elementwise{2}"});
}

TEST_CASE("eigen candidates: a chain may not read a value it computed earlier", "[eigen]") {
  Context ctx;
  GraphBuilder b(ctx, "skip");
  ValueId x = b.add_input("x", {DType::f32, {4, 6}});
  // n0 m = MatMul, n1 r = Relu(m), n2 Add(r, m): {n0, n1, n2} would need m mid-chain.
  ValueId m = *b.add("MatMul", {x, b.add_constant("w", random_f32({6, 6}, 1))});
  b.add_output(*b.add("Add", {*b.add("Relu", {m}), m}));
  auto g = b.finish();
  REQUIRE(g.ok());
  // ({n0, n1} is no candidate either: n2 reads m from outside it.)
  CHECK(describe(*g) == Strings{"eigen.matmul{0}", "eigen.elementwise{1}", "eigen.elementwise{1,2}",
                                "eigen.elementwise{2}"});
  auto built = make_eigen_backend()->build(*g, {});
  REQUIRE_FALSE(built.ok());
  // The group is refused, naming the value the chain cannot read.
  CHECK_THAT(std::string(built.status().message()), Catch::Contains("'MatMul_0'"));
}
