// Expression constructors: immediates, variables, type promotion of binary operators, casts,
// selects, intrinsic calls, reductions and the C++ operator overloads.
#include <cmath>
#include <limits>
#include <utility>

#include "collage/loop_ir.h"
#include "collage/te.h"
#include "arith.h"

namespace collage::te {

std::string_view expr_kind_name(ExprKind k) {
  switch (k) {
#define COLLAGE_TE_KIND_NAME(kind, node) \
  case ExprKind::kind:                   \
    return #kind;
    COLLAGE_TE_EXPR_NODES(COLLAGE_TE_KIND_NAME)
#undef COLLAGE_TE_KIND_NAME
  }
  return "?";
}

bool is_binary(ExprKind k) {
  return k >= ExprKind::Add && k <= ExprKind::Or;
}
bool is_comparison(ExprKind k) {
  return k >= ExprKind::EQ && k <= ExprKind::GE;
}

std::string_view intrinsic_name(Intrinsic f) {
  switch (f) {
    case Intrinsic::exp:
      return "exp";
    case Intrinsic::log:
      return "log";
    case Intrinsic::tanh:
      return "tanh";
    case Intrinsic::erf:
      return "erf";
    case Intrinsic::sqrt:
      return "sqrt";
    case Intrinsic::rsqrt:
      return "rsqrt";
    case Intrinsic::pow:
      return "pow";
    case Intrinsic::fabs:
      return "fabs";
    case Intrinsic::sigmoid:
      return "sigmoid";
    case Intrinsic::floor:
      return "floor";
    case Intrinsic::ceil:
      return "ceil";
    case Intrinsic::round:
      return "round";
    case Intrinsic::sin:
      return "sin";
    case Intrinsic::cos:
      return "cos";
    case Intrinsic::tan:
      return "tan";
    case Intrinsic::asin:
      return "asin";
    case Intrinsic::acos:
      return "acos";
    case Intrinsic::atan:
      return "atan";
    case Intrinsic::sinh:
      return "sinh";
    case Intrinsic::cosh:
      return "cosh";
    case Intrinsic::asinh:
      return "asinh";
    case Intrinsic::acosh:
      return "acosh";
    case Intrinsic::atanh:
      return "atanh";
    case Intrinsic::bit_and:
      return "bit_and";
    case Intrinsic::bit_or:
      return "bit_or";
    case Intrinsic::bit_xor:
      return "bit_xor";
    case Intrinsic::bit_not:
      return "bit_not";
    case Intrinsic::shift_left:
      return "shift_left";
    case Intrinsic::shift_right:
      return "shift_right";
    case Intrinsic::reinterpret:
      return "reinterpret";
  }
  return "?";
}

int intrinsic_arity(Intrinsic f) {
  switch (f) {
    case Intrinsic::pow:
    case Intrinsic::bit_and:
    case Intrinsic::bit_or:
    case Intrinsic::bit_xor:
    case Intrinsic::shift_left:
    case Intrinsic::shift_right:
      return 2;
    default:
      return 1;
  }
}

bool is_bit_intrinsic(Intrinsic f) {
  return f >= Intrinsic::bit_and;
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::max:
      return "max";
    case ReduceOp::min:
      return "min";
    case ReduceOp::prod:
      return "prod";
  }
  return "?";
}

