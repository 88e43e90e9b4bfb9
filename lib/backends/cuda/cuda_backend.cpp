// The cuda backend: candidates (chains of the nodes it runs), build() through the cuda runtime
// module's code (linked in), so what a compile measures is what an artifact runs; the measured
// choice between cuDNN and generated depthwise convolutions.
#include <algorithm>
#include <optional>

#include "backends/common/module_kernel.h"
#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/cuda_fingerprint.h"
#include "collage/backends/cuda.h"
#include "core/str_cat.h"
#include "cuda_chains.h"
#include "cuda_lowering.h"
#include "cuda_module.h"
#include "program_runner.h"

namespace collage {
namespace {

// The measured choice between cuDNN and the generated kernel for a group's depthwise
// convolutions: {1 generated or 0 cuDNN, cuDNN ms, generated ms}.
constexpr std::string_view kDepthwiseChoice = "cuda-depthwise";

// Milliseconds per run of the steps of `lowered` (the median of 7 samples of 5 runs), its
// arguments those of `group`.
absl::StatusOr<double> time_steps(const cuda_backend::LoweredProgram& lowered, const Graph& group) {
  std::vector<uint64_t> arg_bytes, constant_bytes;
  for (const TensorType& t : group_argument_types(group)) arg_bytes.push_back(t.bytes());
  std::vector<const void*> constants;
  for (const Tensor& t : lowered.constants) {
    constants.push_back(t.raw());
    constant_bytes.push_back(t.bytes());
  }
  std::unique_ptr<rt_cuda::ProgramRunner> runner;
  std::string e = rt_cuda::ProgramRunner::create(lowered.program, arg_bytes,
                                                 static_cast<int>(group.inputs().size()), constants,
                                                 constant_bytes, &runner);
  std::vector<double> ms;
  if (e.empty()) e = runner->time_steps(3, 7, 5, &ms);
  if (!e.empty()) return absl::InternalError(str_cat("cuda: timing a group: ", e));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

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
                                                const BuildOptions& options) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    absl::StatusOr<cuda_backend::LoweredProgram> lowered =
        cuda_backend::lower_group(group, /*compile=*/true, arch_);
    if (!lowered.ok()) return lowered.status();
    if (!lowered->depthwise_key.empty())
      lowered = choose_depthwise(group, *std::move(lowered), options);
    KernelRecord record{std::string(kCudaBackend), rt_cuda::kEntryProgram,
                        rt_cuda::encode_program(lowered->program), std::move(lowered->constants)};
    return make_module_kernel(rt_cuda::module_table(), std::move(record), group);
  }

 private:
  // `library` (the group with cuDNN's depthwise convolutions) or the group with generated ones:
  // the choice remembered in options.choices (keyed by the device) under the convolutions and the
  // backend's version, else measured (both programs' steps timed) when options allow, else cuDNN.
  cuda_backend::LoweredProgram choose_depthwise(const Graph& group,
                                                cuda_backend::LoweredProgram library,
                                                const BuildOptions& options) const {
    const std::string key = str_cat(library.depthwise_key, "|", version());
    std::optional<bool> remembered;
    if (options.choices)
      if (auto v = options.choices->lookup(kDepthwiseChoice, key); v && v->size() == 3)
        remembered = (*v)[0] != 0;
    if (remembered == false || (!remembered && !options.measure_choices)) return library;
    absl::StatusOr<cuda_backend::LoweredProgram> generated =
        cuda_backend::lower_group(group, true, arch_, {.generated_depthwise = true});
    if (!generated.ok()) return library;
    if (remembered) return *std::move(generated);
    absl::StatusOr<double> library_ms = time_steps(library, group);
    absl::StatusOr<double> generated_ms = time_steps(*generated, group);
    if (!library_ms.ok() || !generated_ms.ok()) return library;
    const bool faster = *generated_ms < *library_ms;
    if (options.choices)
      options.choices->remember(kDepthwiseChoice, key,
                                {faster ? 1.0 : 0.0, *library_ms, *generated_ms});
    return faster ? *std::move(generated) : std::move(library);
  }

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
