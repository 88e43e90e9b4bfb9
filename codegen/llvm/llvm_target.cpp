// Target machines for a TargetSpec and the O3 optimisation pipeline.
#include "codegen/llvm/llvm_target.h"

#include <mutex>

#include "core/str_cat.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"

namespace collage::codegen::detail {

void initialize_llvm() {
  // LLVM's target registry is process-wide; registering is idempotent but not thread-safe.
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> make_target_machine(const TargetSpec& spec) {
  initialize_llvm();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(spec.triple, err);
  if (!target) {
    return absl::InvalidArgumentError(
        str_cat("no LLVM target for triple '", spec.triple, "': ", err));
  }
  llvm::TargetOptions opts;
  opts.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // fma where the IR allows contraction
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(spec.triple, spec.cpu, spec.features, opts, llvm::Reloc::PIC_,
                                  std::nullopt, llvm::CodeGenOpt::Aggressive));
  if (!tm)
    return absl::InvalidArgumentError(
        str_cat("cannot create a target machine for ", spec.to_string()));
  return tm;
}

void optimize_module(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // Vectorization is the schedule's decision (vectorized loops are emitted as vector code). LLVM's
  // own vectorizers stay off: they would compute some iterations of a loop in vector form and
  // others in a scalar remainder, with different rounding, so that a result would depend on how a
  // kernel's iterations are split into tasks.
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = false;
  pto.SLPVectorization = false;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
}

}  // namespace collage::codegen::detail