namespace {

// Wraps an integer into the range of its type, as a store of that type would.
int64_t wrap_int(DType t, int64_t v) {
  switch (t) {
    case DType::boolean:
      return v != 0;
    case DType::i8:
      return static_cast<int8_t>(v);
    case DType::i16:
      return static_cast<int16_t>(v);
    case DType::i32:
      return static_cast<int32_t>(v);
    case DType::u8:
      return static_cast<uint8_t>(v);
    case DType::u16:
      return static_cast<uint16_t>(v);
    case DType::u32:
      return static_cast<uint32_t>(v);
    default:
      return v;  // i64, and u64 as its bit pattern
  }
}

bool is_imm(const Expr& e) {
  return e.kind() == ExprKind::IntImm || e.kind() == ExprKind::FloatImm;
}

bool is_storage_float(DType t) {
  return t == DType::f16 || t == DType::bf16;
}

// Order in which mismatched types are promoted.
int promotion_rank(DType t) {
  switch (t) {
    case DType::boolean:
      return 0;
    case DType::i8:
    case DType::u8:
      return 1;
    case DType::i16:
    case DType::u16:
      return 2;
    case DType::i32:
    case DType::u32:
      return 3;
    case DType::i64:
    case DType::u64:
      return 4;
    case DType::f64:
      return 6;
    default:
      return 5;  // f32 (f16/bf16 never reach here)
  }
}

// An immediate converted to type t (folding the conversion).
Expr convert_imm(const Expr& e, DType t) {
  if (const auto* i = e.as<IntImmNode>()) return make_const(t, static_cast<double>(i->value));
  if (const auto* f = e.as<FloatImmNode>()) {
    if (is_float(t)) return make_float(t, f->value);
    if (std::isnan(f->value)) return make_int(t, 0);
    return make_int(t, static_cast<int64_t>(f->value));
  }
  return cast(t, e);
}

Expr to_type(const Expr& e, DType t) {
  if (e.dtype() == t) return e;
  return is_imm(e) ? convert_imm(e, t) : cast(t, e);
}

// f16/bf16 values are storage types: arithmetic happens in f32.
Expr compute_type(const Expr& e) {
  return e.defined() && is_storage_float(e.dtype()) ? cast(DType::f32, e) : e;
}

void promote(Expr& a, Expr& b) {
  a = compute_type(a);
  b = compute_type(b);
  if (a.dtype() == b.dtype()) return;
  const bool ia = is_imm(a), ib = is_imm(b);
  if (ia && !ib && !(a.kind() == ExprKind::FloatImm && !is_float(b.dtype()))) {
    a = convert_imm(a, b.dtype());
    return;
  }
  if (ib && !ia && !(b.kind() == ExprKind::FloatImm && !is_float(a.dtype()))) {
    b = convert_imm(b, a.dtype());
    return;
  }
  DType t = promotion_rank(a.dtype()) >= promotion_rank(b.dtype()) ? a.dtype() : b.dtype();
  a = to_type(a, t);
  b = to_type(b, t);
}

Expr to_bool(const Expr& e) {
  if (!e.defined() || e.dtype() == DType::boolean) return e;
  return make_binary(ExprKind::NE, e, make_const(e.dtype(), 0));
}

Expr to_float(const Expr& e) {
  if (!e.defined()) return e;
  Expr c = compute_type(e);
  return is_float(c.dtype()) ? c : to_type(c, DType::f32);
}

}  // namespace

Expr Expr::make_int(int64_t v) {
  return te::make_int(DType::i64, v);
}
Expr Expr::make_float(double v) {
  return te::make_float(DType::f32, v);
}
Expr::Expr(bool v) : Expr(te::make_int(DType::boolean, v ? 1 : 0)) {}

Var::Var(std::string name, DType t) : Expr(std::make_shared<VarNode>(t, std::move(name))) {}

IterVar::IterVar(Var var, Range dom, IterKind kind)
    : node_(std::make_shared<IterVarNode>(IterVarNode{std::move(var), dom, kind})) {}

Expr make_int(DType t, int64_t v) {
  if (is_float(t)) return make_float(t, static_cast<double>(v));
  return Expr(std::make_shared<IntImmNode>(t, wrap_int(t, v)));
}

Expr make_float(DType t, double v) {
  if (!is_float(t)) return make_int(t, static_cast<int64_t>(v));
  if (t == DType::f32) v = static_cast<float>(v);
  return Expr(std::make_shared<FloatImmNode>(t, v));
}

Expr make_const(DType t, double v) {
  return is_float(t) ? make_float(t, v) : make_int(t, static_cast<int64_t>(v));
}

Expr make_binary(ExprKind k, Expr a, Expr b) {
  if (!a.defined() || !b.defined()) {
    DType t = a.defined() ? a.dtype() : b.defined() ? b.dtype() : DType::f32;
    return Expr(std::make_shared<BinaryNode>(k, t, std::move(a), std::move(b)));
  }
  if (k == ExprKind::And || k == ExprKind::Or) {
    return Expr(std::make_shared<BinaryNode>(k, DType::boolean, to_bool(a), to_bool(b)));
  }
  promote(a, b);
  if (a.dtype() == DType::boolean && k >= ExprKind::Add && k <= ExprKind::FloorMod) {
    a = cast(DType::i32, a);
    b = cast(DType::i32, b);
  }
  DType t = is_comparison(k) ? DType::boolean : a.dtype();
  return Expr(std::make_shared<BinaryNode>(k, t, std::move(a), std::move(b)));
}

Expr cast(DType t, Expr v) {
  if (v.defined() && v.dtype() == t) return v;
  return Expr(std::make_shared<CastNode>(t, std::move(v)));
}

Expr select(Expr cond, Expr true_value, Expr false_value) {
  cond = to_bool(cond);
  if (true_value.defined() && false_value.defined()) promote(true_value, false_value);
  DType t = true_value.defined() ? true_value.dtype() : DType::f32;
  return Expr(std::make_shared<SelectNode>(t, std::move(cond), std::move(true_value),
                                           std::move(false_value)));
}

