// The expression simplifier: constant folding, canonical linear forms of integer arithmetic,
// floordiv/floormod of split indices, and min/max/comparisons decided by interval bounds.
#include <cmath>
#include <optional>

#include "arith.h"
#include "collage/loop_ir.h"

namespace collage::te {

namespace {

using arith::Interval;
using arith::LinearForm;

std::optional<int64_t> as_int(const Expr& e) {
  if (const auto* i = e.as<IntImmNode>()) return i->value;
  return std::nullopt;
}

std::optional<double> as_float(const Expr& e) {
  if (const auto* f = e.as<FloatImmNode>()) return f->value;
  return std::nullopt;
}

bool is_const_value(const Expr& e, double v) {
  if (auto i = as_int(e)) return static_cast<double>(*i) == v;
  if (auto f = as_float(e)) return *f == v;
  return false;
}

// Returns `candidate` unless it is structurally the same as `original` (then the original node,
// so that unchanged trees keep their identity).
Expr keep_if_same(const Expr& original, Expr candidate) {
  return structural_equal(original, candidate) ? original : candidate;
}

ExprKind flip(ExprKind k) {
  switch (k) {
    case ExprKind::LT:
      return ExprKind::GT;
    case ExprKind::LE:
      return ExprKind::GE;
    case ExprKind::GT:
      return ExprKind::LT;
    case ExprKind::GE:
      return ExprKind::LE;
    default:
      return k;
  }
}

// Whether a - b of two values of type t is the true difference, so that comparisons and min/max
// may reason on it: i32 and i64 (indices and sizes), and bool. Narrower and unsigned integers
// wrap (200 - 50 as i8, 50 - 200 as u8), so their comparisons stay as written.
bool exact_difference(DType t) {
  return t == DType::i64 || t == DType::i32 || t == DType::boolean;
}

ExprKind negate(ExprKind k) {
  switch (k) {
    case ExprKind::LT:
      return ExprKind::GE;
    case ExprKind::LE:
      return ExprKind::GT;
    case ExprKind::GT:
      return ExprKind::LE;
    case ExprKind::GE:
      return ExprKind::LT;
    case ExprKind::EQ:
      return ExprKind::NE;
    case ExprKind::NE:
      return ExprKind::EQ;
    default:
      return k;
  }
}

std::optional<bool> decide(ExprKind k, Interval d) {
  switch (k) {
    case ExprKind::LT:
      if (d.hi != arith::kPosInf && d.hi < 0) return true;
      if (d.lo != arith::kNegInf && d.lo >= 0) return false;
      break;
    case ExprKind::LE:
      if (d.hi != arith::kPosInf && d.hi <= 0) return true;
      if (d.lo != arith::kNegInf && d.lo > 0) return false;
      break;
    case ExprKind::GT: {
      auto r = decide(ExprKind::LE, d);
      if (r) return !*r;
      break;
    }
    case ExprKind::GE: {
      auto r = decide(ExprKind::LT, d);
      if (r) return !*r;
      break;
    }
    case ExprKind::EQ:
      if (d.is_point() && d.lo == 0) return true;
      if ((d.lo != arith::kNegInf && d.lo > 0) || (d.hi != arith::kPosInf && d.hi < 0))
        return false;
      break;
    case ExprKind::NE: {
      auto r = decide(ExprKind::EQ, d);
      if (r) return !*r;
      break;
    }
    default:
      break;
  }
  return std::nullopt;
}

double fold_float(ExprKind k, double a, double b) {
  switch (k) {
    case ExprKind::Add:
      return a + b;
    case ExprKind::Sub:
      return a - b;
    case ExprKind::Mul:
      return a * b;
    case ExprKind::Div:
      return a / b;
    case ExprKind::Mod:
      return std::fmod(a, b);
    case ExprKind::FloorDiv:
      return std::floor(a / b);
    case ExprKind::FloorMod:
      return a - std::floor(a / b) * b;
    case ExprKind::Min:
      return std::isnan(a) || std::isnan(b) ? NAN : std::fmin(a, b);
    case ExprKind::Max:
      return std::isnan(a) || std::isnan(b) ? NAN : std::fmax(a, b);
    default:
      return 0;
  }
}

bool fold_compare(ExprKind k, double a, double b) {
  switch (k) {
    case ExprKind::EQ:
      return a == b;
    case ExprKind::NE:
      return a != b;
    case ExprKind::LT:
      return a < b;
    case ExprKind::LE:
      return a <= b;
    case ExprKind::GT:
      return a > b;
    case ExprKind::GE:
      return a >= b;
    default:
      return false;
  }
}

class Simplifier : public ExprMutator {
 public:
  explicit Simplifier(const VarRanges& ranges) : ranges_(ranges) {}

