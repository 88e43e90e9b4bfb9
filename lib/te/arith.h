// Integer arithmetic analysis shared by the simplifier, bounds inference and lowering: interval
// bounds of integer expressions and canonical linear forms (sum of coefficient * term + constant).
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "collage/loop_ir.h"

namespace collage::te::arith {

constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

// A closed integer interval [lo, hi]; kNegInf / kPosInf stand for unbounded ends.
struct Interval {
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool bounded() const { return lo != kNegInf && hi != kPosInf; }
  bool is_point() const { return bounded() && lo == hi; }
};

// The smallest and largest value of an integer or bool type (u64's largest as its bit
// pattern, -1); the int64 range for i64 and every other type.
std::pair<int64_t, int64_t> int_limits(DType t);

// Saturating interval arithmetic.
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_mul(int64_t a, int64_t b);
Interval add(Interval a, Interval b);
Interval mul(Interval a, Interval b);
Interval scale(Interval a, int64_t c);
Interval unite(Interval a, Interval b);
// floor division of two integers (b != 0), and the matching non-negative-for-positive-b modulo.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// Bounds of an integer or bool expression given variable ranges (unknown variables are bounded
// only by their type).
Interval bound(const Expr& e, const VarRanges& ranges);

struct LinearTerm {
  Expr atom;  // a variable or a non-linear subexpression
  int64_t coeff;
};

// sum(coeff * atom) + constant, terms in order of first appearance, no zero coefficients, no two
// structurally equal atoms.
struct LinearForm {
  DType dtype = DType::i64;
  std::vector<LinearTerm> terms;
  int64_t constant = 0;
  void add(const Expr& atom, int64_t coeff);
  void add(const LinearForm& other, int64_t scale);
  bool is_const() const { return terms.empty(); }
  // Rewrites q*m*floordiv(x, q) + m*floormod(x, q) into m*x, and q*m*floormod(floordiv(x, q), r)
  // + m*floormod(x, q) into m*floormod(x, q*r) (fused-loop indices flattened back).
  void fold_div_mod();
};

// The linear form of an integer expression (Add/Sub/Mul-by-constant are distributed; anything
// else is an atom).
LinearForm linearize(const Expr& e);
// Rebuilds an expression: positive terms first, then negative ones, then the constant.
Expr rebuild(const LinearForm& f);
Interval bound(const LinearForm& f, const VarRanges& ranges);

}  // namespace collage::te::arith
