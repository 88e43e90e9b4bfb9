// Saturating float-to-integer conversions: NaN gives 0 and out-of-range values clamp (no
// poison). LLVM's fptosi.sat/fptoui.sat intrinsics are expanded one lane at a time on x86 (a
// scalar convert, two compares and two conditional moves per element), which made
// QuantizeLinear and Cast to 8-bit types ten times slower than a plain vector conversion. For
// results that fit an i32 the clamp is done in float with compares and selects, then converted
// with a plain fptosi, which vectorizes (vcvttps2dq).
#include <cstdint>
#include <optional>
#include <utility>

#include "codegen/llvm/emitter.h"
#include "llvm/IR/Intrinsics.h"

namespace collage::codegen::detail {
namespace {

// The range of `t` when every value of it is an i32; nullopt otherwise (u32 and 64-bit types).
std::optional<std::pair<double, double>> i32_range(DType t) {
  switch (t) {
    case DType::i8: return std::pair{-128.0, 127.0};
    case DType::u8: return std::pair{0.0, 255.0};
    case DType::i16: return std::pair{-32768.0, 32767.0};
    case DType::u16: return std::pair{0.0, 65535.0};
    case DType::i32: return std::pair{-2147483648.0, 2147483647.0};
    default: return std::nullopt;
  }
}

}  // namespace

llvm::Value* Emitter::float_to_int(llvm::Value* v, DType to, llvm::Type* dst) {
  const auto range = i32_range(to);
  llvm::Type* ft = v->getType();
  if (!range || !ft->getScalarType()->isFloatTy())
    return b_.CreateIntrinsic(
        is_unsigned(to) ? llvm::Intrinsic::fptoui_sat : llvm::Intrinsic::fptosi_sat, {dst, ft},
        {v});
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx_);
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(ft))
    i32 = llvm::FixedVectorType::get(i32, vt->getNumElements());
  // 2^31 - 1 is no float: the largest float below 2^31 bounds the conversion, and a value above
  // it (2^31 or more) is replaced by INT32_MAX afterwards.
  const double hi = to == DType::i32 ? 2147483520.0 : range->second;
  llvm::Value* lo_v = llvm::ConstantFP::get(ft, range->first);
  llvm::Value* hi_v = llvm::ConstantFP::get(ft, hi);
  llvm::Value* x = b_.CreateSelect(b_.CreateFCmpUNO(v, v), llvm::ConstantFP::get(ft, 0.0), v);
  x = b_.CreateSelect(b_.CreateFCmpOLT(x, lo_v), lo_v, x);
  llvm::Value* over = b_.CreateFCmpOGT(x, hi_v);
  x = b_.CreateSelect(over, hi_v, x);
  llvm::Value* r = b_.CreateFPToSI(x, i32);
  if (to == DType::i32)
    return b_.CreateSelect(over, llvm::ConstantInt::get(i32, INT32_MAX), r);
  return b_.CreateTrunc(r, dst);
}

}  // namespace collage::codegen::detail
