// Building an optimised LLVM module from loop-IR kernels for a target.
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/target.h"
#include "collage/loop_ir.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace collage::codegen::detail {

// One module holding every kernel of `funcs` (kernel ABI functions named after each PrimFunc),
// verified and optimised at O3 for `tm`.
absl::StatusOr<std::unique_ptr<llvm::Module>> build_kernel_module(
    llvm::LLVMContext& ctx, const std::vector<te::PrimFunc>& funcs, const TargetSpec& target,
    llvm::TargetMachine& tm);

// Assembly or object code for a module (the module is left unchanged).
absl::StatusOr<std::string> emit_machine_code(const llvm::Module& m, llvm::TargetMachine& tm,
                                              bool assembly);

}  // namespace collage::codegen::detail
