// Expression emission: constants, variables, arithmetic (safe integer division, floor semantics),
// comparisons, selects and type conversions, on scalars or lane vectors.
#include "codegen/llvm/emitter.h"
#include "collage/jit.h"
#include "core/str_cat.h"
#include "llvm/IR/Intrinsics.h"

namespace collage::codegen::detail {

using te::ExprKind;

Emitter::Emitter(llvm::Module& module, const TargetSpec& target)
    : module_(module), ctx_(module.getContext()), target_(target), b_(module.getContext()) {
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  b_.setFastMathFlags(fmf);
}

void Emitter::fail(const std::string& what) {
  if (status_.ok())
    status_ = absl::InvalidArgumentError(str_cat("kernel '", func_name_, "': ", what));
}

llvm::Type* Emitter::reg_type(DType t) const {
  switch (t) {
    case DType::f32:
      return llvm::Type::getFloatTy(ctx_);
    case DType::f16:
      return llvm::Type::getHalfTy(ctx_);
    case DType::bf16:
      return llvm::Type::getInt16Ty(ctx_);  // raw bits; converted through f32
    case DType::f64:
      return llvm::Type::getDoubleTy(ctx_);
    case DType::i8:
    case DType::u8:
      return llvm::Type::getInt8Ty(ctx_);
    case DType::i16:
    case DType::u16:
      return llvm::Type::getInt16Ty(ctx_);
    case DType::i32:
    case DType::u32:
      return llvm::Type::getInt32Ty(ctx_);
    case DType::i64:
    case DType::u64:
      return llvm::Type::getInt64Ty(ctx_);
    case DType::boolean:
      return llvm::Type::getInt1Ty(ctx_);
    case DType::str:
      break;  // not generated (the native backend refuses strings)
  }
  return nullptr;
}

llvm::Type* Emitter::mem_type(DType t) const {
  return t == DType::boolean ? llvm::Type::getInt8Ty(ctx_) : reg_type(t);
}

llvm::Type* Emitter::with_lanes(llvm::Type* t) const {
  return lanes_ > 0 ? llvm::FixedVectorType::get(t, lanes_) : t;
}

llvm::Value* Emitter::broadcast(Val v) {
  if (v.vec || lanes_ == 0) return v.v;
  return b_.CreateVectorSplat(lanes_, v.v);
}

llvm::Value* Emitter::make_bool(bool v) {
  return llvm::ConstantInt::get(llvm::Type::getInt1Ty(ctx_), v ? 1 : 0);
}

Val Emitter::emit(const te::Expr& e) {
  if (!e.defined()) {
    fail("contains an undefined expression");
    return {llvm::PoisonValue::get(reg_type(DType::i64)), false};
  }
  switch (e.kind()) {
    case ExprKind::IntImm:
      return {llvm::ConstantInt::get(reg_type(e.dtype()), e.as<te::IntImmNode>()->value,
                                     /*IsSigned=*/!is_unsigned(e.dtype())),
              false};
    case ExprKind::FloatImm: {
      double v = e.as<te::FloatImmNode>()->value;
      if (e.dtype() == DType::bf16) {
        return {
            llvm::ConstantInt::get(reg_type(DType::bf16), float_to_bfloat16(static_cast<float>(v))),
            false};
      }
      return {llvm::ConstantFP::get(reg_type(e.dtype()), v), false};
    }
    case ExprKind::Var: {
      auto it = vars_.find(e.as<te::VarNode>());
      if (it == vars_.end()) {
        fail(str_cat("uses variable '", e.as<te::VarNode>()->name, "' outside its loop or let"));
        return {llvm::PoisonValue::get(reg_type(e.dtype())), false};
      }
      return it->second;
    }
    case ExprKind::Not: {
      Val a = emit(e.as<te::NotNode>()->a);
      return {b_.CreateNot(a.v), a.vec};
    }
    case ExprKind::Select:
      return emit_select(*e.as<te::SelectNode>());
    case ExprKind::Cast:
      return emit_cast(e.dtype(), e.as<te::CastNode>()->value);
    case ExprKind::Call: {
      const auto* c = e.as<te::CallNode>();
      std::vector<Val> vals;
      bool vec = false;
      for (const te::Expr& a : c->args) {
        vals.push_back(emit(a));
        vec |= vals.back().vec;
      }
      std::vector<llvm::Value*> args;
      for (Val& v : vals) args.push_back(vec ? broadcast(v) : v.v);
      if (args.size() != static_cast<size_t>(te::intrinsic_arity(c->op)) ||
          !generates_intrinsic(c->op, e.dtype())) {
        fail(str_cat("calls ", te::intrinsic_name(c->op), " giving ", dtype_name(e.dtype()),
                     " values, which generated code does not compute"));
        return {llvm::PoisonValue::get(with_lanes(reg_type(e.dtype()))), vec};
      }
      return {emit_call(c->op, e.dtype(), args), vec};
    }
    case ExprKind::Load:
      return emit_load(*e.as<te::LoadNode>());
    case ExprKind::ProducerLoad:
    case ExprKind::Reduce:
      fail(str_cat("contains a ", te::expr_kind_name(e.kind()), " (lower the schedule first)"));
      return {llvm::PoisonValue::get(reg_type(e.dtype())), false};
    default:
      return emit_binary(e.kind(), *e.as<te::BinaryNode>());
  }
}

llvm::Value* Emitter::emit_scalar(const te::Expr& e) {
  Val v = emit(e);
  if (v.vec) {
    fail(str_cat("needs a lane-invariant value but '", te::to_string(e),
                 "' differs across vector lanes"));
    return b_.CreateExtractElement(v.v, uint64_t{0});
  }
  return v.v;
}

std::optional<Val> Emitter::emit_lane_compare(ExprKind k, const te::BinaryNode& n) {
  if (lanes_ == 0 || is_float(n.a.dtype()) || n.a.dtype() == DType::boolean ||
      is_unsigned(n.a.dtype()))
    return std::nullopt;
  if (k != ExprKind::LT && k != ExprKind::LE && k != ExprKind::GT && k != ExprKind::GE)
    return std::nullopt;
  // d(lane) = a - b must vary only through the vectorized variable, by +-1 per lane.
  te::Expr d = te::simplify(te::cast(DType::i64, n.a) - te::cast(DType::i64, n.b));
  for (const te::VarNode* v : varying_) {
    if (v != vec_var_.get() && te::uses_var(d, v)) return std::nullopt;
  }
  const std::optional<int64_t> step =
      te::as_const_int(te::simplify(te::substitute(d, {{vec_var_.get(), vec_var_ + 1}}) - d));
  if (!step || (*step != 1 && *step != -1)) return std::nullopt;
  // With d0 = d(lane 0), every condition is `lane < t` or its negation.
  llvm::Value* d0 = emit_scalar(te::simplify(te::substitute(d, {{vec_var_.get(), vec_base_}})));
  llvm::Type* i64 = d0->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i64, v); };
  llvm::Value* t = nullptr;
  bool negate = false;
  if (*step == 1) {
    t = (k == ExprKind::LT || k == ExprKind::GE) ? b_.CreateNeg(d0) : b_.CreateSub(c(1), d0);
    negate = k == ExprKind::GT || k == ExprKind::GE;
  } else {
    t = (k == ExprKind::LT || k == ExprKind::GE) ? b_.CreateAdd(d0, c(1)) : d0;
    negate = k == ExprKind::LT || k == ExprKind::LE;
  }
  t = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax,
                               b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, t, c(lanes_)), c(0));
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx_);
  std::vector<llvm::Constant*> ids;
  for (int l = 0; l < lanes_; ++l) ids.push_back(llvm::ConstantInt::get(i32, l));
  llvm::Value* below = b_.CreateICmpSLT(llvm::ConstantVector::get(ids),
                                        b_.CreateVectorSplat(lanes_, b_.CreateTrunc(t, i32)));
  return Val{negate ? b_.CreateNot(below) : below, true};
}

