// The device wrapper over the driver API, which the cuda runtime module loads at run time
// (runtime/modules/cuda/cuda_driver.h): a presence check, a test launch and event timing.
#include "codegen/cuda/cuda_device.h"

#include <cuda.h>

#include <algorithm>

#include "core/str_cat.h"
#include "cuda_driver.h"

namespace collage::codegen::cuda {

namespace {

using rt_cuda::Driver;

// Internal, naming the kernel, the driver call and the driver's message.
absl::Status driver_failure(const Driver& d, const CompiledCuda& kernel, const char* what,
                            CUresult r) {
  return absl::InternalError(str_cat("cuda kernel '", kernel.name, "': ", what, ": ", d.error(r)));
}

}  // namespace

struct CudaDevice::Impl {
  const Driver* driver = nullptr;
  DeviceInfo info;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

CudaDevice::CudaDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaDevice::~CudaDevice() {
  if (impl_->context) impl_->driver->ctx_release(impl_->device);
}

const DeviceInfo& CudaDevice::info() const {
  return impl_->info;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  auto impl = std::make_unique<Impl>();
  std::string why;
  impl->driver = rt_cuda::cuda_driver(&why);
  if (impl->driver == nullptr) return absl::FailedPreconditionError(why);
  const Driver& d = *impl->driver;
  int count = 0;
  if (CUresult r = d.device_count(&count); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(str_cat("cuDeviceGetCount failed: ", d.error(r)));
  }
  if (ordinal < 0 || ordinal >= count) {
    return absl::FailedPreconditionError(
        str_cat("no CUDA device ", ordinal, " (the driver reports ", count, ")"));
  }
  if (CUresult r = d.device_get(&impl->device, ordinal); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(str_cat("cuDeviceGet(", ordinal, "): ", d.error(r)));
  }
  DeviceInfo& info = impl->info;
  info.ordinal = ordinal;
  char name[256] = {};
  int major = 0, minor = 0;
  if (d.device_name(name, sizeof name, impl->device) == CUDA_SUCCESS) info.name = name;
  d.device_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, impl->device);
  d.device_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, impl->device);
  info.compute_capability = major * 10 + minor;
  d.driver_version(&info.driver_version);
  d.total_mem(&info.total_memory, impl->device);
  if (CUresult r = d.ctx_retain(&impl->context, impl->device); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(
        str_cat("cannot create a context on CUDA device ", ordinal, ": ", d.error(r)));
  }
  return std::unique_ptr<CudaDevice>(new CudaDevice(std::move(impl)));
}

absl::Status CudaDevice::run(const CompiledCuda& kernel, const std::vector<HostBuffer>& args) {
  return with_resident_args(kernel, args,
                            [](const std::function<absl::Status()>& launch) { return launch(); });
}

