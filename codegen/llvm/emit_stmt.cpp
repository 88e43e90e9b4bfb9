// Statement emission: serial, unrolled, vectorized and task-split parallel loops, stores, lets,
// conditionals (branches, or lane masks inside vectorized loops) and local allocations.
#include <optional>

#include "codegen/llvm/emitter.h"
#include "core/str_cat.h"
#include "kernel_workspace.h"

namespace collage::codegen::detail {

namespace {
// Allocations up to this size live on the stack (in the kernel's entry block); larger ones in the
// loader's per-thread workspace (kernel_workspace.h), so deep kernels stay within worker threads'
// stacks.
constexpr int64_t kMaxStackBytes = 128 * 1024;
constexpr int64_t kMaxLanes = 1024;
constexpr int64_t kMaxUnroll = 4096;

// Loop metadata that keeps LLVM from unrolling a loop.
llvm::MDNode* unroll_disabled(llvm::LLVMContext& ctx) {
  llvm::MDNode* disable =
      llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")});
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx, {nullptr, disable});
  loop->replaceOperandWith(0, loop);
  return loop;
}
}  // namespace

void Emitter::find_rolled_loops(const te::Stmt& body) {
  // Of the loops around a loop the schedule unrolled (a register tile), LLVM may unroll the
  // innermost (a tile's steps over a vector of input channels): the outer ones stay loops. LLVM
  // unrolled a reduction over up to 32 channels whole around 8-12 accumulators, hoisted every
  // step's weight vectors out of the loop over positions and spilled them and the accumulators
  // (EfficientNet-B0's 16 > 96 expansion: twice the time). One pass, bottom up: a loop is kept
  // rolled when its body holds a serial loop around an unrolled one.
  struct Finder : te::IRVisitor {
    std::set<const te::StmtNode*>* rolled = nullptr;
    bool unrolled = false;  // what was visited holds an unrolled loop
    bool around = false;    // ... a serial loop around an unrolled one
    void visit_For(const te::ForNode& n, const te::Stmt& s) override {
      const bool outer_unrolled = unrolled, outer_around = around;
      unrolled = around = false;
      te::IRVisitor::visit_For(n, s);
      const bool loop = n.for_kind == te::ForKind::serial || n.for_kind == te::ForKind::parallel;
      if (loop && around) rolled->insert(n.body.get());
      around = around || (n.for_kind == te::ForKind::serial && unrolled) || outer_around;
      unrolled = unrolled || n.for_kind == te::ForKind::unrolled || outer_unrolled;
    }
  } finder;
  rolled_bodies_.clear();
  finder.rolled = &rolled_bodies_;
  finder.visit(body);
}

void Emitter::when_any_lane(const std::function<void()>& emit_body) {
  if (!mask_) {
    emit_body();
    return;
  }
  llvm::Value* any = b_.CreateOrReduce(mask_);
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "lanes", fn_);
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "lanes.end", fn_);
  b_.CreateCondBr(any, then_bb, merge);
  b_.SetInsertPoint(then_bb);
  emit_body();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
}

void Emitter::emit(const te::Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case te::StmtKind::For:
      emit_for(*s.as<te::ForNode>());
      return;
    case te::StmtKind::Store: {
      const auto* n = s.as<te::StoreNode>();
      store_buffer(n->buffer, n->indices, emit(n->value));
      return;
    }
    case te::StmtKind::Let: {
      const auto* n = s.as<te::LetNode>();
      Val v = emit(n->value);
      auto old = vars_.find(n->var.get());
      std::optional<Val> saved;
      if (old != vars_.end()) saved = old->second;
      vars_[n->var.get()] = v;
      if (v.vec) varying_.insert(n->var.get());
      emit(n->body);
      varying_.erase(n->var.get());
      if (saved) {
        vars_[n->var.get()] = *saved;
        if (saved->vec) varying_.insert(n->var.get());
      } else {
        vars_.erase(n->var.get());
      }
      return;
    }
    case te::StmtKind::IfThenElse:
      emit_if(*s.as<te::IfThenElseNode>());
      return;
    case te::StmtKind::Allocate:
      emit_allocate(*s.as<te::AllocateNode>());
      return;
    case te::StmtKind::Evaluate:
      emit(s.as<te::EvaluateNode>()->value);
      return;
    case te::StmtKind::Seq:
      for (const te::Stmt& c : s.as<te::SeqNode>()->stmts) emit(c);
      return;
  }
}

