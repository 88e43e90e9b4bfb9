// Intrinsics on scalars and vectors. exp, log, tanh, erf and sigmoid on f32 are inline polynomial
// approximations (Cephes-style, about 1-2 ulp; erf to 3.8e-7 absolute) so that they vectorize
// instead of calling libm once per lane; on f64 they call libm, as the trigonometric and
// hyperbolic functions (rare in models) do; the rest map to LLVM intrinsics and instructions.
#include <cmath>
#include <limits>

#include "codegen/llvm/emitter.h"
#include "core/str_cat.h"
#include "collage/jit.h"

namespace collage::codegen {

bool generates_intrinsic(te::Intrinsic f, DType t) {
  if (t == DType::str || t == DType::boolean) return false;
  if (f == te::Intrinsic::reinterpret) return true;
  if (te::is_bit_intrinsic(f)) return !is_float(t);
  return t == DType::f32 || t == DType::f64;
}

namespace detail {

llvm::Value* Emitter::fconst(llvm::Value* like, double v) {
  return llvm::ConstantFP::get(like->getType(), v);
}

llvm::Value* Emitter::iconst(llvm::Value* like, int64_t v) {
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx_);
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(like->getType())) {
    return llvm::ConstantInt::get(llvm::FixedVectorType::get(i32, vt->getNumElements()), v, true);
  }
  return llvm::ConstantInt::get(i32, v, true);
}

// Horner evaluation: coeffs[0]*x^(n-1) + ... + coeffs[n-1].
llvm::Value* Emitter::poly(llvm::Value* x, std::initializer_list<double> coeffs) {
  llvm::Value* acc = nullptr;
  for (double c : coeffs)
    acc = acc ? b_.CreateFAdd(b_.CreateFMul(acc, x), fconst(x, c)) : fconst(x, c);
  return acc;
}

Emitter::ExpParts Emitter::exp_parts(llvm::Value* xc) {
  // exp(x) = 2^n * e^r with n = round(x / ln 2), |r| <= ln2 / 2.
  llvm::Value* n = b_.CreateUnaryIntrinsic(
      llvm::Intrinsic::floor,
      b_.CreateFAdd(b_.CreateFMul(xc, fconst(xc, 1.44269504088896341)), fconst(xc, 0.5)));
  llvm::Value* r = b_.CreateFSub(xc, b_.CreateFMul(n, fconst(xc, 0.693359375)));
  r = b_.CreateFSub(r, b_.CreateFMul(n, fconst(xc, -2.12194440e-4)));
  llvm::Value* p = poly(r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2,
                            1.6666665459E-1, 5.0000001201E-1});
  llvm::Value* y =
      b_.CreateFAdd(b_.CreateFAdd(b_.CreateFMul(p, b_.CreateFMul(r, r)), r), fconst(xc, 1.0));
  return {y, b_.CreateFPToSI(n, iconst(xc, 0)->getType())};
}

llvm::Value* Emitter::math_exp(llvm::Value* x) {
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value* hi = fconst(x, 88.72283935546875);
  llvm::Value* lo = fconst(x, -87.33654022216797);
  llvm::Value* xc = b_.CreateSelect(b_.CreateFCmpOGT(x, hi), hi, x);
  xc = b_.CreateSelect(b_.CreateFCmpOLT(xc, lo), lo, xc);
  const auto [y, ni] = exp_parts(xc);
  // 2^n in two factors so that n = 128 (x near the overflow bound) stays representable.
  llvm::Value* positive = b_.CreateICmpSGT(ni, iconst(x, 0));
  llvm::Value* e =
      b_.CreateSub(b_.CreateAdd(ni, iconst(x, 127)), b_.CreateZExt(positive, ni->getType()));
  llvm::Value* pow2 = b_.CreateBitCast(b_.CreateShl(e, iconst(x, 23)), x->getType());
  llvm::Value* res = b_.CreateFMul(b_.CreateFMul(y, pow2),
                                   b_.CreateSelect(positive, fconst(x, 2.0), fconst(x, 1.0)));
  res = b_.CreateSelect(b_.CreateFCmpOGT(x, hi), fconst(x, inf), res);
  res = b_.CreateSelect(b_.CreateFCmpOLT(x, lo), fconst(x, 0.0), res);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, res);
}

