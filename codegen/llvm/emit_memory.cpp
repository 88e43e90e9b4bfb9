// Buffer access: flat indices, classification of vector accesses (lane-invariant, contiguous,
// strided, gather/scatter), masked loads and stores, and the in-memory form of bool.
#include <set>

#include "codegen/llvm/emitter.h"
#include "core/str_cat.h"

namespace collage::codegen::detail {

namespace {
class VarCollector : public te::ExprVisitor {
 public:
  std::set<const te::VarNode*> vars;

 protected:
  void visit_Var(const te::VarNode& n, const te::Expr&) override { vars.insert(&n); }
};
}  // namespace

te::Expr Emitter::flat_index(const te::Buffer& b, const std::vector<te::Expr>& indices) const {
  te::Expr flat = te::make_int(DType::i64, 0);
  int64_t stride = 1;
  for (int d = static_cast<int>(indices.size()) - 1; d >= 0; --d) {
    te::Expr idx = indices[d].dtype() == DType::i64 ? indices[d] : te::cast(DType::i64, indices[d]);
    flat = flat + idx * te::make_int(DType::i64, stride);
    stride *= b.shape()[d];
  }
  return te::simplify(flat);
}

Emitter::Access Emitter::classify(const te::Expr& flat, int64_t* stride) const {
  if (lanes_ == 0) return Access::uniform;
  VarCollector c;
  c.visit(flat);
  bool varying = false, other_varying = false;
  for (const te::VarNode* v : c.vars) {
    if (!varying_.count(v)) continue;
    varying = true;
    if (v != vec_var_.get()) other_varying = true;
  }
  if (!varying) return Access::uniform;
  if (other_varying) return Access::gather;
  // The distance between neighbouring lanes' elements.
  te::Expr next = te::substitute(flat, {{vec_var_.get(), vec_var_ + 1}});
  const std::optional<int64_t> distance = te::as_const_int(te::simplify(next - flat));
  if (!distance) return Access::gather;
  if (*distance == 1) return Access::contiguous;
  if (stride) *stride = *distance;
  return Access::strided;
}

llvm::Value* Emitter::buffer_base(const te::Buffer& b) {
  auto it = buffers_.find(b.get());
  if (it == buffers_.end()) {
    fail(str_cat("uses buffer '", b.name(), "' outside its allocation"));
    return llvm::PoisonValue::get(llvm::PointerType::getUnqual(ctx_));
  }
  return it->second;
}

llvm::Value* Emitter::element_ptr(const te::Buffer& b, llvm::Value* flat) {
  return b_.CreateInBoundsGEP(mem_type(b.dtype()), buffer_base(b), flat);
}

llvm::Value* Emitter::lane0_ptr(const te::Buffer& b, const te::Expr& flat) {
  te::Expr first = te::simplify(te::substitute(flat, {{vec_var_.get(), vec_base_}}));
  return element_ptr(b, emit_scalar(first));
}

llvm::Value* Emitter::vector_ptrs(const te::Buffer& b, const te::Expr& flat) {
  llvm::Value* idx = broadcast(emit(flat));
  return b_.CreateGEP(mem_type(b.dtype()), buffer_base(b), idx);
}

llvm::Value* Emitter::lane_ptr(const te::Buffer& b, llvm::Value* lane0, int64_t stride,
                               unsigned lane) {
  return b_.CreateInBoundsGEP(mem_type(b.dtype()), lane0,
                              b_.getInt64(stride * static_cast<int64_t>(lane)));
}

llvm::Value* Emitter::to_memory(llvm::Value* v, DType t) {
  if (t != DType::boolean) return v;
  llvm::Type* i8 = llvm::Type::getInt8Ty(ctx_);
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
    return b_.CreateZExt(v, llvm::FixedVectorType::get(i8, vt->getNumElements()));
  }
  return b_.CreateZExt(v, i8);
}

llvm::Value* Emitter::from_memory(llvm::Value* v, DType t) {
  if (t != DType::boolean) return v;
  return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
}

