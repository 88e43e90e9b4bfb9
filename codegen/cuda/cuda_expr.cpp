// CUDA C expressions: literals, arithmetic with C or floor semantics, NaN-propagating min/max,
// casts (f16/bf16 values travel as float), math intrinsics mapped to CUDA's and buffer loads.
#include <cmath>
#include <cstdio>

#include "codegen/cuda/printer.h"
#include "core/str_cat.h"
#include "te/arith.h"

namespace collage::codegen::cuda {

std::string_view cuda_type_name(DType t) {
  switch (t) {
    case DType::f32:
      return "float";
    case DType::f16:
    case DType::bf16:
      return "unsigned short";
    case DType::i8:
      return "signed char";
    case DType::i32:
      return "int";
    case DType::i64:
      return "long long";
    case DType::boolean:
      return "bool";
    case DType::f64:
    case DType::i16:
    case DType::u8:
    case DType::u16:
    case DType::u32:
    case DType::u64:
    case DType::str:
      break;  // not generated (the native backend refuses these types)
  }
  return "void";
}

namespace detail {

std::string Printer::scalar_type(DType t) const {
  if (is_float(t)) return "float";
  if (t == DType::i64 && info_.index32) return "int";
  return std::string(cuda_type_name(t));
}

namespace {

std::string float_literal(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fffffff)";
  if (std::isinf(v)) return v < 0 ? "(-__int_as_float(0x7f800000))" : "__int_as_float(0x7f800000)";
  char b[48];
  std::snprintf(b, sizeof b, "%.9g", v);
  std::string s = b;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

const char* c_operator(te::ExprKind k) {
  switch (k) {
    case te::ExprKind::Add:
      return " + ";
    case te::ExprKind::Sub:
      return " - ";
    case te::ExprKind::Mul:
      return " * ";
    case te::ExprKind::Div:
      return " / ";
    case te::ExprKind::Mod:
      return " % ";
    case te::ExprKind::EQ:
      return " == ";
    case te::ExprKind::NE:
      return " != ";
    case te::ExprKind::LT:
      return " < ";
    case te::ExprKind::LE:
      return " <= ";
    case te::ExprKind::GT:
      return " > ";
    case te::ExprKind::GE:
      return " >= ";
    case te::ExprKind::And:
      return " && ";
    case te::ExprKind::Or:
      return " || ";
    default:
      return nullptr;
  }
}

}  // namespace

std::string Printer::literal(const te::Expr& e) {
  if (const auto* f = e.as<te::FloatImmNode>()) return float_literal(f->value);
  const int64_t v = e.as<te::IntImmNode>()->value;
  switch (e.dtype()) {
    case DType::boolean:
      return v ? "true" : "false";
    case DType::i8:
      return str_cat("((signed char)", v, ")");
    case DType::i64:
      if (v < -2147483647 || v > 2147483647) return str_cat("(", v, "LL)");
      break;
    default:
      break;
  }
  return v < 0 ? str_cat("(", v, ")") : std::to_string(v);
}

te::Expr Printer::flat_index(const te::Buffer& b, const std::vector<te::Expr>& indices) const {
  te::Expr flat;
  for (size_t d = 0; d < indices.size(); ++d) {
    te::Expr i = te::cast(DType::i64, indices[d]);
    flat = flat.defined() ? flat * te::make_int(DType::i64, b.shape()[d]) + i : i;
  }
  return flat.defined() ? te::simplify(flat) : te::make_int(DType::i64, 0);
}

std::string Printer::binary(const te::BinaryNode& n) {
  const te::ExprKind k = n.kind;
  const DType t = n.a.dtype();
  const bool fl = is_float(t);
  const std::string a = expr(n.a), b = expr(n.b);
  // Integer literals print as int: the helper templates get the operands' type explicitly.
  const std::string targ = str_cat("<", scalar_type(t), ">(");
  // Floor and C division agree for a non-negative dividend and a positive divisor: most index
  // arithmetic, and the cheaper form.
  if ((k == te::ExprKind::FloorDiv || k == te::ExprKind::FloorMod) && !fl) {
    std::optional<int64_t> d = te::as_const_int(n.b);
    if (d && *d > 0 && te::arith::bound(n.a, ranges_).lo >= 0) {
      return str_cat("(", a, k == te::ExprKind::FloorDiv ? " / " : " % ", b, ")");
    }
  }
  switch (k) {
    case te::ExprKind::Mod:
      if (fl) return str_cat("fmodf(", a, ", ", b, ")");
      break;
    case te::ExprKind::FloorDiv:
      return fl ? str_cat("floorf(", a, " / ", b, ")")
                : str_cat("collage_floordiv", targ, a, ", ", b, ")");
    case te::ExprKind::FloorMod:
      return fl ? str_cat("(", a, " - floorf(", a, " / ", b, ") * ", b, ")")
                : str_cat("collage_floormod", targ, a, ", ", b, ")");
    case te::ExprKind::Min:
    case te::ExprKind::Max: {
      const bool mn = k == te::ExprKind::Min;
      if (t == DType::boolean) return str_cat("(", a, mn ? " && " : " || ", b, ")");
      if (fl) return str_cat(mn ? "collage_fmin(" : "collage_fmax(", a, ", ", b, ")");
      return str_cat(mn ? "collage_min" : "collage_max", targ, a, ", ", b, ")");
    }
    default:
      break;
  }
  return str_cat("(", a, c_operator(k), b, ")");
}

std::string Printer::call(const te::CallNode& n) {
  std::string args;
  for (const te::Expr& a : n.args) args += (args.empty() ? "" : ", ") + expr(a);
  const char* fn = "";
  switch (n.op) {
    case te::Intrinsic::exp:
      fn = "expf";
      break;
    case te::Intrinsic::log:
      fn = "logf";
      break;
    case te::Intrinsic::tanh:
      fn = "tanhf";
      break;
    case te::Intrinsic::erf:
      fn = "erff";
      break;
    case te::Intrinsic::sqrt:
      fn = "sqrtf";
      break;
    case te::Intrinsic::rsqrt:
      fn = "rsqrtf";
      break;
    case te::Intrinsic::pow:
      fn = "powf";
      break;
    case te::Intrinsic::fabs:
      fn = "fabsf";
      break;
    case te::Intrinsic::sigmoid:
      fn = "collage_sigmoid";
      break;
    case te::Intrinsic::floor:
      fn = "floorf";
      break;
    case te::Intrinsic::ceil:
      fn = "ceilf";
      break;
    case te::Intrinsic::round:
      fn = "rintf";  // half to even, like ONNX Round
      break;
    case te::Intrinsic::sin:
      fn = "sinf";
      break;
    case te::Intrinsic::cos:
      fn = "cosf";
      break;
    case te::Intrinsic::tan:
      fn = "tanf";
      break;
    case te::Intrinsic::asin:
      fn = "asinf";
      break;
    case te::Intrinsic::acos:
      fn = "acosf";
      break;
    case te::Intrinsic::atan:
      fn = "atanf";
      break;
    case te::Intrinsic::sinh:
      fn = "sinhf";
      break;
    case te::Intrinsic::cosh:
      fn = "coshf";
      break;
    case te::Intrinsic::asinh:
      fn = "asinhf";
      break;
    case te::Intrinsic::acosh:
      fn = "acoshf";
      break;
    case te::Intrinsic::atanh:
      fn = "atanhf";
      break;
    case te::Intrinsic::bit_and:
    case te::Intrinsic::bit_or:
    case te::Intrinsic::bit_xor:
    case te::Intrinsic::bit_not:
    case te::Intrinsic::shift_left:
    case te::Intrinsic::shift_right:
    case te::Intrinsic::reinterpret:
      // The GPU schedules cover float operators only.
      fail(str_cat("the integer intrinsic ", te::intrinsic_name(n.op), " in CUDA code"));
      break;
  }
  return str_cat(fn, "(", args, ")");
}

std::string Printer::cast(DType to, const te::Expr& v) {
  const DType from = v.dtype();
  const std::string x = expr(v);
  if (to == from || (is_float(to) && is_float(from) && to == DType::f32)) return x;
  if (to == DType::boolean) return str_cat("(", x, " != 0)");
  if (to == DType::f16) return str_cat("collage_h2f(collage_f2h((float)", x, "))");
  if (to == DType::bf16) return str_cat("collage_bf2f(collage_f2bf((float)", x, "))");
  return str_cat("((", scalar_type(to), ")", x, ")");
}

std::string Printer::expr(const te::Expr& e) {
  switch (e.kind()) {
    case te::ExprKind::IntImm:
    case te::ExprKind::FloatImm:
      return literal(e);
    case te::ExprKind::Var:
      return var(e.as<te::VarNode>());
    case te::ExprKind::Not:
      return str_cat("(!", expr(e.as<te::NotNode>()->a), ")");
    case te::ExprKind::Select: {
      const auto* s = e.as<te::SelectNode>();
      return str_cat("(", expr(s->cond), " ? ", expr(s->true_value), " : ", expr(s->false_value),
                     ")");
    }
    case te::ExprKind::Cast: {
      const auto* c = e.as<te::CastNode>();
      return cast(c->dtype, c->value);
    }
    case te::ExprKind::Call:
      return call(*e.as<te::CallNode>());
    case te::ExprKind::Load: {
      const auto* l = e.as<te::LoadNode>();
      std::string ref =
          str_cat(buf(l->buffer.get()), "[", expr(flat_index(l->buffer, l->indices)), "]");
      if (l->buffer.dtype() == DType::f16) return str_cat("collage_h2f(", ref, ")");
      if (l->buffer.dtype() == DType::bf16) return str_cat("collage_bf2f(", ref, ")");
      return ref;
    }
    case te::ExprKind::ProducerLoad:
    case te::ExprKind::Reduce:
      // verify() rejects these before printing starts.
      fail(str_cat("TE-only expression ", te::to_string(e), " in loop IR"));
      return "0";
    default:
      return binary(*e.as<te::BinaryNode>());
  }
}

}  // namespace detail

}  // namespace collage::codegen::cuda