llvm::Value* Emitter::math_log(llvm::Value* x) {
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Type* it = iconst(x, 0)->getType();
  // Subnormal inputs are scaled into the normal range first.
  llvm::Value* sub = b_.CreateFCmpOLT(x, fconst(x, 1.17549435e-38));
  llvm::Value* xs = b_.CreateSelect(sub, b_.CreateFMul(x, fconst(x, 8388608.0)), x);
  llvm::Value* bits = b_.CreateBitCast(xs, it);
  llvm::Value* e = b_.CreateSub(b_.CreateLShr(bits, iconst(x, 23)), iconst(x, 126));
  e = b_.CreateSub(e, b_.CreateSelect(sub, iconst(x, 23), iconst(x, 0)));
  // Mantissa in [0.5, 1).
  llvm::Value* m = b_.CreateBitCast(
      b_.CreateOr(b_.CreateAnd(bits, iconst(x, 0x807fffff)), iconst(x, 0x3f000000)), x->getType());
  llvm::Value* small = b_.CreateFCmpOLT(m, fconst(x, 0.707106781186547524));
  e = b_.CreateSub(e, b_.CreateZExt(small, it));
  m = b_.CreateSelect(small, b_.CreateFAdd(m, m), m);
  m = b_.CreateFSub(m, fconst(x, 1.0));
  llvm::Value* ef = b_.CreateSIToFP(e, x->getType());
  llvm::Value* z = b_.CreateFMul(m, m);
  llvm::Value* p = poly(
      m, {7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1});
  llvm::Value* y = b_.CreateFMul(b_.CreateFMul(p, m), z);
  y = b_.CreateFAdd(y, b_.CreateFMul(ef, fconst(x, -2.12194440e-4)));
  y = b_.CreateFSub(y, b_.CreateFMul(z, fconst(x, 0.5)));
  llvm::Value* res = b_.CreateFAdd(b_.CreateFAdd(m, y), b_.CreateFMul(ef, fconst(x, 0.693359375)));
  res = b_.CreateSelect(b_.CreateFCmpOEQ(x, fconst(x, inf)), x, res);
  res = b_.CreateSelect(b_.CreateFCmpOEQ(x, fconst(x, 0.0)), fconst(x, -inf), res);
  return b_.CreateSelect(b_.CreateFCmpULT(x, fconst(x, 0.0)), fconst(x, std::nan("")), res);
}

llvm::Value* Emitter::math_tanh(llvm::Value* x) {
  llvm::Value* ax = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Small |x|: odd polynomial; elsewhere 1 - 2 / (exp(2|x|) + 1) with the sign of x.
  llvm::Value* z = b_.CreateFMul(x, x);
  llvm::Value* p = poly(z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2,
                            1.33314422036E-1, -3.33332819422E-1});
  llvm::Value* small = b_.CreateFAdd(b_.CreateFMul(b_.CreateFMul(p, z), x), x);
  llvm::Value* e = math_exp(b_.CreateFMul(ax, fconst(x, 2.0)));
  llvm::Value* large = b_.CreateFSub(
      fconst(x, 1.0), b_.CreateFDiv(fconst(x, 2.0), b_.CreateFAdd(e, fconst(x, 1.0))));
  large = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b_.CreateSelect(b_.CreateFCmpOLT(ax, fconst(x, 0.625)), small, large);
}

llvm::Value* Emitter::math_sigmoid(llvm::Value* x) {
  // 1 / (1 + e^-x) with e^-x reduced as math_exp does, on -x clamped to [-88, 88] so that 2^n is
  // one factor and no range check is needed: past -88 the sum is 1 (e^-88 is below half an ulp
  // of 1), past 88 the quotient is below 2^-126 and becomes 0. Fewer instructions than
  // math_exp's checked form: a Swish epilogue's sigmoid (EfficientNet's thin 1x1 convolutions)
  // cost more than the convolution.
  llvm::Value* t = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum,
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, b_.CreateFNeg(x), fconst(x, -88.0)),
      fconst(x, 88.0));
  const auto [y, ni] = exp_parts(t);
  llvm::Value* pow2 =
      b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(ni, iconst(x, 127)), iconst(x, 23)), x->getType());
  llvm::Value* s =
      b_.CreateFDiv(fconst(x, 1.0), b_.CreateFAdd(fconst(x, 1.0), b_.CreateFMul(y, pow2)));
  s = b_.CreateSelect(b_.CreateFCmpOLT(x, fconst(x, -88.0)), fconst(x, 0.0), s);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, s);
}

llvm::Value* Emitter::math_erf(llvm::Value* x) {
  // erf(x) = x P(x^2) / Q(x^2) on [-4, 4], a rational minimax fit (degrees 6 and 5 in x^2) whose
  // own error is 1.5e-9; evaluated in f32 it is within 3.8e-7 of erf (rounding near +-1) and
  // 2.6e-7 relative below 0.5. Outside [-4, 4], |erf| rounds to 1. One division and no exp: the
  // Abramowitz-Stegun form with exp(-x^2) it replaced (1.5e-7) took twice the instructions, and
  // GELU's erf after every expansion MatMul of a transformer or ConvNeXt block was as slow as the
  // MatMul.
  llvm::Value* xc = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum,
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, fconst(x, -4.0)), fconst(x, 4.0));
  llvm::Value* z = b_.CreateFMul(xc, xc);
  llvm::Value* p =
      poly(z, {-1.3666324072403313e-08, 4.7804524001549e-06, 0.00038268897333182395,
               0.00383951747789979, 0.054332517087459564, 0.184710294008255, 1.128379225730896});
  llvm::Value* q = poly(z, {6.40084472252056e-05, 0.0013095722533762455, 0.015453481115400791,
                            0.113826222717762, 0.49702879786491394, 1.0});
  llvm::Value* r = b_.CreateFDiv(b_.CreateFMul(xc, p), q);
  // R(4) rounds to 1.0000001: clamped, erf(+-inf) is +-1 exactly.
  r = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::minnum,
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, r, fconst(x, -1.0)), fconst(x, 1.0));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, r);
}

