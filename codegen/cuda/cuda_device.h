// A CUDA device reached through the driver API loaded at run time (dlopen of libcuda.so.1), so
// that programs link and run on machines without a driver or a GPU: presence checks report why
// no device is usable, and kernels compiled by compile_cuda() run on host buffers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/cuda/nvrtc_compiler.h"

namespace collage::codegen::cuda {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int compute_capability = 0;  // major * 10 + minor (90 for sm_90)
  int driver_version = 0;      // cuDriverGetVersion, e.g. 13000
  size_t total_memory = 0;     // bytes
};

// A host array a kernel parameter is copied from (and back to, after the launch).
struct HostBuffer {
  void* data = nullptr;
  size_t bytes = 0;
};

// A primary context on one device. Not copyable; the context is released on destruction.
class CudaDevice {
 public:
  // Opens device `ordinal`. FailedPrecondition, saying why, when the driver library cannot be
  // loaded, cuInit fails (no GPU, driver mismatch) or there is no such device.
  static absl::StatusOr<std::unique_ptr<CudaDevice>> open(int ordinal = 0);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceInfo& info() const;

  // Copies every argument to device memory, launches `kernel` with its launch configuration,
  // waits, and copies every argument back. `args` follow the kernel's parameters in order.
  // Errors: InvalidArgument for arguments whose count or sizes differ from the kernel's
  // parameters, an image compiled for another architecture family or a kernel name the image
  // lacks; Internal with the driver's message for failed launches.
  absl::Status run(const CompiledCuda& kernel, const std::vector<HostBuffer>& args);

  // Times `kernel` on device-resident arguments: copies them to the device once, launches
  // `warmup` untimed times, then takes `repeats` samples of `launches_per_sample` back-to-back
  // launches between two CUDA events, and copies every argument back after the last launch (so
  // its results can be checked). Returns each sample's milliseconds per launch, in order. Several
  // launches per sample keep the GPU's queue full, so that a short kernel's time is not the
  // host's launch latency. Errors as run(), and InvalidArgument for `repeats` or
  // `launches_per_sample` < 1 or `warmup` < 0.
  absl::StatusOr<std::vector<double>> time(const CompiledCuda& kernel,
                                           const std::vector<HostBuffer>& args, int warmup,
                                           int repeats, int launches_per_sample = 1);

 private:
  struct Impl;
  // Loads the module, copies `args` to the device, calls `launches` (with a function launching
  // the kernel once, asynchronously), waits, and copies every argument back.
  absl::Status with_resident_args(
      const CompiledCuda& kernel, const std::vector<HostBuffer>& args,
      const std::function<absl::Status(const std::function<absl::Status()>& launch)>& launches);
  explicit CudaDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The first device's description, or the reason there is none (as CudaDevice::open).
absl::StatusOr<DeviceInfo> probe_cuda_device();

// The architecture to compile for: device 0's compute capability when there is a usable device,
// else 90 (sm_90, H100/H200), the default of NvrtcOptions.
int preferred_cuda_arch();

}  // namespace collage::codegen::cuda
