// The driver API through dlopen: the handful of entry points a presence check, a test launch and
// event timing need, resolved by their versioned names, and the device wrapper built on them.
#include "codegen/cuda/cuda_device.h"

#include <cuda.h>
#include <dlfcn.h>

#include "core/str_cat.h"

namespace collage::codegen::cuda {

namespace {

// Entry points, typed from cuda.h; the library is never linked, only loaded.
struct Driver {
  void* lib = nullptr;
  decltype(&::cuInit) init = nullptr;
  decltype(&::cuDriverGetVersion) driver_version = nullptr;
  decltype(&::cuDeviceGetCount) device_count = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetName) device_name = nullptr;
  decltype(&::cuDeviceGetAttribute) device_attribute = nullptr;
  decltype(&::cuDeviceTotalMem_v2) total_mem = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) ctx_retain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) ctx_release = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuCtxSynchronize) ctx_synchronize = nullptr;
  decltype(&::cuModuleLoadData) module_load = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuModuleGetFunction) module_function = nullptr;
  decltype(&::cuMemAlloc_v2) mem_alloc = nullptr;
  decltype(&::cuMemFree_v2) mem_free = nullptr;
  decltype(&::cuMemcpyHtoD_v2) copy_htod = nullptr;
  decltype(&::cuMemcpyDtoH_v2) copy_dtoh = nullptr;
  decltype(&::cuLaunchKernel) launch = nullptr;
  decltype(&::cuGetErrorString) error_string = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime) event_elapsed = nullptr;

  ~Driver() {
    if (lib) dlclose(lib);
  }

  std::string error(CUresult r) const {
    const char* s = nullptr;
    if (error_string && error_string(r, &s) == CUDA_SUCCESS && s) return s;
    return str_cat("CUresult ", static_cast<int>(r));
  }
};

absl::Status load_driver(Driver& d) {
  d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!d.lib) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(
        str_cat("no CUDA driver: cannot load libcuda.so.1 (", why ? why : "unknown", ")"));
  }
  bool missing = false;
  std::string missing_name;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(d.lib, name));
    if (!fn && !missing) {
      missing = true;
      missing_name = name;
    }
  };
  sym(d.init, "cuInit");
  sym(d.driver_version, "cuDriverGetVersion");
  sym(d.device_count, "cuDeviceGetCount");
  sym(d.device_get, "cuDeviceGet");
  sym(d.device_name, "cuDeviceGetName");
  sym(d.device_attribute, "cuDeviceGetAttribute");
  sym(d.total_mem, "cuDeviceTotalMem_v2");
  sym(d.ctx_retain, "cuDevicePrimaryCtxRetain");
  sym(d.ctx_release, "cuDevicePrimaryCtxRelease_v2");
  sym(d.ctx_set_current, "cuCtxSetCurrent");
  sym(d.ctx_synchronize, "cuCtxSynchronize");
  sym(d.module_load, "cuModuleLoadData");
  sym(d.module_unload, "cuModuleUnload");
  sym(d.module_function, "cuModuleGetFunction");
  sym(d.mem_alloc, "cuMemAlloc_v2");
  sym(d.mem_free, "cuMemFree_v2");
  sym(d.copy_htod, "cuMemcpyHtoD_v2");
  sym(d.copy_dtoh, "cuMemcpyDtoH_v2");
  sym(d.launch, "cuLaunchKernel");
  sym(d.error_string, "cuGetErrorString");
  sym(d.event_create, "cuEventCreate");
  sym(d.event_destroy, "cuEventDestroy_v2");
  sym(d.event_record, "cuEventRecord");
  sym(d.event_synchronize, "cuEventSynchronize");
  sym(d.event_elapsed, "cuEventElapsedTime_v2");
  if (missing) {
    return absl::FailedPreconditionError(
        str_cat("CUDA driver libcuda.so.1 lacks entry point ", missing_name));
  }
  if (CUresult r = d.init(0); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(str_cat("cuInit failed: ", d.error(r)));
  }
  return absl::OkStatus();
}

// Internal, naming the kernel, the driver call and the driver's message.
absl::Status driver_failure(const Driver& d, const CompiledCuda& kernel, const char* what,
                            CUresult r) {
  return absl::InternalError(str_cat("cuda kernel '", kernel.name, "': ", what, ": ", d.error(r)));
}

}  // namespace

struct CudaDevice::Impl {
  Driver driver;
  DeviceInfo info;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

CudaDevice::CudaDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaDevice::~CudaDevice() {
  if (impl_->context) impl_->driver.ctx_release(impl_->device);
}

const DeviceInfo& CudaDevice::info() const {
  return impl_->info;
}

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::open(int ordinal) {
  auto impl = std::make_unique<Impl>();
  Driver& d = impl->driver;
  if (absl::Status s = load_driver(d); !s.ok()) return s;
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
  Driver& d = impl_->driver;
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
  Driver& d = impl_->driver;
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
