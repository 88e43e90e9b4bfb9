// Runs a GpuProgram on device 0: the arena, the stream, the constants uploaded once, the cubins
// loaded, the library handles (cuBLAS, cuDNN) made, and on each run the inputs copied in, the
// steps (or their CUDA graph) launched and the outputs copied out.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_program.h"

namespace collage::rt_cuda {

struct Driver;
class CublasGemms;
class CudnnConvolutions;

class ProgramRunner {
 public:
  // Checks `program` against the argument sizes (inputs then outputs, bytes) and the constants
  // (`constants[i]` of `constant_bytes[i]` bytes, read during the call only), then readies it on
  // device 0. Errors (returned, `*out` untouched): what check_program() finds, no driver or
  // device, out of device memory, a cubin the driver refuses (other architecture), a missing
  // kernel, cuBLAS or cuDNN not found or refusing a step.
  static std::string create(GpuProgram program, const std::vector<uint64_t>& arg_bytes,
                            int num_inputs, const std::vector<const void*>& constants,
                            const std::vector<uint64_t>& constant_bytes,
                            std::unique_ptr<ProgramRunner>* out);
  ~ProgramRunner();
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  // One run on host buffers (inputs then outputs, in the sizes given to create()). Runs of one
  // program are serialized (they share the arena). Empty on success.
  std::string run(void* const* args);

  // Times the steps alone (the graph where there is one), inputs left as they are in the arena:
  // `warmup` untimed runs, then `repeats` samples of `runs_per_sample` back-to-back runs between
  // two CUDA events; `*ms` gets each sample's milliseconds per run. Empty on success.
  std::string time_steps(int warmup, int repeats, int runs_per_sample, std::vector<double>* ms);

  // What was chosen: the device, whether the steps run as a CUDA graph, each convolution's
  // algorithm.
  std::string describe() const;

  // Whether the steps are replayed from a CUDA graph (known after the first run).
  bool uses_graph() const { return graph_exec_ != nullptr; }

 private:
  ProgramRunner() = default;
  std::string enqueue_steps();
  std::string launch_steps();  // the graph, capturing it first when asked for and not yet made
  std::string fail(const char* what, CUresult r) const;

  const Driver* d_ = nullptr;
  GpuProgram program_;
  std::vector<uint64_t> arg_bytes_;
  int num_inputs_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string device_name_;
  CUstream stream_ = nullptr;
  CUdeviceptr arena_ = 0;
  std::vector<CUmodule> modules_;
  std::vector<CUfunction> functions_;         // per step; null for library steps
  std::vector<size_t> conv_index_;            // per step: the convolution's index in convs_
  std::unique_ptr<CublasGemms> gemms_;        // when the program has a GEMM step
  std::unique_ptr<CudnnConvolutions> convs_;  // when it has a convolution step
  bool graph_tried_ = false;
  std::string graph_note_;  // why there is no graph, when capture failed
  CUgraphExec graph_exec_ = nullptr;
  std::mutex run_mutex_;
};

}  // namespace collage::rt_cuda
