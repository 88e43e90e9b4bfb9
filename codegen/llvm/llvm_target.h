// LLVM-side target helpers: target machines for a TargetSpec and the optimisation pipeline.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "collage/target.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace collage::codegen::detail {

// Registers LLVM's targets (idempotent).
void initialize_llvm();

// A target machine for `spec` producing position-independent code at -O3 codegen level.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> make_target_machine(const TargetSpec& spec);

// Runs the O3 module pipeline (tuned for `tm`) over `m`.
void optimize_module(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace collage::codegen::detail