Val Emitter::emit_binary(ExprKind k, const te::BinaryNode& n) {
  if (std::optional<Val> lane = emit_lane_compare(k, n)) return *lane;
  Val a = emit(n.a), b = emit(n.b);
  const bool vec = a.vec || b.vec;
  llvm::Value* x = vec ? broadcast(a) : a.v;
  llvm::Value* y = vec ? broadcast(b) : b.v;
  const DType t = n.a.dtype();
  const bool fl = is_float(t);
  const bool boolean = t == DType::boolean;
  // Booleans and unsigned integers compare, divide and take min/max without sign.
  const bool uns = boolean || is_unsigned(t);
  llvm::Value* r = nullptr;
  switch (k) {
    case ExprKind::Add:
      r = fl ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y);
      break;
    case ExprKind::Sub:
      r = fl ? b_.CreateFSub(x, y) : b_.CreateSub(x, y);
      break;
    case ExprKind::Mul:
      r = fl ? b_.CreateFMul(x, y) : b_.CreateMul(x, y);
      break;
    case ExprKind::Div:
      r = fl ? b_.CreateFDiv(x, y) : uns ? uint_div(x, y, false) : int_div(x, y, n.b, false);
      break;
    case ExprKind::Mod:
      r = fl ? b_.CreateFRem(x, y) : uns ? uint_div(x, y, true) : int_mod(x, y, n.b, false);
      break;
    case ExprKind::FloorDiv:
      r = fl ? b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(x, y))
             : uns ? uint_div(x, y, false)
                   : int_div(x, y, n.b, true);
      break;
    case ExprKind::FloorMod:
      if (fl) {
        llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(x, y));
        r = b_.CreateFSub(x, b_.CreateFMul(q, y));
      } else {
        r = uns ? uint_div(x, y, true) : int_mod(x, y, n.b, true);
      }
      break;
    case ExprKind::Min:
    case ExprKind::Max:
      if (fl) {
        // NaN-propagating min/max (LLVM 16 cannot select llvm.minimum/maximum on x86): the
        // ordered comparison picks a number, a NaN operand makes the result NaN.
        llvm::Value* pick = k == ExprKind::Min ? b_.CreateFCmpOLT(x, y) : b_.CreateFCmpOGT(x, y);
        r = b_.CreateSelect(b_.CreateFCmpUNO(x, y), b_.CreateFAdd(x, y),
                            b_.CreateSelect(pick, x, y));
      } else if (boolean) {
        r = k == ExprKind::Min ? b_.CreateAnd(x, y) : b_.CreateOr(x, y);
      } else {
        const bool min = k == ExprKind::Min;
        r = b_.CreateBinaryIntrinsic(uns   ? (min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax)
                                     : min ? llvm::Intrinsic::smin
                                           : llvm::Intrinsic::smax,
                                     x, y);
      }
      break;
    case ExprKind::EQ:
      r = fl ? b_.CreateFCmpOEQ(x, y) : b_.CreateICmpEQ(x, y);
      break;
    case ExprKind::NE:
      r = fl ? b_.CreateFCmpUNE(x, y) : b_.CreateICmpNE(x, y);
      break;
    case ExprKind::LT:
      r = fl ? b_.CreateFCmpOLT(x, y) : uns ? b_.CreateICmpULT(x, y) : b_.CreateICmpSLT(x, y);
      break;
    case ExprKind::LE:
      r = fl ? b_.CreateFCmpOLE(x, y) : uns ? b_.CreateICmpULE(x, y) : b_.CreateICmpSLE(x, y);
      break;
    case ExprKind::GT:
      r = fl ? b_.CreateFCmpOGT(x, y) : uns ? b_.CreateICmpUGT(x, y) : b_.CreateICmpSGT(x, y);
      break;
    case ExprKind::GE:
      r = fl ? b_.CreateFCmpOGE(x, y) : uns ? b_.CreateICmpUGE(x, y) : b_.CreateICmpSGE(x, y);
      break;
    case ExprKind::And:
      r = b_.CreateAnd(x, y);
      break;
    case ExprKind::Or:
      r = b_.CreateOr(x, y);
      break;
    default:
      fail(str_cat("cannot emit ", te::expr_kind_name(k)));
      r = llvm::PoisonValue::get(x->getType());
  }
  return {r, vec};
}