Expr call(Intrinsic f, std::vector<Expr> args) {
  if (!is_bit_intrinsic(f))
    for (Expr& a : args) a = to_float(a);
  if (intrinsic_arity(f) == 2 && args.size() == 2 && args[0].defined() && args[1].defined()) {
    promote(args[0], args[1]);
  }
  DType t = !args.empty() && args[0].defined() ? args[0].dtype() : DType::f32;
  return Expr(std::make_shared<CallNode>(t, f, std::move(args)));
}

Expr minimum(Expr a, Expr b) {
  return make_binary(ExprKind::Min, std::move(a), std::move(b));
}
Expr maximum(Expr a, Expr b) {
  return make_binary(ExprKind::Max, std::move(a), std::move(b));
}
Expr floordiv(Expr a, Expr b) {
  return make_binary(ExprKind::FloorDiv, std::move(a), std::move(b));
}
Expr floormod(Expr a, Expr b) {
  return make_binary(ExprKind::FloorMod, std::move(a), std::move(b));
}
Expr div(Expr a, Expr b) {
  return make_binary(ExprKind::Div, std::move(a), std::move(b));
}
Expr mod(Expr a, Expr b) {
  return make_binary(ExprKind::Mod, std::move(a), std::move(b));
}
Expr logical_and(Expr a, Expr b) {
  return make_binary(ExprKind::And, std::move(a), std::move(b));
}
Expr logical_or(Expr a, Expr b) {
  return make_binary(ExprKind::Or, std::move(a), std::move(b));
}
Expr logical_not(Expr a) {
  return Expr(std::make_shared<NotNode>(to_bool(std::move(a))));
}

Expr exp(Expr x) {
  return call(Intrinsic::exp, {std::move(x)});
}
Expr log(Expr x) {
  return call(Intrinsic::log, {std::move(x)});
}
Expr tanh(Expr x) {
  return call(Intrinsic::tanh, {std::move(x)});
}
Expr erf(Expr x) {
  return call(Intrinsic::erf, {std::move(x)});
}
Expr sqrt(Expr x) {
  return call(Intrinsic::sqrt, {std::move(x)});
}
Expr rsqrt(Expr x) {
  return call(Intrinsic::rsqrt, {std::move(x)});
}
Expr pow(Expr x, Expr y) {
  return call(Intrinsic::pow, {std::move(x), std::move(y)});
}
Expr fabs(Expr x) {
  return call(Intrinsic::fabs, {std::move(x)});
}
Expr sigmoid(Expr x) {
  return call(Intrinsic::sigmoid, {std::move(x)});
}
Expr floor(Expr x) {
  return call(Intrinsic::floor, {std::move(x)});
}
Expr ceil(Expr x) {
  return call(Intrinsic::ceil, {std::move(x)});
}
Expr round(Expr x) {
  return call(Intrinsic::round, {std::move(x)});
}

Expr sin(Expr x) {
  return call(Intrinsic::sin, {std::move(x)});
}
Expr cos(Expr x) {
  return call(Intrinsic::cos, {std::move(x)});
}
Expr tan(Expr x) {
  return call(Intrinsic::tan, {std::move(x)});
}
Expr asin(Expr x) {
  return call(Intrinsic::asin, {std::move(x)});
}
Expr acos(Expr x) {
  return call(Intrinsic::acos, {std::move(x)});
}
Expr atan(Expr x) {
  return call(Intrinsic::atan, {std::move(x)});
}
Expr sinh(Expr x) {
  return call(Intrinsic::sinh, {std::move(x)});
}
Expr cosh(Expr x) {
  return call(Intrinsic::cosh, {std::move(x)});
}
Expr asinh(Expr x) {
  return call(Intrinsic::asinh, {std::move(x)});
}
Expr acosh(Expr x) {
  return call(Intrinsic::acosh, {std::move(x)});
}
Expr atanh(Expr x) {
  return call(Intrinsic::atanh, {std::move(x)});
}
Expr bit_and(Expr a, Expr b) {
  return call(Intrinsic::bit_and, {std::move(a), std::move(b)});
}
Expr bit_or(Expr a, Expr b) {
  return call(Intrinsic::bit_or, {std::move(a), std::move(b)});
}
Expr bit_xor(Expr a, Expr b) {
  return call(Intrinsic::bit_xor, {std::move(a), std::move(b)});
}
Expr bit_not(Expr a) {
  return call(Intrinsic::bit_not, {std::move(a)});
}
Expr shift_left(Expr a, Expr n) {
  return call(Intrinsic::shift_left, {std::move(a), std::move(n)});
}
Expr shift_right(Expr a, Expr n) {
  return call(Intrinsic::shift_right, {std::move(a), std::move(n)});
}
Expr reinterpret(DType t, Expr v) {
  std::vector<Expr> args = {std::move(v)};
  return Expr(std::make_shared<CallNode>(t, Intrinsic::reinterpret, std::move(args)));
}