 protected:
  Expr mutate_Var(const VarNode& n, const Expr& e) override {
    auto it = ranges_.find(&n);
    if (it != ranges_.end() && it->second.extent == 1) return make_int(n.dtype, it->second.min);
    return e;
  }

#define COLLAGE_TE_SIMPLIFY_BINARY(kind, node)                           \
  Expr mutate_##kind(const BinaryNode& n, const Expr& e) override {      \
    return simplify_binary(ExprKind::kind, mutate(n.a), mutate(n.b), e); \
  }
  COLLAGE_TE_BINARY_KINDS(COLLAGE_TE_SIMPLIFY_BINARY, BinaryNode)
#undef COLLAGE_TE_SIMPLIFY_BINARY

  Expr mutate_Not(const NotNode& n, const Expr& e) override {
    Expr a = mutate(n.a);
    if (auto v = as_int(a)) return Expr(*v == 0);
    if (const auto* inner = a.as<NotNode>()) return inner->a;
    if (const auto* c = a.as<BinaryNode>();
        c && is_comparison(a.kind()) && !is_float(c->a.dtype())) {
      return simplify_binary(negate(a.kind()), c->a, c->b, Expr());
    }
    return a.same_as(n.a) ? e : logical_not(a);
  }

  Expr mutate_Select(const SelectNode& n, const Expr& e) override {
    Expr c = mutate(n.cond), t = mutate(n.true_value), f = mutate(n.false_value);
    if (auto v = as_int(c)) return *v ? t : f;
    if (structural_equal(t, f)) return t;
    if (c.same_as(n.cond) && t.same_as(n.true_value) && f.same_as(n.false_value)) return e;
    return select(c, t, f);
  }

  Expr mutate_Cast(const CastNode& n, const Expr& e) override {
    Expr v = mutate(n.value);
    const DType t = n.dtype;
    const bool foldable = t == DType::f32 || !is_float(t);
    if (foldable) {
      if (auto i = as_int(v)) return make_const(t, static_cast<double>(*i));
      if (auto f = as_float(v)) {
        if (t == DType::boolean) return Expr(*f != 0);
        if (is_float(t)) return make_float(t, *f);
        if (std::isfinite(*f) && !is_unsigned(t)) return make_int(t, static_cast<int64_t>(*f));
      }
    }
    if (v.dtype() == t) return v;
    return v.same_as(n.value) ? e : cast(t, v);
  }

 private:
  Interval bound_of(const LinearForm& f) {
    return arith::bound(f, ranges_);
  }

