// A loaded artifact: its bytes, decoded plan, runtime modules, native code, kernel instances,
// task pool and profiler. After loading it is immutable except for its arena cache and profiler,
// both internally locked, so any number of threads may run it at once.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdlib>
#include <map>
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
#include "tensor_check.h"

namespace collage::rt {

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
  // creates every kernel (of every plan, for a dynamic-batch artifact). Errors name the file
  // part, module or kernel at fault.
  static Status load(std::unique_ptr<Blob> blob, const LoadOptions& options,
                     std::unique_ptr<LoadedModule>* out);
  ~LoadedModule();

  // The root plan: the only one, or a dynamic-batch artifact's largest batch (its variants and
  // range in Program::variants and Program::dynamic_batch).
  const Program& program() const { return program_; }

  // Runs the model: one DLTensor per graph input and output, in order, on the CPU, dense
  // row-major (strides null or compact), of exactly the plan's dtype and shape, except that a
  // dynamic-batch artifact takes any batch of its range on the batched axes (the same for every
  // input and output): the plan of that batch runs, or, when it has none, the next larger one
  // on the inputs padded with zero rows, its outputs' first rows copied out. Outputs are written
  // into the caller's buffers, which must not overlap the inputs. Errors name the tensor
  // (Code::invalid_argument) or the kernel that failed.
  Status run(const DLTensor* inputs, int32_t num_inputs, const DLTensor* outputs,
             int32_t num_outputs) const;

  // A run whose outputs the module allocates, each with the shape it comes out with (a
  // dynamic-batch artifact's with the inputs' batch, a data-dependent one with its size of the
  // run). Checks as run() does.
  // A string output's elements point into `strings`, the bytes of the run, which every string
  // output of the run shares.
  struct Output {
    int32_t dtype = 0;
    std::vector<int64_t> shape;
    std::unique_ptr<uint8_t[]> data;
    std::shared_ptr<StringBytes> strings;
  };
  Status run_outputs(const DLTensor* inputs, int32_t num_inputs,
                     std::vector<Output>* outputs) const;

  // The modules' notices about the kernels they created, one per line ("" for none).
  const std::string& load_notes() const { return load_notes_; }

  // The scheduler of the root plan (its name and costs).
  const Scheduler& scheduler() const;

  void set_profiling(bool on) { profiler_.set_enabled(on); }
  // Chrome-trace JSON of the runs since profiling was turned on.
  std::string profile_json() const { return profiler_.json(); }

 private:
  // One plan's kernels, how it runs, and its arenas (reused across runs).
  struct PlanRun {
    const Program* program = nullptr;
    std::vector<std::unique_ptr<KernelInstance>> kernels;
    std::unique_ptr<Scheduler> scheduler;
    ExecPlan plan;
    mutable std::mutex arena_mu;
    mutable std::vector<uint8_t*> free_arenas;

    ~PlanRun() {
      for (uint8_t* a : free_arenas) std::free(a);
    }
    // An arena of the plan's arena_bytes (+64 so zero-byte tensors at the end have valid
    // pointers); null when out of memory.
    uint8_t* acquire_arena() const {
      {
        std::lock_guard<std::mutex> lock(arena_mu);
        if (!free_arenas.empty()) {
          uint8_t* a = free_arenas.back();
          free_arenas.pop_back();
          return a;
        }
      }
      // aligned_alloc wants a multiple of the alignment; the plan's size need not be one.
      return static_cast<uint8_t*>(
          std::aligned_alloc(64, (program->arena_bytes + 127) / 64 * 64));
    }
    void release_arena(uint8_t* arena) const {
      std::lock_guard<std::mutex> lock(arena_mu);
      free_arenas.push_back(arena);
    }
  };

  LoadedModule() = default;
  Status build(const LoadOptions& options);
  Status build_run(const Program& program, const LoadOptions& options, PlanRun* run);
  // The plan that runs a batch of `batch`: the one compiled for it, or the next larger one.
  const PlanRun& run_for(int64_t batch) const;
  // Runs `r` on checked buffers: in[i] and out[i] hold exactly its tensors (an output of
  // dynamic storage none: its value is left in `dynamic`, which may be null when the caller
  // needs none of them). The bytes of the strings kernels write go to `strings` (when null, to
  // bytes freed at the end of the run).
  Status execute(const PlanRun& r, const std::vector<void*>& in, const std::vector<void*>& out,
                 DynamicValues* dynamic = nullptr, StringBytes* strings = nullptr) const;
  // The batch of a dynamic-batch artifact's run, read off its batched inputs (each must have
  // the same, inside the range; errors name the input).
  Status batch_of(const DLTensor* inputs, int64_t* batch) const;
  Status run_batch(const DLTensor* inputs, const DLTensor* outputs) const;
  // Refuses a plan with an output that cannot go to a caller's buffer (a data-dependent shape,
  // strings), naming it and pointing at collage_module_run_outputs.
  static Status check_caller_outputs(const Program& p);

  std::unique_ptr<Blob> blob_;
  Program program_;
  // Declared before the kernels so that they are destroyed after them.
  std::map<std::string, RuntimeModule> modules_;  // by name (native: no table)
  std::unique_ptr<SharedLibrary> native_;
  std::unique_ptr<TaskPool> pool_;
  std::vector<std::unique_ptr<PlanRun>> runs_;  // variants by ascending batch, then the root
  mutable Profiler profiler_;
  std::string load_notes_;
};

}  // namespace collage::rt
