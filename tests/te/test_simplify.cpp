// The arithmetic simplifier: folding, linear forms, bounds-driven decisions, floordiv/floormod.
#include <catch2/catch.hpp>

#include "collage/loop_ir.h"

using namespace collage;
namespace te = collage::te;

namespace {
std::string simp(const te::Expr& e, const te::VarRanges& r = {}) {
  return te::to_string(te::simplify(e, r));
}
}  // namespace

TEST_CASE("constants fold and linear forms combine terms", "[te][simplify]") {
  te::Var i("i"), j("j");
  CHECK(simp(te::Expr(2) + 3 * 4) == "14");
  CHECK(simp(i * 4 + j + i * 2 - j) == "i*6");
  CHECK(simp((i + 1) * 8 - 8) == "i*8");
  CHECK(simp(i - i) == "0");
  CHECK(simp(j - i * 2 + 3) == "j - i*2 + 3");
  te::Var x("x", DType::f32);
  CHECK(simp(x * 1.0f + 0.0f) == "x");
  CHECK(simp(te::Expr(1.5f) * 2.0f) == "3.0f");
  CHECK(simp(te::cast(DType::i32, te::Expr(3.7f))) == "3i32");
}

TEST_CASE("comparisons are decided from loop ranges", "[te][simplify]") {
  te::Var io("io"), ii("ii");
  te::VarRanges r{{io.get(), {0, 8}}, {ii.get(), {0, 8}}};
  CHECK(simp(io * 8 + ii < 64, r) == "true");
  CHECK(simp(io * 8 + ii < 60, r) == "io*8 + ii < 60");
  CHECK(simp(io * 8 + ii >= 0, r) == "true");
  CHECK(simp(io * 8 + ii + 3 < 10) == "io*8 + ii < 7");
  CHECK(simp(0 - io < -2) == "io > 2");
  CHECK(simp(te::minimum(ii, 9), r) == "ii");
  CHECK(simp(te::maximum(ii - 8, 0), r) == "0");
  CHECK(simp(!(io < 3)) == "io >= 3");
  CHECK(simp(te::select(ii < 8, io, ii), r) == "io");
  CHECK(simp((io < 3) && (ii < 9), r) == "io < 3");
}

TEST_CASE("floordiv and floormod of split indices", "[te][simplify]") {
  te::Var o("o"), i("i"), x("x");
  te::VarRanges r{{o.get(), {0, 4}}, {i.get(), {0, 16}}};
  CHECK(simp(te::floordiv(o * 16 + i, 16), r) == "o");
  CHECK(simp(te::floormod(o * 16 + i, 16), r) == "i");
  CHECK(simp(te::floordiv(o * 32 + i + 16, 32), r) == "o");
  CHECK(simp(te::floormod(o * 32 + i + 16, 32), r) == "i + 16");
  CHECK(simp(te::floordiv(x * 8 + 3, 4)) == "x*2");
  CHECK(simp(te::floordiv(x * 8 + i, 4), r) == "x*2 + floordiv(i, 4)");
  CHECK(simp(te::floordiv(te::floordiv(x, 4), 8)) == "floordiv(x, 32)");
  CHECK(simp(te::floormod(x * 6 + 4, 3)) == "1");
  CHECK(simp(te::floordiv(x, 1)) == "x");
  CHECK(simp(te::floordiv(te::Expr(-7), 2)) == "-4");
  CHECK(simp(te::floormod(te::Expr(-7), 2)) == "1");
  CHECK(simp(te::div(te::Expr(-7), 2)) == "-3");
  // Truncating division of a non-negative value becomes floordiv.
  CHECK(simp(te::div(o * 16 + i, 16), r) == "o");
}

TEST_CASE("indices of fused loops flatten back", "[te][simplify]") {
  te::Var x("x");
  // Two loops fused: floordiv(x, 7)*7 + floormod(x, 7) = x.
  CHECK(simp(te::floordiv(x, 7) * 7 + te::floormod(x, 7)) == "x");
  CHECK(simp(te::floordiv(x, 7) * 14 + te::floormod(x, 7) * 2 + 1) == "x*2 + 1");
  // Three: the middle loop's index is floormod(floordiv(x, 7), 5).
  te::Expr a = te::floordiv(x, 35), b = te::floormod(te::floordiv(x, 7), 5), c = te::floormod(x, 7);
  CHECK(simp(b * 7 + c) == "floormod(x, 35)");
  CHECK(simp(a * 35 + b * 7 + c) == "x");
  CHECK(simp((a * 5 + b) * 7 + c) == "x");
  // Not the same x, or not the same divisor: nothing to fold.
  te::Var y("y");
  CHECK(simp(te::floormod(te::floordiv(y, 7), 5) * 7 + c) ==
        "floormod(floordiv(y, 7), 5)*7 + floormod(x, 7)");
  CHECK(simp(te::floormod(te::floordiv(x, 6), 5) * 7 + c) ==
        "floormod(floordiv(x, 6), 5)*7 + floormod(x, 7)");
}

TEST_CASE("statement simplification drops decided guards and trivial loops", "[te][simplify]") {
  te::Buffer B("B", DType::f32, {8});
  te::Var i("i"), j("j");
  te::Stmt body = te::make_if(i * 4 + j < 8, te::make_store(B, {i * 4 + j}, te::Expr(1.0f)));
  te::Stmt s = te::make_for(i, 0, 2, te::ForKind::serial,
                            te::make_for(j, 0, 4, te::ForKind::vectorized, body));
  CHECK(te::to_string(te::simplify(s)) ==
        "for (i, 0, 2) {\n"
        "  vectorized for (j, 0, 4) {\n"
        "    B[i*4 + j] = 1.0f\n"
        "  }\n"
        "}\n");
  te::Stmt one = te::make_for(i, 3, 1, te::ForKind::serial, te::make_store(B, {i}, te::Expr(2.0f)));
  CHECK(te::to_string(te::simplify(one)) == "B[3] = 2.0f\n");
  te::Stmt none =
      te::make_for(i, 0, 0, te::ForKind::serial, te::make_store(B, {i}, te::Expr(2.0f)));
  CHECK_FALSE(te::simplify(none).defined());
}
