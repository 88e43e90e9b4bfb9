// The driver table: libcuda.so.1's entry points, loaded once per process, and cuInit.
#include "cuda_driver.h"

#include "library_table.h"

namespace collage::rt_cuda {

std::string Driver::error(CUresult r) const {
  const char* s = nullptr;
  if (error_string && error_string(r, &s) == CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(static_cast<int>(r));
}

namespace {

LoadedTable<Driver>* load() {
  LoadedTable<Driver>* l =
      load_table<Driver>("CUDA driver", "no CUDA driver", "libcuda.so.1", [](Driver& d, auto sym) {
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
        sym(d.copy_htod_async, "cuMemcpyHtoDAsync_v2");
        sym(d.copy_dtoh_async, "cuMemcpyDtoHAsync_v2");
        sym(d.memset_async, "cuMemsetD8Async");
        sym(d.launch, "cuLaunchKernel");
        sym(d.error_string, "cuGetErrorString");
        sym(d.event_create, "cuEventCreate");
        sym(d.event_destroy, "cuEventDestroy_v2");
        sym(d.event_record, "cuEventRecord");
        sym(d.event_synchronize, "cuEventSynchronize");
        sym(d.event_elapsed, "cuEventElapsedTime_v2");
        sym(d.stream_create, "cuStreamCreate");
        sym(d.stream_destroy, "cuStreamDestroy_v2");
        sym(d.stream_synchronize, "cuStreamSynchronize");
        sym(d.begin_capture, "cuStreamBeginCapture_v2");
        sym(d.end_capture, "cuStreamEndCapture");
        sym(d.graph_instantiate, "cuGraphInstantiateWithFlags");
        sym(d.graph_launch, "cuGraphLaunch");
        sym(d.graph_exec_destroy, "cuGraphExecDestroy");
        sym(d.graph_destroy, "cuGraphDestroy");
      });
  if (l->why.empty()) {
    if (CUresult r = l->table.init(0); r != CUDA_SUCCESS)
      l->why = "cuInit failed: " + l->table.error(r);
  }
  return l;
}

}  // namespace

const Driver* cuda_driver(std::string* why) {
  static const LoadedTable<Driver>* const loaded = load();
  return usable_table(loaded, why);
}

}  // namespace collage::rt_cuda