void Emitter::emit_for(const te::ForNode& n) {
  const std::string& name = n.var.name();
  switch (n.for_kind) {
    case te::ForKind::thread_bound:
      fail(str_cat("loop '", name, "' is bound to ", n.thread_tag,
                   "; the CPU code generator cannot run GPU-bound loops"));
      return;
    case te::ForKind::vectorized:
      emit_vector_loop(n);
      return;
    case te::ForKind::unrolled: {
      const auto* ext = n.extent.as<te::IntImmNode>();
      if (!ext || ext->value > kMaxUnroll) {
        fail(str_cat("unrolled loop '", name, "' needs a constant extent of at most ", kMaxUnroll));
        return;
      }
      llvm::Value* mn = emit_scalar(n.min);
      for (int64_t i = 0; i < ext->value; ++i) {
        vars_[n.var.get()] = {b_.CreateAdd(mn, llvm::ConstantInt::get(mn->getType(), i)), false};
        emit(n.body);
      }
      vars_.erase(n.var.get());
      return;
    }
    case te::ForKind::parallel:
      if (&n == task_loop_) {
        // Task task_id runs the task_id-th of task_count contiguous chunks.
        llvm::Type* i64 = llvm::Type::getInt64Ty(ctx_);
        llvm::Value* mn = emit_scalar(n.min);
        llvm::Value* ext = emit_scalar(n.extent);
        llvm::Value* tasks = b_.CreateBinaryIntrinsic(
            llvm::Intrinsic::smax, b_.CreateSExt(task_count_, i64), llvm::ConstantInt::get(i64, 1));
        llvm::Value* tid = b_.CreateSExt(task_id_, i64);
        llvm::Value* chunk = b_.CreateSDiv(
            b_.CreateAdd(ext, b_.CreateSub(tasks, llvm::ConstantInt::get(i64, 1))), tasks);
        llvm::Value* begin =
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateMul(tid, chunk), ext);
        llvm::Value* end =
            b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(begin, chunk), ext);
        emit_serial_loop(n.var, b_.CreateAdd(mn, begin), b_.CreateAdd(mn, end), n.body);
        return;
      }
      [[fallthrough]];
    case te::ForKind::serial: {
      llvm::Value* mn = emit_scalar(n.min);
      llvm::Value* ext = emit_scalar(n.extent);
      emit_serial_loop(n.var, mn, b_.CreateAdd(mn, ext), n.body);
      return;
    }
  }
}

void Emitter::emit_serial_loop(const te::Var& var, llvm::Value* begin, llvm::Value* end,
                               const te::Stmt& body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx_, var.name() + ".loop", fn_);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx_, var.name() + ".body", fn_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_, var.name() + ".end", fn_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  llvm::PHINode* phi = b_.CreatePHI(begin->getType(), 2, var.name());
  phi->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(phi, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  vars_[var.get()] = {phi, false};
  emit(body);
  llvm::Value* next = b_.CreateNSWAdd(phi, llvm::ConstantInt::get(phi->getType(), 1));
  phi->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateBr(header);
  if (rolled_bodies_.count(body.get()))
    latch->setMetadata(llvm::LLVMContext::MD_loop, unroll_disabled(ctx_));
  b_.SetInsertPoint(exit);
  vars_.erase(var.get());
}

void Emitter::emit_vector_loop(const te::ForNode& n) {
  const std::string& name = n.var.name();
  if (lanes_ != 0) {
    fail(str_cat("vectorized loop '", name, "' is nested in vectorized loop '", vec_var_.name(),
                 "'"));
    return;
  }
  const auto* ext = n.extent.as<te::IntImmNode>();
  if (!ext || ext->value < 1 || ext->value > kMaxLanes) {
    fail(str_cat("vectorized loop '", name, "' needs a constant extent between 1 and ", kMaxLanes));
    return;
  }
  llvm::Value* mn = emit_scalar(n.min);
  lanes_ = static_cast<int>(ext->value);
  std::vector<llvm::Constant*> steps;
  for (int i = 0; i < lanes_; ++i) steps.push_back(llvm::ConstantInt::get(mn->getType(), i));
  llvm::Value* lane_values =
      b_.CreateAdd(b_.CreateVectorSplat(lanes_, mn), llvm::ConstantVector::get(steps));
  vec_var_ = n.var;
  vec_base_ = n.min;
  vars_[n.var.get()] = {lane_values, true};
  varying_.insert(n.var.get());
  emit(n.body);
  varying_.erase(n.var.get());
  vars_.erase(n.var.get());
  vec_var_ = te::Var();
  vec_base_ = te::Expr();
  lanes_ = 0;
}