llvm::Value* Emitter::int_div(llvm::Value* a, llvm::Value* b, const te::Expr& divisor, bool floor) {
  llvm::Type* ty = a->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(ty, v, true); };
  if (const auto* imm = divisor.as<te::IntImmNode>()) {
    // Division by 0 is defined as 0 here; by -1 it is negation (no overflow trap).
    if (imm->value == 0) return c(0);
    if (imm->value == -1) return b_.CreateNeg(a);
    llvm::Value* q = b_.CreateSDiv(a, b);
    if (!floor) return q;
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, c(0)),
                     imm->value > 0 ? b_.CreateICmpSLT(r, c(0)) : b_.CreateICmpSGT(r, c(0)));
    return b_.CreateSub(q, b_.CreateZExt(adjust, ty));
  }
  llvm::Value* zero = b_.CreateICmpEQ(b, c(0));
  llvm::Value* minus_one = b_.CreateICmpEQ(b, c(-1));
  llvm::Value* safe = b_.CreateSelect(b_.CreateOr(zero, minus_one), c(1), b);
  llvm::Value* q = b_.CreateSDiv(a, safe);
  if (floor) {
    llvm::Value* r = b_.CreateSRem(a, safe);
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, c(0)),
                     b_.CreateICmpNE(b_.CreateICmpSLT(r, c(0)), b_.CreateICmpSLT(safe, c(0))));
    q = b_.CreateSub(q, b_.CreateZExt(adjust, ty));
  }
  q = b_.CreateSelect(minus_one, b_.CreateNeg(a), q);
  return b_.CreateSelect(zero, c(0), q);
}

