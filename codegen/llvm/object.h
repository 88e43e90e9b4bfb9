// Ahead-of-time compilation of loop-IR kernels: relocatable object files for a target, assembly
// listings, and linking objects into a shared library with the system linker.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/target.h"
#include "collage/loop_ir.h"

namespace collage::codegen {

// The bytes of a relocatable, position-independent object file holding every kernel of `funcs`
// (see jit.h for the kernel ABI), optimised at O3 for `target`.
absl::StatusOr<std::string> emit_object(const std::vector<te::PrimFunc>& funcs,
                                        const TargetSpec& target);
// The same code as assembly text.
absl::StatusOr<std::string> emit_assembly(const std::vector<te::PrimFunc>& funcs,
                                          const TargetSpec& target);
// The optimised LLVM IR as text.
absl::StatusOr<std::string> emit_llvm_ir(const std::vector<te::PrimFunc>& funcs,
                                         const TargetSpec& target);

struct LinkOptions {
  // The linker program (looked up in PATH). Empty: "cc" for the host's triple, otherwise the lld
  // of the LLVM collage was built with (default_cross_linker()).
  // A program whose name contains "ld" gets linker arguments; others (cc, gcc, clang) get
  // compiler-driver arguments plus -lm.
  std::string linker;
};

// Links object files into the shared library `output`. Errors name the linker and carry its
// diagnostics.
// The linker for targets other than the host: ld.lld from the LLVM collage was built with
// (Debian's lld-16: /usr/lib/llvm-16/bin/ld.lld) when it is there, else "ld.lld" from PATH.
std::string default_cross_linker();

absl::Status link_shared_library(const std::vector<std::string>& objects, const std::string& output,
                                 const TargetSpec& target, const LinkOptions& options = {});

}  // namespace collage::codegen