llvm::Value* Emitter::libm_call(const char* name, llvm::Value* x) {
  llvm::Type* scalar = x->getType()->getScalarType();
  const std::string fn_name = str_cat(name, scalar->isFloatTy() ? "f" : "");
  llvm::FunctionCallee fn =
      module_.getOrInsertFunction(fn_name, llvm::FunctionType::get(scalar, {scalar}, false));
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vt) return b_.CreateCall(fn, {x});
  llvm::Value* r = llvm::PoisonValue::get(vt);
  for (unsigned lane = 0; lane < vt->getNumElements(); ++lane)
    r = b_.CreateInsertElement(r, b_.CreateCall(fn, {b_.CreateExtractElement(x, lane)}), lane);
  return r;
}

llvm::Value* Emitter::shift(llvm::Value* a, llvm::Value* n, DType t, bool left) {
  llvm::Value* width = llvm::ConstantInt::get(a->getType(), a->getType()->getScalarSizeInBits());
  llvm::Value* r = left             ? b_.CreateShl(a, n)
                   : is_unsigned(t) ? b_.CreateLShr(a, n)
                                    : b_.CreateAShr(a, n);
  // LLVM leaves a shift by the width or more undefined; ONNX BitShift gives 0 (and the
  // reference does for any type).
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  return b_.CreateSelect(b_.CreateICmpUGE(n, width), zero, r);
}

llvm::Value* Emitter::emit_call(te::Intrinsic f, DType t, const std::vector<llvm::Value*>& args) {
  llvm::Value* x = args[0];
  if (t == DType::f64) {
    // The polynomials below are f32 accurate only: double precision calls libm.
    switch (f) {
      case te::Intrinsic::exp:
        return libm_call("exp", x);
      case te::Intrinsic::log:
        return libm_call("log", x);
      case te::Intrinsic::tanh:
        return libm_call("tanh", x);
      case te::Intrinsic::erf:
        return libm_call("erf", x);
      case te::Intrinsic::sigmoid:
        return b_.CreateFDiv(fconst(x, 1.0),
                             b_.CreateFAdd(fconst(x, 1.0), libm_call("exp", b_.CreateFNeg(x))));
      default:
        break;
    }
  }
  switch (f) {
    case te::Intrinsic::exp:
      return math_exp(x);
    case te::Intrinsic::log:
      return math_log(x);
    case te::Intrinsic::tanh:
      return math_tanh(x);
    case te::Intrinsic::erf:
      return math_erf(x);
    case te::Intrinsic::sqrt:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case te::Intrinsic::rsqrt:
      return b_.CreateFDiv(fconst(x, 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case te::Intrinsic::pow:
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, args[1]);
    case te::Intrinsic::fabs:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    case te::Intrinsic::sigmoid:
      return math_sigmoid(x);
    case te::Intrinsic::floor:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case te::Intrinsic::ceil:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case te::Intrinsic::round:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    case te::Intrinsic::sin:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x);
    case te::Intrinsic::cos:
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x);
    case te::Intrinsic::tan:
      return libm_call("tan", x);
    case te::Intrinsic::asin:
      return libm_call("asin", x);
    case te::Intrinsic::acos:
      return libm_call("acos", x);
    case te::Intrinsic::atan:
      return libm_call("atan", x);
    case te::Intrinsic::sinh:
      return libm_call("sinh", x);
    case te::Intrinsic::cosh:
      return libm_call("cosh", x);
    case te::Intrinsic::asinh:
      return libm_call("asinh", x);
    case te::Intrinsic::acosh:
      return libm_call("acosh", x);
    case te::Intrinsic::atanh:
      return libm_call("atanh", x);
    case te::Intrinsic::bit_and:
      return b_.CreateAnd(x, args[1]);
    case te::Intrinsic::bit_or:
      return b_.CreateOr(x, args[1]);
    case te::Intrinsic::bit_xor:
      return b_.CreateXor(x, args[1]);
    case te::Intrinsic::bit_not:
      return b_.CreateNot(x);
    case te::Intrinsic::shift_left:
      return shift(x, args[1], t, true);
    case te::Intrinsic::shift_right:
      return shift(x, args[1], t, false);
    case te::Intrinsic::reinterpret: {
      // As many lanes as the argument has (a scalar when it is lane-invariant).
      llvm::Type* to = reg_type(t);
      if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType()))
        to = llvm::FixedVectorType::get(to, vt->getNumElements());
      return b_.CreateBitCast(x, to);
    }
  }
  return x;
}

}  // namespace detail
}  // namespace collage::codegen