Val Emitter::load_buffer(const te::Buffer& b, const std::vector<te::Expr>& indices) {
  if (indices.size() != b.shape().size()) {
    fail(str_cat("reads buffer '", b.name(), "' with ", indices.size(), " indices but it has rank ",
                 b.shape().size()));
    return {llvm::PoisonValue::get(reg_type(b.dtype())), false};
  }
  const te::Expr flat = flat_index(b, indices);
  llvm::Type* mt = mem_type(b.dtype());
  const llvm::Align align(dtype_size(b.dtype()));
  int64_t stride = 0;
  Access access = classify(flat, &stride);
  // Masked, a strided access is a gather (lanes past the mask must not be read).
  if (access == Access::strided && mask_) access = Access::gather;
  switch (access) {
    case Access::uniform: {
      llvm::Value* v = b_.CreateAlignedLoad(mt, element_ptr(b, emit_scalar(flat)), align);
      return {from_memory(v, b.dtype()), false};
    }
    case Access::strided: {
      // One scalar load a lane at a constant offset from lane 0: a gather's vector of addresses
      // would be computed and taken apart lane by lane (AVX2 without fast gathers), three times
      // the instructions of a transpose's reads.
      llvm::Value* lane0 = lane0_ptr(b, flat);
      llvm::Value* v = llvm::PoisonValue::get(with_lanes(mt));
      for (unsigned k = 0; k < static_cast<unsigned>(lanes_); ++k)
        v = b_.CreateInsertElement(
            v, b_.CreateAlignedLoad(mt, lane_ptr(b, lane0, stride, k), align), k);
      return {from_memory(v, b.dtype()), true};
    }
    case Access::contiguous: {
      llvm::Type* vt = with_lanes(mt);
      llvm::Value* ptr = lane0_ptr(b, flat);
      llvm::Value* v = mask_ ? static_cast<llvm::Value*>(b_.CreateMaskedLoad(
                                   vt, ptr, align, mask_, llvm::Constant::getNullValue(vt)))
                             : b_.CreateAlignedLoad(vt, ptr, align);
      return {from_memory(v, b.dtype()), true};
    }
    case Access::gather: {
      llvm::Type* vt = with_lanes(mt);
      llvm::Value* mask = mask_ ? mask_ : broadcast({make_bool(true), false});
      llvm::Value* v = b_.CreateMaskedGather(vt, vector_ptrs(b, flat), align, mask,
                                             llvm::Constant::getNullValue(vt));
      return {from_memory(v, b.dtype()), true};
    }
  }
  return {nullptr, false};
}

void Emitter::store_buffer(const te::Buffer& b, const std::vector<te::Expr>& indices, Val value) {
  if (indices.size() != b.shape().size()) {
    fail(str_cat("writes buffer '", b.name(), "' with ", indices.size(),
                 " indices but it has rank ", b.shape().size()));
    return;
  }
  const te::Expr flat = flat_index(b, indices);
  const llvm::Align align(dtype_size(b.dtype()));
  int64_t stride = 0;
  Access access = classify(flat, &stride);
  if (access == Access::strided && mask_) access = Access::gather;
  switch (access) {
    case Access::strided: {
      // Lane by lane, in lane order (as a scatter writes lanes that meet at one element).
      llvm::Value* v = to_memory(broadcast(value), b.dtype());
      llvm::Value* lane0 = lane0_ptr(b, flat);
      for (unsigned k = 0; k < static_cast<unsigned>(lanes_); ++k)
        b_.CreateAlignedStore(b_.CreateExtractElement(v, k), lane_ptr(b, lane0, stride, k), align);
      return;
    }
    case Access::uniform: {
      if (value.vec) {
        fail(str_cat(
            "vectorized loop stores a value that differs across lanes to one element of buffer '",
            b.name(), "'"));
        return;
      }
      llvm::Value* ptr = element_ptr(b, emit_scalar(flat));
      llvm::Value* v = to_memory(value.v, b.dtype());
      when_any_lane([&] { b_.CreateAlignedStore(v, ptr, align); });
      return;
    }
    case Access::contiguous: {
      llvm::Value* v = to_memory(broadcast(value), b.dtype());
      llvm::Value* ptr = lane0_ptr(b, flat);
      if (mask_) {
        b_.CreateMaskedStore(v, ptr, align, mask_);
      } else {
        b_.CreateAlignedStore(v, ptr, align);
      }
      return;
    }
    case Access::gather: {
      llvm::Value* v = to_memory(broadcast(value), b.dtype());
      llvm::Value* mask = mask_ ? mask_ : broadcast({make_bool(true), false});
      b_.CreateMaskedScatter(v, vector_ptrs(b, flat), align, mask);
      return;
    }
  }
}

}  // namespace collage::codegen::detail