absl::StatusOr<std::vector<double>> CudaDevice::time(const CompiledCuda& kernel,
                                                     const std::vector<HostBuffer>& args,
                                                     int warmup, int repeats,
                                                     int launches_per_sample) {
  if (repeats < 1 || launches_per_sample < 1 || warmup < 0) {
    return absl::InvalidArgumentError(
        str_cat("cuda kernel '", kernel.name, "': timing needs repeats >= 1, launches_per_sample ",
                ">= 1 and warmup >= 0, not ", repeats, ", ", launches_per_sample, " and ", warmup));
  }
  const Driver& d = *impl_->driver;
  auto fail = [&](const char* what, CUresult r) { return driver_failure(d, kernel, what, r); };
  std::vector<double> ms;
  absl::Status s =
      with_resident_args(kernel, args, [&](const std::function<absl::Status()>& launch) {
        for (int i = 0; i < warmup; ++i) {
          if (absl::Status st = launch(); !st.ok()) return st;
        }
        CUevent start = nullptr, stop = nullptr;
        if (CUresult r = d.event_create(&start, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
          return fail("cuEventCreate", r);
        if (CUresult r = d.event_create(&stop, CU_EVENT_DEFAULT); r != CUDA_SUCCESS) {
          d.event_destroy(start);
          return fail("cuEventCreate", r);
        }
        absl::Status st = [&]() -> absl::Status {
          for (int i = 0; i < repeats; ++i) {
            if (CUresult r = d.event_record(start, nullptr); r != CUDA_SUCCESS)
              return fail("cuEventRecord", r);
            for (int j = 0; j < launches_per_sample; ++j) {
              if (absl::Status ls = launch(); !ls.ok()) return ls;
            }
            if (CUresult r = d.event_record(stop, nullptr); r != CUDA_SUCCESS)
              return fail("cuEventRecord", r);
            if (CUresult r = d.event_synchronize(stop); r != CUDA_SUCCESS)
              return fail("kernel execution", r);
            float elapsed = 0;
            if (CUresult r = d.event_elapsed(&elapsed, start, stop); r != CUDA_SUCCESS)
              return fail("cuEventElapsedTime", r);
            ms.push_back(static_cast<double>(elapsed) / launches_per_sample);
          }
          return absl::OkStatus();
        }();
        d.event_destroy(start);
        d.event_destroy(stop);
        return st;
      });
  if (!s.ok()) return s;
  return ms;
}

absl::Status CudaDevice::with_resident_args(
    const CompiledCuda& kernel, const std::vector<HostBuffer>& args,
    const std::function<absl::Status(const std::function<absl::Status()>& launch)>& launches) {
  const Driver& d = *impl_->driver;
  auto fail = [&](const char* what, CUresult r) { return driver_failure(d, kernel, what, r); };
  if (CUresult r = d.ctx_set_current(impl_->context); r != CUDA_SUCCESS) {
    return fail("cuCtxSetCurrent", r);
  }
  if (args.size() != kernel.params.size()) {
    return absl::InvalidArgumentError(str_cat("cuda kernel '", kernel.name, "': ", args.size(),
                                              " arguments for ", kernel.params.size(),
                                              " parameters"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].bytes != kernel.params[i].bytes()) {
      return absl::InvalidArgumentError(
          str_cat("cuda kernel '", kernel.name, "': argument ", i, " ('", kernel.params[i].name,
                  "') has ", args[i].bytes, " bytes, the parameter ", kernel.params[i].bytes()));
    }
  }
  if (kernel.kind == ImageKind::cubin && kernel.arch / 10 != impl_->info.compute_capability / 10) {
    return absl::InvalidArgumentError(str_cat("cuda kernel '", kernel.name, "': compiled for sm_",
                                              kernel.arch, ", device ", impl_->info.name, " is sm_",
                                              impl_->info.compute_capability));
  }
  CUmodule module = nullptr;
  if (CUresult r = d.module_load(&module, kernel.image.data()); r != CUDA_SUCCESS) {
    return fail("cuModuleLoadData", r);
  }
  std::vector<CUdeviceptr> ptrs(args.size(), 0);
  absl::Status status = [&]() -> absl::Status {
    CUfunction fn = nullptr;
    if (CUresult r = d.module_function(&fn, module, kernel.name.c_str()); r != CUDA_SUCCESS) {
      return absl::InvalidArgumentError(
          str_cat("cuda kernel '", kernel.name, "' is not in its image: ", d.error(r)));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (CUresult r = d.mem_alloc(&ptrs[i], std::max<size_t>(args[i].bytes, 1)); r != CUDA_SUCCESS)
        return fail("cuMemAlloc", r);
      if (args[i].bytes == 0) continue;
      if (CUresult r = d.copy_htod(ptrs[i], args[i].data, args[i].bytes); r != CUDA_SUCCESS)
        return fail("cuMemcpyHtoD", r);
    }
    std::vector<void*> params;
    for (CUdeviceptr& p : ptrs) params.push_back(&p);
    const LaunchConfig& l = kernel.launch;
    auto launch = [&]() -> absl::Status {
      if (CUresult r =
              d.launch(fn, static_cast<unsigned>(l.grid[0]), static_cast<unsigned>(l.grid[1]),
                       static_cast<unsigned>(l.grid[2]), static_cast<unsigned>(l.block[0]),
                       static_cast<unsigned>(l.block[1]), static_cast<unsigned>(l.block[2]), 0,
                       nullptr, params.data(), nullptr);
          r != CUDA_SUCCESS) {
        return fail("cuLaunchKernel", r);
      }
      return absl::OkStatus();
    };
    if (absl::Status s = launches(launch); !s.ok()) return s;
    if (CUresult r = d.ctx_synchronize(); r != CUDA_SUCCESS) return fail("kernel execution", r);
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].bytes == 0) continue;
      if (CUresult r = d.copy_dtoh(args[i].data, ptrs[i], args[i].bytes); r != CUDA_SUCCESS)
        return fail("cuMemcpyDtoH", r);
    }
    return absl::OkStatus();
  }();
  for (CUdeviceptr p : ptrs) {
    if (p) d.mem_free(p);
  }
  d.module_unload(module);
  return status;
}

absl::StatusOr<DeviceInfo> probe_cuda_device() {
  absl::StatusOr<std::unique_ptr<CudaDevice>> dev = CudaDevice::open(0);
  if (!dev.ok()) return dev.status();
  return (*dev)->info();
}

int preferred_cuda_arch() {
  absl::StatusOr<DeviceInfo> info = probe_cuda_device();
  return info.ok() ? info->compute_capability : NvrtcOptions().arch;
}

}  // namespace collage::codegen::cuda
