// Interval bounds and canonical linear forms of integer expressions.
#include "arith.h"

#include <algorithm>
#include <optional>

namespace collage::te::arith {

int64_t sat_add(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return (a == kPosInf || b == kPosInf) ? 0 : kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  const bool neg = (a < 0) != (b < 0);
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf) return neg ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? kNegInf : kPosInf;
  return r;
}

Interval add(Interval a, Interval b) {
  Interval r;
  r.lo = (a.lo == kNegInf || b.lo == kNegInf) ? kNegInf : sat_add(a.lo, b.lo);
  r.hi = (a.hi == kPosInf || b.hi == kPosInf) ? kPosInf : sat_add(a.hi, b.hi);
  return r;
}

Interval scale(Interval a, int64_t c) {
  if (c >= 0) return {sat_mul(a.lo, c), sat_mul(a.hi, c)};
  return {sat_mul(a.hi, c), sat_mul(a.lo, c)};
}

Interval mul(Interval a, Interval b) {
  if (a.is_point()) return scale(b, a.lo);
  if (b.is_point()) return scale(a, b.lo);
  int64_t p[4] = {sat_mul(a.lo, b.lo), sat_mul(a.lo, b.hi), sat_mul(a.hi, b.lo),
                  sat_mul(a.hi, b.hi)};
  return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

Interval unite(Interval a, Interval b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  return a - floor_div(a, b) * b;
}

std::pair<int64_t, int64_t> int_limits(DType t) {
  switch (t) {
    case DType::boolean:
      return {0, 1};
    case DType::i8:
      return {std::numeric_limits<int8_t>::min(), std::numeric_limits<int8_t>::max()};
    case DType::i16:
      return {std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max()};
    case DType::i32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::u8:
      return {0, std::numeric_limits<uint8_t>::max()};
    case DType::u16:
      return {0, std::numeric_limits<uint16_t>::max()};
    case DType::u32:
      return {0, std::numeric_limits<uint32_t>::max()};
    case DType::u64:
      return {0, -1};
    default:
      return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

namespace {

Interval type_range(DType t) {
  if (t == DType::u64) return {};  // its range does not fit the signed interval
  const auto [lo, hi] = int_limits(t);
  return {lo, hi};
}

Interval intersect(Interval a, Interval b) {
  return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
}

// Interval of floordiv(a, c) for a constant c > 0.
Interval floordiv_const(Interval a, int64_t c) {
  return {a.lo == kNegInf ? kNegInf : floor_div(a.lo, c),
          a.hi == kPosInf ? kPosInf : floor_div(a.hi, c)};
}

Interval floormod_const(Interval a, int64_t c) {
  if (a.bounded() && floor_div(a.lo, c) == floor_div(a.hi, c)) {
    return {floor_mod(a.lo, c), floor_mod(a.hi, c)};
  }
  return {0, c - 1};
}

std::optional<int64_t> const_int(const Expr& e) {
  if (const auto* i = e.as<IntImmNode>()) return i->value;
  return std::nullopt;
}

Interval bound_impl(const Expr& e, const VarRanges& ranges) {
  if (!e.defined() || is_float(e.dtype())) return {};
  const Interval type = type_range(e.dtype());
  switch (e.kind()) {
    case ExprKind::IntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      return {v, v};
    }
    case ExprKind::Var: {
      auto it = ranges.find(e.as<VarNode>());
      if (it == ranges.end() || it->second.extent <= 0) return type;
      return {it->second.min, sat_add(it->second.min, it->second.extent - 1)};
    }
    case ExprKind::Add:
    case ExprKind::Sub:
      return bound(linearize(e), ranges);
    case ExprKind::Mul: {
      const auto* n = e.as<BinaryNode>();
      if (const_int(n->a) || const_int(n->b)) return bound(linearize(e), ranges);
      return mul(bound_impl(n->a, ranges), bound_impl(n->b, ranges));
    }
    case ExprKind::FloorDiv:
    case ExprKind::Div: {
      const auto* n = e.as<BinaryNode>();
      auto c = const_int(n->b);
      if (!c || *c == 0) return type;
      Interval a = bound_impl(n->a, ranges);
      if (*c < 0) return type;
      if (e.kind() == ExprKind::Div && a.lo < 0) {
        // Truncation rounds toward zero: the result lies between the floor results and zero.
        Interval f = floordiv_const(a, *c);
        return {f.lo, std::max<int64_t>(f.hi + 1, 0)};
      }
      return floordiv_const(a, *c);
    }
    case ExprKind::FloorMod:
    case ExprKind::Mod: {
      const auto* n = e.as<BinaryNode>();
      auto c = const_int(n->b);
      if (!c || *c <= 0) return type;
      Interval a = bound_impl(n->a, ranges);
      if (e.kind() == ExprKind::Mod && a.lo < 0) return {-(*c - 1), *c - 1};
      return floormod_const(a, *c);
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      const auto* n = e.as<BinaryNode>();
      Interval a = bound_impl(n->a, ranges), b = bound_impl(n->b, ranges);
      if (e.kind() == ExprKind::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Select: {
      const auto* n = e.as<SelectNode>();
      return unite(bound_impl(n->true_value, ranges), bound_impl(n->false_value, ranges));
    }
    case ExprKind::Cast: {
      const auto* n = e.as<CastNode>();
      if (is_float(n->value.dtype())) return type;
      return intersect(bound_impl(n->value, ranges), type);
    }
    default:
      return e.dtype() == DType::boolean ? Interval{0, 1} : type;
  }
}

void collect(LinearForm& f, const Expr& e, int64_t scale) {
  switch (e.kind()) {
    case ExprKind::IntImm:
      f.constant += e.as<IntImmNode>()->value * scale;
      return;
    case ExprKind::Add: {
      const auto* n = e.as<BinaryNode>();
      collect(f, n->a, scale);
      collect(f, n->b, scale);
      return;
    }
    case ExprKind::Sub: {
      const auto* n = e.as<BinaryNode>();
      collect(f, n->a, scale);
      collect(f, n->b, -scale);
      return;
    }
    case ExprKind::Mul: {
      const auto* n = e.as<BinaryNode>();
      if (auto c = const_int(n->b)) {
        collect(f, n->a, scale * *c);
        return;
      }
      if (auto c = const_int(n->a)) {
        collect(f, n->b, scale * *c);
        return;
      }
      break;
    }
    default:
      break;
  }
  f.add(e, scale);
}

}  // namespace

Interval bound(const Expr& e, const VarRanges& ranges) {
  return bound_impl(e, ranges);
}

void LinearForm::add(const Expr& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (auto it = terms.begin(); it != terms.end(); ++it) {
    if (structural_equal(it->atom, atom)) {
      it->coeff += coeff;
      if (it->coeff == 0) terms.erase(it);
      return;
    }
  }
  terms.push_back({atom, coeff});
}

void LinearForm::add(const LinearForm& other, int64_t s) {
  for (const LinearTerm& t : other.terms) add(t.atom, t.coeff * s);
  constant += other.constant * s;
}

namespace {

// x and q of floormod(x, q) or floordiv(x, q) with a positive constant q.
std::optional<std::pair<Expr, int64_t>> div_mod_parts(const Expr& e, ExprKind kind) {
  if (e.kind() != kind) return std::nullopt;
  const auto* n = e.as<BinaryNode>();
  auto q = const_int(n->b);
  if (!q || *q <= 0) return std::nullopt;
  return std::make_pair(n->a, *q);
}

}  // namespace

void LinearForm::fold_div_mod() {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < terms.size() && !changed; ++i) {
      auto mod = div_mod_parts(terms[i].atom, ExprKind::FloorMod);
      if (!mod) continue;
      const auto& [x, q] = *mod;
      const int64_t m = terms[i].coeff;
      for (size_t j = 0; j < terms.size() && !changed; ++j) {
        if (j == i) continue;
        // m*q*floordiv(x, q) + m*floormod(x, q) = m*x.
        if (auto div = div_mod_parts(terms[j].atom, ExprKind::FloorDiv);
            div && terms[j].coeff == m * q && div->second == q && structural_equal(div->first, x)) {
          terms.erase(terms.begin() + std::max(i, j));
          terms.erase(terms.begin() + std::min(i, j));
          add(linearize(x), m);
          changed = true;
          break;
        }
        // m*q*floormod(floordiv(x, q), r) + m*floormod(x, q) = m*floormod(x, q*r): the middle
        // axis of three fused loops, flattened back with the innermost.
        auto outer = div_mod_parts(terms[j].atom, ExprKind::FloorMod);
        if (!outer || terms[j].coeff != m * q) continue;
        auto inner = div_mod_parts(outer->first, ExprKind::FloorDiv);
        if (!inner || inner->second != q || !structural_equal(inner->first, x)) continue;
        Expr folded = make_binary(ExprKind::FloorMod, x, make_int(dtype, q * outer->second));
        terms.erase(terms.begin() + std::max(i, j));
        terms.erase(terms.begin() + std::min(i, j));
        add(folded, m);
        changed = true;
      }
    }
  }
}

LinearForm linearize(const Expr& e) {
  LinearForm f;
  f.dtype = e.dtype();
  collect(f, e, 1);
  return f;
}

Expr rebuild(const LinearForm& f) {
  Expr acc;
  auto term = [&](const LinearTerm& t, int64_t c) {
    return c == 1 ? t.atom : t.atom * make_int(f.dtype, c);
  };
  for (const LinearTerm& t : f.terms) {
    if (t.coeff > 0) acc = acc.defined() ? acc + term(t, t.coeff) : term(t, t.coeff);
  }
  if (!acc.defined()) {
    // Only negative terms: constant first ("3 - i", "0 - i").
    acc = make_int(f.dtype, f.constant);
    for (const LinearTerm& t : f.terms) acc = acc - term(t, -t.coeff);
    return acc;
  }
  for (const LinearTerm& t : f.terms) {
    if (t.coeff < 0) acc = acc - term(t, -t.coeff);
  }
  if (f.constant > 0) acc = acc + make_int(f.dtype, f.constant);
  if (f.constant < 0) acc = acc - make_int(f.dtype, -f.constant);
  return acc;
}

Interval bound(const LinearForm& f, const VarRanges& ranges) {
  Interval r{f.constant, f.constant};
  for (const LinearTerm& t : f.terms) r = add(r, scale(bound_impl(t.atom, ranges), t.coeff));
  return r;
}

}  // namespace collage::te::arith