  Expr simplify_binary(ExprKind k, Expr a, Expr b, const Expr& original) {
    auto rebuild_default = [&]() {
      if (const auto* o = original.as<BinaryNode>(); o && a.same_as(o->a) && b.same_as(o->b)) {
        return original;
      }
      return make_binary(k, a, b);
    };
    if (!a.defined() || !b.defined()) return rebuild_default();
    if (k == ExprKind::And || k == ExprKind::Or) return simplify_logical(k, a, b, rebuild_default);
    // Unsigned values wrap and compare without sign, which the linear forms below (exact signed
    // integers) do not model: they are data, not indices, so they are left as written.
    if (is_unsigned(a.dtype()) || is_unsigned(b.dtype())) return rebuild_default();
    const bool fl = is_float(a.dtype()) || is_float(b.dtype());
    if (fl) {
      auto x = as_float(a), y = as_float(b);
      if (x && y) {
        if (is_comparison(k)) return Expr(fold_compare(k, *x, *y));
        return make_float(a.dtype(), fold_float(k, *x, *y));
      }
      if ((k == ExprKind::Add && is_const_value(b, 0)) ||
          (k == ExprKind::Sub && is_const_value(b, 0)) ||
          ((k == ExprKind::Mul || k == ExprKind::Div) && is_const_value(b, 1))) {
        return a;
      }
      if ((k == ExprKind::Add && is_const_value(a, 0)) ||
          (k == ExprKind::Mul && is_const_value(a, 1))) {
        return b;
      }
      return rebuild_default();
    }
    switch (k) {
      case ExprKind::Add:
      case ExprKind::Sub:
      case ExprKind::Mul: {
        Expr combined = rebuild_default();
        LinearForm f = arith::linearize(combined);
        f.fold_div_mod();
        return keep_if_same(original, arith::rebuild(f));
      }
      case ExprKind::Div:
      case ExprKind::Mod: {
        auto x = as_int(a), y = as_int(b);
        if (x && y && *y != 0 && !(*y == -1 && *x == arith::kNegInf)) {
          return make_int(a.dtype(), k == ExprKind::Div ? *x / *y : *x % *y);
        }
        if (y && *y > 0 && arith::bound(a, ranges_).lo >= 0) {
          return simplify_binary(k == ExprKind::Div ? ExprKind::FloorDiv : ExprKind::FloorMod, a, b,
                                 Expr());
        }
        return rebuild_default();
      }
      case ExprKind::FloorDiv:
      case ExprKind::FloorMod:
        return simplify_floor(k, a, b, rebuild_default);
      case ExprKind::Min:
      case ExprKind::Max: {
        auto x = as_int(a), y = as_int(b);
        if (x && y)
          return make_int(a.dtype(), k == ExprKind::Min ? std::min(*x, *y) : std::max(*x, *y));
        // min(min(e, c1), c2) = min(e, min(c1, c2)), and likewise for max.
        if (const auto* inner = a.as<BinaryNode>(); inner && a.kind() == k && y) {
          if (auto c1 = as_int(inner->b)) {
            int64_t c = k == ExprKind::Min ? std::min(*c1, *y) : std::max(*c1, *y);
            return simplify_binary(k, inner->a, make_int(a.dtype(), c), Expr());
          }
        }
        if (!exact_difference(a.dtype())) return rebuild_default();
        LinearForm d = arith::linearize(a);
        d.add(arith::linearize(b), -1);
        Interval bd = bound_of(d);
        if (bd.hi != arith::kPosInf && bd.hi <= 0) return k == ExprKind::Min ? a : b;
        if (bd.lo != arith::kNegInf && bd.lo >= 0) return k == ExprKind::Min ? b : a;
        return rebuild_default();
      }
      default:
        break;
    }
    // Integer / bool comparisons.
    auto x = as_int(a), y = as_int(b);
    if (x && y) return Expr(fold_compare(k, static_cast<double>(*x), static_cast<double>(*y)));
    if (!exact_difference(a.dtype())) return rebuild_default();
    LinearForm d = arith::linearize(a);
    d.add(arith::linearize(b), -1);
    if (auto r = decide(k, bound_of(d))) return Expr(*r);
    if (a.dtype() == DType::boolean) return rebuild_default();
    // Canonical form: terms on the left (leading coefficient positive), constant on the right.
    int64_t c = d.constant;
    d.constant = 0;
    bool all_negative = !d.terms.empty();
    for (const auto& t : d.terms) all_negative &= t.coeff < 0;
    if (all_negative) {
      for (auto& t : d.terms) t.coeff = -t.coeff;
      c = -c;
      k = flip(k);
    }
    if (d.terms.empty()) return rebuild_default();
    // floordiv(x, q) < c  <=>  x < q*c (q > 0), and the like for the other orderings.
    if (d.terms.size() == 1 && d.terms[0].coeff == 1 &&
        d.terms[0].atom.kind() == ExprKind::FloorDiv && k != ExprKind::EQ && k != ExprKind::NE) {
      const auto* fd = d.terms[0].atom.as<BinaryNode>();
      if (auto q = as_int(fd->b); q && *q > 0) {
        const int64_t bound = -c;
        const bool strict_below = k == ExprKind::LT || k == ExprKind::GE;
        const int64_t limit = *q * (strict_below ? bound : bound + 1);
        const ExprKind nk = (k == ExprKind::LT || k == ExprKind::LE) ? ExprKind::LT : ExprKind::GE;
        return simplify_binary(nk, fd->a, make_int(d.dtype, limit), Expr());
      }
    }
    return keep_if_same(original, make_binary(k, arith::rebuild(d), make_int(d.dtype, -c)));
  }