Expr operator+(Expr a, Expr b) {
  return make_binary(ExprKind::Add, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return make_binary(ExprKind::Sub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return make_binary(ExprKind::Mul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return div(std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return mod(std::move(a), std::move(b));
}
Expr operator-(Expr a) {
  if (const auto* i = a.as<IntImmNode>()) return make_int(a.dtype(), -i->value);
  if (const auto* f = a.as<FloatImmNode>()) return make_float(a.dtype(), -f->value);
  DType t = a.defined() ? compute_type(a).dtype() : DType::f32;
  return make_binary(ExprKind::Sub, make_const(t, 0), std::move(a));
}
Expr operator==(Expr a, Expr b) {
  return make_binary(ExprKind::EQ, std::move(a), std::move(b));
}
Expr operator!=(Expr a, Expr b) {
  return make_binary(ExprKind::NE, std::move(a), std::move(b));
}
Expr operator<(Expr a, Expr b) {
  return make_binary(ExprKind::LT, std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return make_binary(ExprKind::LE, std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return make_binary(ExprKind::GT, std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
  return make_binary(ExprKind::GE, std::move(a), std::move(b));
}
Expr operator&&(Expr a, Expr b) {
  return logical_and(std::move(a), std::move(b));
}
Expr operator||(Expr a, Expr b) {
  return logical_or(std::move(a), std::move(b));
}
Expr operator!(Expr a) {
  return logical_not(std::move(a));
}

Expr reduce_identity(ReduceOp op, DType t) {
  switch (op) {
    case ReduceOp::sum:
      return make_const(t, 0);
    case ReduceOp::max:
      if (is_float(t)) return make_float(t, -std::numeric_limits<double>::infinity());
      return make_int(t, arith::int_limits(t).first);
    case ReduceOp::min:
      if (is_float(t)) return make_float(t, std::numeric_limits<double>::infinity());
      return make_int(t, arith::int_limits(t).second);
    case ReduceOp::prod:
      return make_const(t, 1);
  }
  return Expr();
}

namespace {
Expr make_reduce(ReduceOp op, Expr source, std::vector<IterVar> axes, Expr init) {
  source = compute_type(source);
  DType t = source.defined() ? source.dtype() : DType::f32;
  init = init.defined() ? to_type(init, t) : reduce_identity(op, t);
  return Expr(
      std::make_shared<ReduceNode>(t, op, std::move(source), std::move(axes), std::move(init)));
}
}  // namespace

Expr sum(Expr source, std::vector<IterVar> axes) {
  return make_reduce(ReduceOp::sum, std::move(source), std::move(axes), Expr());
}
Expr sum(Expr source, std::vector<IterVar> axes, Expr init) {
  return make_reduce(ReduceOp::sum, std::move(source), std::move(axes), std::move(init));
}
Expr max(Expr source, std::vector<IterVar> axes) {
  return make_reduce(ReduceOp::max, std::move(source), std::move(axes), Expr());
}
Expr max(Expr source, std::vector<IterVar> axes, Expr init) {
  return make_reduce(ReduceOp::max, std::move(source), std::move(axes), std::move(init));
}
Expr min(Expr source, std::vector<IterVar> axes) {
  return make_reduce(ReduceOp::min, std::move(source), std::move(axes), Expr());
}
Expr min(Expr source, std::vector<IterVar> axes, Expr init) {
  return make_reduce(ReduceOp::min, std::move(source), std::move(axes), std::move(init));
}

Expr prod(Expr source, std::vector<IterVar> axes) {
  return make_reduce(ReduceOp::prod, std::move(source), std::move(axes), Expr());
}
Expr reduce(ReduceOp op, Expr source, std::vector<IterVar> axes) {
  return make_reduce(op, std::move(source), std::move(axes), Expr());
}
Expr reduce_step(ReduceOp op, Expr a, Expr b) {
  switch (op) {
    case ReduceOp::sum:
      return std::move(a) + std::move(b);
    case ReduceOp::max:
      return maximum(std::move(a), std::move(b));
    case ReduceOp::min:
      return minimum(std::move(a), std::move(b));
    case ReduceOp::prod:
      return std::move(a) * std::move(b);
  }
  return Expr();
}

std::optional<int64_t> as_const_int(const Expr& e) {
  if (const auto* i = e.as<IntImmNode>()) return i->value;
  return std::nullopt;
}

Expr load(Buffer buffer, std::vector<Expr> indices) {
  return Expr(std::make_shared<LoadNode>(std::move(buffer), std::move(indices)));
}

}  // namespace collage::te
