// The CUDA environment fingerprint: device 0 through the driver, library versions through their
// own version queries (loaded with dlopen, so a missing library is reported, not a link error).
#include "codegen/cuda/cuda_fingerprint.h"

#include <dlfcn.h>

#include "codegen/cuda/cuda_device.h"
#include "codegen/cuda/nvrtc_compiler.h"
#include "core/str_cat.h"

namespace collage::codegen::cuda {

namespace {

// dlopen of the first name that loads; null when none does.
void* open_first(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

std::string cudnn_version() {
  void* lib = open_first({"libcudnn.so.9", "libcudnn.so"});
  if (!lib) return "";
  using GetVersion = size_t (*)();
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "cudnnGetVersion"));
  std::string v;
  if (get) {
    // cuDNN 9 encodes major * 10000 + minor * 100 + patch.
    const size_t n = get();
    v = str_cat(static_cast<int64_t>(n / 10000), ".", static_cast<int64_t>(n / 100 % 100), ".",
                static_cast<int64_t>(n % 100));
  }
  dlclose(lib);
  return v;
}

std::string cublas_version() {
  void* lib = open_first({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (!lib) return "";
  // cublasStatus_t cublasGetProperty(libraryPropertyType type, int* value): 0 major, 1 minor,
  // 2 patch level.
  using GetProperty = int (*)(int, int*);
  auto get = reinterpret_cast<GetProperty>(dlsym(lib, "cublasGetProperty"));
  std::string v;
  int part[3] = {0, 0, 0};
  if (get && get(0, &part[0]) == 0 && get(1, &part[1]) == 0 && get(2, &part[2]) == 0) {
    v = str_cat(part[0], ".", part[1], ".", part[2]);
  }
  dlclose(lib);
  return v;
}

}  // namespace

std::string CudaFingerprint::to_string() const {
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("-") : s; };
  const std::string dev = device.empty()
                              ? str_cat("no GPU (", no_device, ")")
                              : str_cat(device, " sm_", compute_capability, " driver ",
                                        driver_version / 1000, ".", driver_version % 1000 / 10);
  return str_cat(dev, " | nvrtc ", or_dash(nvrtc), " cudnn ", or_dash(cudnn), " cublas ",
                 or_dash(cublas));
}

CudaFingerprint cuda_fingerprint() {
  CudaFingerprint f;
  absl::StatusOr<DeviceInfo> info = probe_cuda_device();
  if (info.ok()) {
    f.device = info->name;
    f.compute_capability = info->compute_capability;
    f.driver_version = info->driver_version;
  } else {
    f.no_device = std::string(info.status().message());
  }
  f.nvrtc = nvrtc_version();
  f.cudnn = cudnn_version();
  f.cublas = cublas_version();
  return f;
}

}  // namespace collage::codegen::cuda
