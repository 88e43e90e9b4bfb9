// Tensor-expression nodes: construction, type promotion, printing and structural equality.
#include <catch2/catch.hpp>

#include "collage/loop_ir.h"
#include "collage/te.h"

using namespace collage;
namespace te = collage::te;

TEST_CASE("expressions print with minimal parentheses", "[te][expr]") {
  te::Var i("i"), j("j");
  CHECK(te::to_string(i * 4 + j) == "i*4 + j");
  CHECK(te::to_string((i + 1) * (j - 2)) == "(i + 1)*(j - 2)");
  CHECK(te::to_string(i - (j - 1)) == "i - (j - 1)");
  CHECK(te::to_string(te::floordiv(i, 8) + te::floormod(j, 3)) ==
        "floordiv(i, 8) + floormod(j, 3)");
  CHECK(te::to_string(te::minimum(i, j) < 3 && !(j == 2)) == "min(i, j) < 3 && !(j == 2)");
  CHECK(te::to_string(te::Expr()) == "<undef>");
}

TEST_CASE("binary operators promote mismatched types", "[te][expr]") {
  te::Var i("i");  // i64
  te::Var x("x", DType::f32);
  te::Var h("h", DType::f16);
  CHECK((x * 2).dtype() == DType::f32);  // the int literal takes the float type
  CHECK(te::to_string(x * 2) == "x*2.0f");
  CHECK((i + 0.5f).dtype() == DType::f32);  // int expression with a float literal: f32
  CHECK((i < 3).dtype() == DType::boolean);
  CHECK((h + h).dtype() == DType::f32);  // f16 is a storage type
  CHECK(te::to_string(h * x) == "f32(h)*x");
  te::Var n("n", DType::i32);
  CHECK((n + i).dtype() == DType::i64);
  CHECK(te::to_string(n + 1) == "n + 1i32");
  CHECK(te::exp(i).dtype() == DType::f32);
  CHECK(te::select(i < 2, x, 1).dtype() == DType::f32);
  CHECK(te::to_string(-x) == "0.0f - x");
}

TEST_CASE("reductions default to the combiner's identity", "[te][expr]") {
  te::Var x("x", DType::f32);
  te::IterVar k = te::reduce_axis({0, 16}, "k");
  CHECK(te::to_string(te::sum(x * k, {k})) == "sum(x*f32(k), axis=[k: 0..16])");
  CHECK(te::to_string(te::max(x, {k})) == "max(x, axis=[k: 0..16])");
  CHECK(te::to_string(te::sum(x, {k}, 1.5f)) == "sum(x, axis=[k: 0..16], init=1.5f)");
  te::Expr m = te::min(x, {k});
  auto* r = m.as<te::ReduceNode>();
  REQUIRE(r != nullptr);
  CHECK(te::to_string(r->init) == "inf");
}

TEST_CASE("structural equality compares trees, variables by identity", "[te][expr]") {
  te::Var i("i"), i2("i");
  CHECK(te::structural_equal(i * 4 + 1, i * 4 + 1));
  CHECK_FALSE(te::structural_equal(i * 4 + 1, i2 * 4 + 1));
  CHECK_FALSE(te::structural_equal(i * 4, i * 5));
  CHECK(te::structural_equal(te::exp(i), te::exp(i)));
}

TEST_CASE("compute records the index function and its reduction axes", "[te][expr]") {
  te::Tensor A = te::placeholder({4, 8}, DType::f32, "A");
  te::IterVar k = te::reduce_axis({0, 8}, "k");
  te::Tensor S = te::compute(
      {4}, [&](te::Var i) { return te::sum(A(i, k), {k}); }, "S");
  CHECK(S.ndim() == 1);
  CHECK(S.dtype() == DType::f32);
  REQUIRE(S.reduce_axis(0).defined());
  CHECK(S.reduce_axis(0).same_as(k));
  CHECK(te::to_string(S->body) == "sum(A[i0, k], axis=[k: 0..8])");
  auto ins = te::input_tensors(S);
  REQUIRE(ins.size() == 1);
  CHECK(ins[0].same_as(A));
  te::Tensor V = te::compute(
      {2, 3}, [&](const std::vector<te::Var>& v) { return A(v[0], v[1] + 1); }, "V");
  CHECK(te::to_string(V->body) == "A[i0, i1 + 1]");
}
