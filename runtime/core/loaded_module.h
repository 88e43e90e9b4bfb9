// A loaded artifact: its bytes, decoded plan, runtime modules, native code, kernel instances,
// task pool and profiler. After loading it is immutable except for its arena cache and profiler,
// both internally locked, so any number of threads may run it at once.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "blob.h"
#include "executor.h"
#include "kernels.h"
#include "module_loader.h"
#include "profiler.h"
#include "program.h"
#include "task_pool.h"

namespace collage::rt {

// The DLPack type of a collage_dtype_t (bool: {kDLUInt, 8, 1}).
DLDataType dlpack_dtype(int32_t dtype);

// Which scheduler runs the plan: `automatic` takes the one the compiler measured faster (the
// artifact's wave schedule records it; sequential without a schedule). `invalid`: the caller
// asked for both (refused by the C API before loading).
enum class ExecutorChoice : uint8_t { automatic, sequential, waves, invalid };

struct LoadOptions {
  int32_t num_threads = 0;  // threads for a kernel's tasks, the caller included; 0: every core
  ExecutorChoice executor = ExecutorChoice::automatic;
  std::string module_dir;   // searched first for libcollage_rt_<name>.so; empty: not used
  // Kernels whose precompiled form does not fit the library are refused, not compiled again.
  bool no_recompile = false;
};

class LoadedModule {
 public:
  // Decodes and checks `blob`, opens the runtime modules and native code the plan needs, and
  // creates every kernel. Errors name the file part, module or kernel at fault.
  static Status load(std::unique_ptr<Blob> blob, const LoadOptions& options,
                     std::unique_ptr<LoadedModule>* out);
  ~LoadedModule();

  const Program& program() const { return program_; }

  // Runs the model: one DLTensor per graph input and output, in order, on the CPU, dense
  // row-major (strides null or compact), of exactly the plan's dtype and shape. Outputs are
  // written into the caller's buffers, which must not overlap the inputs. Errors name the
  // tensor (Code::invalid_argument) or the kernel that failed.
  Status run(const DLTensor* inputs, int32_t num_inputs, const DLTensor* outputs,
             int32_t num_outputs) const;

  // The modules' notices about the kernels they created, one per line ("" for none).
  const std::string& load_notes() const { return load_notes_; }

  // The scheduler runs use (its name and costs).
  const Scheduler& scheduler() const { return *scheduler_; }

  void set_profiling(bool on) { profiler_.set_enabled(on); }
  // Chrome-trace JSON of the runs since profiling was turned on.
  std::string profile_json() const { return profiler_.json(program_); }

 private:
  LoadedModule() = default;
  Status build(const LoadOptions& options);
  // An arena of program_.arena_bytes (+64 so zero-byte tensors at the end have valid pointers),
  // reused across runs.
  uint8_t* acquire_arena() const;
  void release_arena(uint8_t* arena) const;

  std::unique_ptr<Blob> blob_;
  Program program_;
  // Declared before the kernels so that they are destroyed after them.
  std::vector<RuntimeModule> modules_;  // per Program::modules entry (native: no table)
  std::unique_ptr<SharedLibrary> native_;
  std::vector<std::unique_ptr<KernelInstance>> kernels_;
  std::unique_ptr<TaskPool> pool_;
  std::unique_ptr<Scheduler> scheduler_;
  ExecPlan plan_;
  mutable std::mutex arena_mu_;
  mutable std::vector<uint8_t*> free_arenas_;
  mutable Profiler profiler_;
  std::string load_notes_;
};

}  // namespace collage::rt
