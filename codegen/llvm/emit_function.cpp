// Kernel functions: the ABI wrapper `void name(void* const* args, int32_t task_id, int32_t
// task_count)` around an always-inlined body whose buffer parameters are noalias, and the choice
// of the loop that is split into tasks.
#include "codegen/llvm/emitter.h"
#include "core/str_cat.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace collage::codegen::detail {

namespace {

class ParallelLoops : public te::IRVisitor {
 public:
  std::vector<const te::ForNode*> loops;

 protected:
  void visit_For(const te::ForNode& n, const te::Stmt& s) override {
    if (n.for_kind == te::ForKind::parallel) loops.push_back(&n);
    te::IRVisitor::visit_For(n, s);
  }
};

// The statement reached from the top through single-statement sequences and lets.
const te::StmtNode* outermost(const te::Stmt& body) {
  te::Stmt s = body;
  for (;;) {
    if (const auto* seq = s.as<te::SeqNode>(); seq && seq->stmts.size() == 1) {
      s = seq->stmts[0];
    } else if (const auto* let = s.as<te::LetNode>()) {
      s = let->body;
    } else {
      return s.get();
    }
  }
}

}  // namespace

absl::Status Emitter::emit_function(const te::PrimFunc& f) {
  func_name_ = f.name;
  status_ = absl::OkStatus();
  if (absl::Status s = te::verify(f); !s.ok()) return s;
  if (module_.getFunction(f.name))
    return absl::InvalidArgumentError(str_cat("kernel '", f.name, "' is defined twice"));

  ParallelLoops pl;
  pl.visit(f.body);
  task_loop_ = nullptr;
  if (pl.loops.size() > 1) {
    return absl::InvalidArgumentError(
        str_cat("kernel '", f.name, "' has ", pl.loops.size(),
                " parallel loops; a kernel splits exactly one loop into tasks"));
  }
  if (pl.loops.size() == 1) {
    if (outermost(f.body) != pl.loops[0]) {
      return absl::InvalidArgumentError(
          str_cat("kernel '", f.name, "': parallel loop '", pl.loops[0]->var.name(),
                  "' must be the outermost statement (code outside it would run in "
                  "every task)"));
    }
    task_loop_ = pl.loops[0];
  }

  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx_);
  llvm::Type* i32 = llvm::Type::getInt32Ty(ctx_);
  llvm::Type* void_ty = llvm::Type::getVoidTy(ctx_);

  // The body: one noalias pointer per buffer parameter.
  std::vector<llvm::Type*> params(f.params.size(), ptr);
  params.push_back(i32);
  params.push_back(i32);
  llvm::Function* impl =
      llvm::Function::Create(llvm::FunctionType::get(void_ty, params, false),
                             llvm::Function::InternalLinkage, f.name + ".impl", module_);
  for (size_t i = 0; i < f.params.size(); ++i) {
    impl->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
    impl->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoCapture);
  }
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  // The wrapper with the kernel ABI.
  llvm::Function* wrapper =
      llvm::Function::Create(llvm::FunctionType::get(void_ty, {ptr, i32, i32}, false),
                             llvm::Function::ExternalLinkage, f.name, module_);
  for (llvm::Function* fn : {impl, wrapper}) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr("target-cpu", target_.cpu);
    fn->addFnAttr("target-features", target_.features);
    if (target_.vector_bytes() == 64) {
      fn->addFnAttr("prefer-vector-width", "512");
      fn->addFnAttr("min-legal-vector-width", "512");
    }
  }

  fn_ = impl;
  entry_ = llvm::BasicBlock::Create(ctx_, "entry", impl);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx_, "start", impl);
  b_.SetInsertPoint(start);
  buffers_.clear();
  vars_.clear();
  varying_.clear();
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Argument* a = impl->getArg(static_cast<unsigned>(i));
    a->setName(f.params[i].name());
    buffers_[f.params[i].get()] = a;
  }
  task_id_ = impl->getArg(static_cast<unsigned>(f.params.size()));
  task_count_ = impl->getArg(static_cast<unsigned>(f.params.size() + 1));
  task_id_->setName("task_id");
  task_count_->setName("task_count");
  if (!task_loop_) {
    // Without a parallel loop all work is task 0's.
    llvm::BasicBlock* work = llvm::BasicBlock::Create(ctx_, "work", impl);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "other_task", impl);
    b_.CreateCondBr(b_.CreateICmpEQ(task_id_, llvm::ConstantInt::get(i32, 0)), work, done);
    b_.SetInsertPoint(done);
    b_.CreateRetVoid();
    b_.SetInsertPoint(work);
  }
  find_rolled_loops(f.body);
  emit(f.body);
  b_.CreateRetVoid();
  b_.SetInsertPoint(entry_);
  b_.CreateBr(start);

  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
  std::vector<llvm::Value*> call_args;
  llvm::Argument* args = wrapper->getArg(0);
  args->setName("args");
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, args, i);
    call_args.push_back(b_.CreateAlignedLoad(ptr, slot, llvm::Align(8), f.params[i].name()));
  }
  call_args.push_back(wrapper->getArg(1));
  call_args.push_back(wrapper->getArg(2));
  b_.CreateCall(impl, call_args);
  b_.CreateRetVoid();

  if (status_.ok()) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyFunction(*impl, &os) || llvm::verifyFunction(*wrapper, &os)) {
      status_ = absl::InternalError(
          str_cat("kernel '", f.name, "': generated invalid LLVM IR: ", os.str()));
    }
  }
  if (!status_.ok()) {
    wrapper->eraseFromParent();
    impl->eraseFromParent();
  }
  fn_ = nullptr;
  return status_;
}

}  // namespace collage::codegen::detail