llvm::Value* Emitter::uint_div(llvm::Value* a, llvm::Value* b, bool remainder) {
  // Division by 0 is defined as 0 here (quotient and remainder), as for signed integers.
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* by_zero = b_.CreateICmpEQ(b, zero);
  llvm::Value* safe = b_.CreateSelect(by_zero, llvm::ConstantInt::get(a->getType(), 1), b);
  llvm::Value* r = remainder ? b_.CreateURem(a, safe) : b_.CreateUDiv(a, safe);
  return b_.CreateSelect(by_zero, zero, r);
}

llvm::Value* Emitter::int_mod(llvm::Value* a, llvm::Value* b, const te::Expr& divisor, bool floor) {
  llvm::Type* ty = a->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(ty, v, true); };
  if (const auto* imm = divisor.as<te::IntImmNode>()) {
    if (imm->value == 0 || imm->value == 1 || imm->value == -1) return c(0);
    llvm::Value* r = b_.CreateSRem(a, b);
    if (!floor) return r;
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, c(0)),
                     imm->value > 0 ? b_.CreateICmpSLT(r, c(0)) : b_.CreateICmpSGT(r, c(0)));
    return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
  }
  llvm::Value* trivial = b_.CreateOr(b_.CreateICmpEQ(b, c(0)), b_.CreateICmpEQ(b, c(-1)));
  llvm::Value* safe = b_.CreateSelect(trivial, c(1), b);
  llvm::Value* r = b_.CreateSRem(a, safe);
  if (floor) {
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, c(0)),
                     b_.CreateICmpNE(b_.CreateICmpSLT(r, c(0)), b_.CreateICmpSLT(safe, c(0))));
    r = b_.CreateSelect(adjust, b_.CreateAdd(r, safe), r);
  }
  return b_.CreateSelect(trivial, c(0), r);
}

Val Emitter::emit_select(const te::SelectNode& n) {
  Val c = emit(n.cond), t = emit(n.true_value), f = emit(n.false_value);
  const bool vec = c.vec || t.vec || f.vec;
  llvm::Value* tv = vec ? broadcast(t) : t.v;
  llvm::Value* fv = vec ? broadcast(f) : f.v;
  return {b_.CreateSelect(c.v, tv, fv), vec};
}

Val Emitter::emit_cast(DType to, const te::Expr& value) {
  Val v = emit(value);
  return {convert(v.v, value.dtype(), to), v.vec};
}

llvm::Value* Emitter::convert(llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  auto like = [&](llvm::Type* scalar) -> llvm::Type* {
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
      return llvm::FixedVectorType::get(scalar, vt->getNumElements());
    }
    return scalar;
  };
  llvm::Type* i32 = like(llvm::Type::getInt32Ty(ctx_));
  if (from == DType::bf16) {
    // bf16 is the top half of an f32.
    llvm::Value* bits = b_.CreateShl(b_.CreateZExt(v, i32), 16);
    v = b_.CreateBitCast(bits, like(reg_type(DType::f32)));
    return convert(v, DType::f32, to);
  }
  if (to == DType::bf16) {
    llvm::Value* f = convert(v, from, DType::f32);
    llvm::Value* bits = b_.CreateBitCast(f, i32);
    llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), llvm::ConstantInt::get(i32, 1));
    llvm::Value* rounded =
        b_.CreateAdd(bits, b_.CreateAdd(lsb, llvm::ConstantInt::get(i32, 0x7fff)));
    llvm::Value* r = b_.CreateTrunc(b_.CreateLShr(rounded, 16), like(reg_type(DType::bf16)));
    llvm::Value* nan = b_.CreateFCmpUNO(f, f);
    return b_.CreateSelect(nan, llvm::ConstantInt::get(r->getType(), 0x7fc0), r);
  }
  llvm::Type* dst = like(reg_type(to));
  const bool from_f = is_float(from), to_f = is_float(to);
  if (!from_f && !to_f) {
    if (to == DType::boolean) return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    // Widening zero-extends booleans and unsigned sources, sign-extends signed ones.
    if (from == DType::boolean || is_unsigned(from)) return b_.CreateZExtOrTrunc(v, dst);
    return b_.CreateSExtOrTrunc(v, dst);
  }
  if (!from_f && to_f)
    return from == DType::boolean || is_unsigned(from) ? b_.CreateUIToFP(v, dst)
                                                       : b_.CreateSIToFP(v, dst);
  if (from_f && !to_f) {
    if (to == DType::boolean)
      return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return float_to_int(v, to, dst);
  }
  return b_.CreateFPCast(v, dst);
}

Val Emitter::emit_load(const te::LoadNode& n) {
  return load_buffer(n.buffer, n.indices);
}

}  // namespace collage::codegen::detail
