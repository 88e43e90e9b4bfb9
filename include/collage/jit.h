// In-process compilation of loop-IR kernels with LLVM's ORC LLJIT.
//
// Kernel ABI (every generated kernel, JIT-compiled or in an object file):
//
//   void name(void* const* args, int32_t task_id, int32_t task_count);
//
// `args` holds one pointer per PrimFunc parameter, in parameter order, each to a dense row-major
// buffer of the parameter's shape and type (bool as one byte per element, f16/bf16 as 16-bit
// words; no alignment is required). Buffers must not overlap. The outermost loop marked
// `parallel` is split into task_count contiguous chunks of iterations and call `task_id` runs
// chunk task_id; a kernel without a parallel loop does all its work in task 0 and returns at once
// in the others. Calls for different task ids may run concurrently; running every task_id in
// [0, task_count) once computes the whole result, bit for bit the same for any task_count.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/target.h"
#include "collage/loop_ir.h"
#include "collage/thread_pool.h"

namespace collage::codegen {

using KernelFn = void (*)(void* const* args, int32_t task_id, int32_t task_count);

struct JitOptions {
  // CPU and features to compile for; the triple must be the host's. Default: TargetSpec::host().
  std::optional<TargetSpec> target;
  bool keep_llvm_ir = false;   // keep the optimised IR text (llvm_ir())
  bool keep_assembly = false;  // keep the assembly text (assembly())
  // Compile to a relocatable object (emit_object's bytes: what an artifact links) and load that
  // into the JIT, keeping its bytes (object()), instead of compiling in the JIT.
  bool keep_object = false;
};

// A set of compiled kernels. Owns the code: function pointers stay valid while it lives. Lookup
// and calls are thread-safe.
class JitModule {
 public:
  // Compiles all `funcs` into one module. Errors: InvalidArgument for kernels the CPU code
  // generator cannot compile (GPU-bound loops, a misplaced parallel loop, invalid loop IR),
  // Internal for LLVM failures.
  static absl::StatusOr<std::unique_ptr<JitModule>> compile(const std::vector<te::PrimFunc>& funcs,
                                                            const JitOptions& options = {});
  // Loads an object that emit_object or keep_object made for `target` (the host's triple) and
  // resolves the kernels `names` in it, keeping its bytes. Errors: InvalidArgument for a target of
  // another triple, Internal when LLVM cannot load the object or a name is missing.
  static absl::StatusOr<std::unique_ptr<JitModule>> load_object(
      std::string object, const std::vector<std::string>& names, const TargetSpec& target);
  ~JitModule();
  JitModule(const JitModule&) = delete;
  JitModule& operator=(const JitModule&) = delete;

  // The kernel called `name`; NotFound when this module has none.
  absl::StatusOr<KernelFn> lookup(const std::string& name) const;
  const TargetSpec& target() const;
  // Empty unless requested in the options.
  const std::string& llvm_ir() const;
  const std::string& assembly() const;
  // The object the module was loaded from (keep_object, load_object); empty otherwise.
  const std::string& object() const;

 private:
  struct Impl;
  explicit JitModule(std::unique_ptr<Impl> impl);
  // Adds `object` to impl's JIT and keeps its bytes.
  static absl::Status add_object(Impl& impl, std::string object);
  std::unique_ptr<Impl> impl_;
};

// The version of LLVM that compiles kernels ("16.0.6"): part of every compiled-code cache key.
const char* llvm_version();

// Whether generated code computes intrinsic `f` giving values of type `t`: the math intrinsics
// on f32 and f64 (f64 exp, log, tanh, erf and the trigonometric functions call libm), the bit
// operations on integers, reinterpret to any type but bool.
bool generates_intrinsic(te::Intrinsic f, DType t);

// Runs every task of a kernel: on `pool` when given (task_count tasks spread over its threads),
// else one after another on the calling thread.
void run_kernel(KernelFn fn, void* const* args, int task_count, ThreadPool* pool);

}  // namespace collage::codegen
