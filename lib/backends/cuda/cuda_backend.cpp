// The cuda backend: candidates (chains of the nodes it runs), build() through the cuda runtime
// module's code (linked in), so what a compile measures is what an artifact runs.
#include "backends/common/module_kernel.h"
#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/cuda_fingerprint.h"
#include "collage/backends/cuda.h"
#include "core/str_cat.h"
#include "cuda_chains.h"
#include "cuda_lowering.h"
#include "cuda_module.h"

namespace collage {
namespace {

class CudaBackend : public Backend {
 public:
  CudaBackend(std::string version, int arch)
      : Backend(std::string(kCudaBackend), DeviceKind::cuda, std::move(version)), arch_(arch) {
    add_pattern_rule("cuda.chain",
                     [](const Graph& g, const GraphReachability&, const RuleOptions& options) {
                       return cuda_backend::chains(g, options.max_depth);
                     });
  }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    absl::StatusOr<cuda_backend::LoweredProgram> lowered =
        cuda_backend::lower_group(group, /*compile=*/true, arch_);
    if (!lowered.ok()) return lowered.status();
    KernelRecord record{std::string(kCudaBackend), rt_cuda::kEntryProgram,
                        rt_cuda::encode_program(lowered->program), std::move(lowered->constants)};
    return make_module_kernel(rt_cuda::module_table(), std::move(record), group);
  }

 private:
  int arch_;  // the device's compute capability, what the generated kernels are compiled for
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> make_cuda_backend() {
  absl::StatusOr<codegen::cuda::DeviceInfo> device = codegen::cuda::probe_cuda_device();
  if (!device.ok())
    return absl::FailedPreconditionError(
        str_cat("no usable CUDA device: ", device.status().message()));
  // The device and the libraries are part of every cost the backend's kernels are measured at.
  return std::make_unique<CudaBackend>(
      str_cat(rt_cuda::kModuleVersion, " ", codegen::cuda::cuda_fingerprint().to_string()),
      device->compute_capability);
}

absl::Status register_cuda_backend(BackendRegistry& registry) {
  absl::StatusOr<std::unique_ptr<Backend>> b = make_cuda_backend();
  if (!b.ok()) {
    registry.add_unavailable(std::string(kCudaBackend), std::string(b.status().message()));
    return absl::OkStatus();
  }
  return registry.add(std::move(*b));
}

}  // namespace collage
