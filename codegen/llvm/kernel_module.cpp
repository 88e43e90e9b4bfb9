// Kernel modules: emits every PrimFunc, verifies and optimises the module, and produces machine
// code (object or assembly) from it.
#include "codegen/llvm/kernel_module.h"

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/llvm_target.h"
#include "core/str_cat.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace collage::codegen::detail {

absl::StatusOr<std::unique_ptr<llvm::Module>> build_kernel_module(
    llvm::LLVMContext& ctx, const std::vector<te::PrimFunc>& funcs, const TargetSpec& target,
    llvm::TargetMachine& tm) {
  auto m = std::make_unique<llvm::Module>("collage_kernels", ctx);
  m->setTargetTriple(target.triple);
  m->setDataLayout(tm.createDataLayout());
  Emitter emitter(*m, target);
  for (const te::PrimFunc& f : funcs) {
    if (absl::Status s = emitter.emit_function(f); !s.ok()) return s;
  }
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(*m, &os))
    return absl::InternalError(str_cat("generated invalid LLVM IR: ", os.str()));
  optimize_module(*m, tm);
  return m;
}

absl::StatusOr<std::string> emit_machine_code(const llvm::Module& m, llvm::TargetMachine& tm,
                                              bool assembly) {
  // Code generation passes modify the module they run on: work on a copy.
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(m);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr,
                             assembly ? llvm::CGFT_AssemblyFile : llvm::CGFT_ObjectFile)) {
    return absl::InternalError(str_cat("LLVM cannot emit ", assembly ? "assembly" : "object code",
                                       " for ", tm.getTargetTriple().str()));
  }
  pm.run(*copy);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace collage::codegen::detail
