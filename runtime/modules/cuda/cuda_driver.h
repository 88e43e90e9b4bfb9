// The CUDA driver API loaded at run time (dlopen of libcuda.so.1), never linked: a program or
// module that uses it loads and runs on machines without a driver or a GPU, and reports why no
// device is usable instead of failing to start. One table per process, loaded on first use and
// kept for the life of the process (CUDA must not be unloaded while contexts exist).
#pragma once

#include <cuda.h>

#include <string>

namespace collage::rt_cuda {

// Entry points, typed from cuda.h, resolved by their versioned names.
struct Driver {
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
  decltype(&::cuMemcpyHtoDAsync_v2) copy_htod_async = nullptr;
  decltype(&::cuMemcpyDtoHAsync_v2) copy_dtoh_async = nullptr;
  decltype(&::cuMemsetD8Async) memset_async = nullptr;
  decltype(&::cuLaunchKernel) launch = nullptr;
  decltype(&::cuGetErrorString) error_string = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventDestroy_v2) event_destroy = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventElapsedTime_v2) event_elapsed = nullptr;
  decltype(&::cuStreamCreate) stream_create = nullptr;
  decltype(&::cuStreamDestroy_v2) stream_destroy = nullptr;
  decltype(&::cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cuStreamBeginCapture_v2) begin_capture = nullptr;
  decltype(&::cuStreamEndCapture) end_capture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) graph_instantiate = nullptr;
  decltype(&::cuGraphLaunch) graph_launch = nullptr;
  decltype(&::cuGraphExecDestroy) graph_exec_destroy = nullptr;
  decltype(&::cuGraphDestroy) graph_destroy = nullptr;

  // The driver's name for `r` ("out of memory"), or "CUresult N".
  std::string error(CUresult r) const;
};

// The process's driver table, loaded and cuInit-ed on the first call; null with `*why` set
// ("no CUDA driver: cannot load libcuda.so.1 (...)", a missing entry point, cuInit's error) when
// there is none. Thread-safe; a failure is remembered, not retried.
const Driver* cuda_driver(std::string* why);

}  // namespace collage::rt_cuda