  template <typename F>
  Expr simplify_logical(ExprKind k, const Expr& a, const Expr& b, F rebuild_default) {
    auto x = as_int(a), y = as_int(b);
    if (k == ExprKind::And) {
      if ((x && !*x) || (y && !*y)) return Expr(false);
      if (x) return b;
      if (y) return a;
    } else {
      if ((x && *x) || (y && *y)) return Expr(true);
      if (x) return b;
      if (y) return a;
    }
    if (structural_equal(a, b)) return a;
    return rebuild_default();
  }

  template <typename F>
  Expr simplify_floor(ExprKind k, const Expr& a, const Expr& b, F rebuild_default) {
    auto x = as_int(a), y = as_int(b);
    if (x && y && *y != 0) {
      return make_int(
          a.dtype(), k == ExprKind::FloorDiv ? arith::floor_div(*x, *y) : arith::floor_mod(*x, *y));
    }
    if (!y || *y <= 0) return rebuild_default();
    const int64_t c = *y;
    if (c == 1) return k == ExprKind::FloorDiv ? a : make_int(a.dtype(), 0);
    // a = c*q + r with every coefficient of r not a multiple of c and 0 <= r.constant < c.
    LinearForm f = arith::linearize(a), q, r;
    q.dtype = r.dtype = f.dtype;
    for (const auto& t : f.terms) {
      if (t.coeff % c == 0) {
        q.add(t.atom, t.coeff / c);
      } else {
        r.add(t.atom, t.coeff);
      }
    }
    q.constant = arith::floor_div(f.constant, c);
    r.constant = arith::floor_mod(f.constant, c);
    Interval rb = bound_of(r);
    const bool one_period =
        rb.bounded() && arith::floor_div(rb.lo, c) == arith::floor_div(rb.hi, c);
    if (k == ExprKind::FloorDiv) {
      if (one_period) {
        q.constant += arith::floor_div(rb.lo, c);
        return arith::rebuild(q);
      }
      Expr rest = arith::rebuild(r);
      // floordiv(floordiv(x, c1), c) = floordiv(x, c1 * c)
      if (const auto* inner = rest.as<BinaryNode>(); inner && rest.kind() == ExprKind::FloorDiv) {
        if (auto c1 = as_int(inner->b); c1 && *c1 > 0) {
          rest = make_binary(ExprKind::FloorDiv, inner->a, make_int(a.dtype(), *c1 * c));
          if (q.terms.empty() && q.constant == 0) return rest;
          q.add(rest, 1);
          return arith::rebuild(q);
        }
      }
      if (q.terms.empty() && q.constant == 0) return rebuild_default();
      q.add(make_binary(ExprKind::FloorDiv, rest, b), 1);
      return arith::rebuild(q);
    }
    if (one_period) {
      r.constant -= arith::floor_div(rb.lo, c) * c;
      return arith::rebuild(r);
    }
    Expr rest = arith::rebuild(r);
    if (structural_equal(rest, a)) return rebuild_default();
    return make_binary(ExprKind::FloorMod, rest, b);
  }

  const VarRanges& ranges_;
};

}  // namespace

Expr simplify(const Expr& e, const VarRanges& ranges) {
  Simplifier s(ranges);
  return s.mutate(e);
}

}  // namespace collage::te