void Emitter::emit_if(const te::IfThenElseNode& n) {
  Val c = emit(n.cond);
  if (c.vec) {
    // Lane-varying condition: both branches run under complementary masks.
    llvm::Value* saved = mask_;
    mask_ = saved ? b_.CreateAnd(saved, c.v) : c.v;
    when_any_lane([&] { emit(n.then_case); });
    if (n.else_case.defined()) {
      llvm::Value* inv = b_.CreateNot(c.v);
      mask_ = saved ? b_.CreateAnd(saved, inv) : inv;
      when_any_lane([&] { emit(n.else_case); });
    }
    mask_ = saved;
    return;
  }
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn_);
  llvm::BasicBlock* else_bb =
      n.else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
  llvm::BasicBlock* merge = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  b_.CreateCondBr(c.v, then_bb, else_bb ? else_bb : merge);
  b_.SetInsertPoint(then_bb);
  emit(n.then_case);
  b_.CreateBr(merge);
  if (else_bb) {
    b_.SetInsertPoint(else_bb);
    emit(n.else_case);
    b_.CreateBr(merge);
  }
  b_.SetInsertPoint(merge);
}

void Emitter::emit_allocate(const te::AllocateNode& n) {
  const te::Buffer& buf = n.buffer;
  if (lanes_ != 0) {
    fail(str_cat("allocates '", buf.name(), "' inside vectorized loop '", vec_var_.name(), "'"));
    return;
  }
  const int64_t numel = shape_numel(buf.shape());
  const int64_t bytes = numel * static_cast<int64_t>(dtype_size(buf.dtype()));
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx_);
  llvm::Value* ptr;
  bool heap = bytes > kMaxStackBytes;
  if (!heap) {
    // Entry-block allocas are what SROA/mem2reg promote to registers.
    llvm::IRBuilder<> entry(entry_, entry_->begin());
    llvm::AllocaInst* a =
        entry.CreateAlloca(mem_type(buf.dtype()),
                           llvm::ConstantInt::get(i64, std::max<int64_t>(numel, 1)), buf.name());
    a->setAlignment(llvm::Align(64));
    ptr = a;
  } else {
    llvm::Type* ptr_type = llvm::PointerType::getUnqual(ctx_);
    llvm::FunctionType* alloc_type = llvm::FunctionType::get(ptr_type, {i64}, false);
    llvm::Value* alloc_fn =
        b_.CreateLoad(ptr_type, workspace_hook(rt::kWorkspaceAllocHook, "malloc", alloc_type));
    ptr = b_.CreateCall(alloc_type, alloc_fn, {llvm::ConstantInt::get(i64, bytes)}, buf.name());
  }
  buffers_[buf.get()] = ptr;
  emit(n.body);
  buffers_.erase(buf.get());
  if (heap) {
    llvm::Type* ptr_type = llvm::PointerType::getUnqual(ctx_);
    llvm::FunctionType* free_type =
        llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr_type}, false);
    llvm::Value* free_fn =
        b_.CreateLoad(ptr_type, workspace_hook(rt::kWorkspaceFreeHook, "free", free_type));
    b_.CreateCall(free_type, free_fn, {ptr});
  }
}

llvm::GlobalVariable* Emitter::workspace_hook(const char* name, const char* fallback,
                                              llvm::FunctionType* type) {
  if (llvm::GlobalVariable* hook = module_.getNamedGlobal(name)) return hook;
  // Weak: every object of an artifact's library defines it, the linker keeps one. Not constant:
  // the loader overwrites it (kernel_workspace.h).
  auto* initial =
      llvm::cast<llvm::Constant>(module_.getOrInsertFunction(fallback, type).getCallee());
  return new llvm::GlobalVariable(module_, llvm::PointerType::getUnqual(ctx_), /*isConstant=*/false,
                                  llvm::GlobalValue::WeakAnyLinkage, initial, name);
}

}  // namespace collage::codegen::detail
