// The cuda module's kernel: one GPU program, run as a single task (the GPU parallelizes it); the
// C entry points (no C++ exception leaves them) are the shared ones of ../common/unit_module.h.
#include "cuda_module.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "../common/unit_module.h"
#include "program_runner.h"

namespace collage::rt_cuda {
namespace {

// Bytes of a dense tensor of `d`, or an error.
std::string tensor_bytes(const collage_tensor_desc_t& d, const std::string& what, uint64_t* out) {
  const size_t element = collage_dtype_size(d.dtype);
  if (element == 0 || d.dtype == COLLAGE_DTYPE_STRING)
    return what + " has element type " + std::to_string(d.dtype) +
           ", which a GPU program cannot hold";
  if (d.rank < 0 || (d.rank > 0 && d.shape == nullptr)) return what + " has no shape";
  uint64_t n = element;
  for (int32_t i = 0; i < d.rank; ++i) {
    if (d.shape[i] < 0) return what + " has an unknown dimension";
    if (d.shape[i] > 0 && n > (uint64_t{1} << 50) / static_cast<uint64_t>(d.shape[i]))
      return what + " is too large";
    n *= static_cast<uint64_t>(d.shape[i]);
  }
  *out = n;
  return "";
}

class GpuProgramKernel {
 public:
  explicit GpuProgramKernel(std::unique_ptr<ProgramRunner> runner) : runner_(std::move(runner)) {}
  int64_t units() const { return 1; }
  void run(void* const* args, int64_t, int64_t) const {
    if (std::string e = runner_->run(args); !e.empty()) throw std::runtime_error(e);
  }

 private:
  std::unique_ptr<ProgramRunner> runner_;  // runs are serialized inside
};

std::string create_kernel(const collage_kernel_desc_t& desc, GpuProgramKernel*& out) {
  if (std::string(desc.entry) != kEntryProgram)
    return "unknown kernel entry '" + std::string(desc.entry) + "' (the cuda module runs '" +
           kEntryProgram + "')";
  GpuProgram program;
  if (std::string e = decode_program(desc.params, desc.params_size, &program); !e.empty()) return e;
  std::vector<uint64_t> arg_bytes(desc.num_args), constant_bytes(desc.num_constants);
  for (int32_t i = 0; i < desc.num_args; ++i)
    if (std::string e = tensor_bytes(desc.args[i], "argument " + std::to_string(i), &arg_bytes[i]);
        !e.empty())
      return e;
  for (int32_t i = 0; i < desc.num_constants; ++i)
    if (std::string e = tensor_bytes(desc.constant_descs[i], "constant " + std::to_string(i),
                                     &constant_bytes[i]);
        !e.empty())
      return e;
  std::vector<const void*> constants(desc.constants, desc.constants + desc.num_constants);
  std::unique_ptr<ProgramRunner> runner;
  if (std::string e = ProgramRunner::create(std::move(program), arg_bytes, desc.num_inputs,
                                            constants, constant_bytes, &runner);
      !e.empty())
    return e;
  out = new GpuProgramKernel(std::move(runner));
  return "";
}

// One task: a GPU program is a single stream of work.
using Module = rt_common::UnitModule<GpuProgramKernel, create_kernel, 1>;

}  // namespace

const collage_rt_module_v1_t* module_table() {
  static constexpr collage_rt_module_v1_t kModule = Module::table(kModuleName, kModuleVersion);
  return &kModule;
}

}  // namespace collage::rt_cuda
