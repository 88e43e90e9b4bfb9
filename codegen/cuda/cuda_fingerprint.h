// A fingerprint of the CUDA environment for cost-database keys and placement explanations: the
// GPU, its driver, and the versions of NVRTC, cuDNN and cuBLAS found at run time (dlopen).
#pragma once

#include <string>

namespace collage::codegen::cuda {

struct CudaFingerprint {
  std::string device;          // GPU name; empty when there is no usable device
  std::string no_device;       // why there is none (empty when there is one)
  int compute_capability = 0;  // major * 10 + minor; 0 without a device
  int driver_version = 0;      // cuDriverGetVersion (13000 = 13.0); 0 without a device
  std::string nvrtc;           // "13.0"
  std::string cudnn;           // "9.13.0", or empty when libcudnn.so.9 cannot be loaded
  std::string cublas;          // "13.0.2", or empty when libcublas cannot be loaded
  // One line: "NVIDIA H100 80GB HBM3 sm_90 driver 13.0 | nvrtc 13.0 cudnn 9.13.0 cublas 13.0.2",
  // "no GPU (<reason>) | nvrtc ..." without a device, "-" for a missing library.
  std::string to_string() const;
};

// Probes device 0 and the libraries. Never fails: what is missing is recorded as such.
CudaFingerprint cuda_fingerprint();

}  // namespace collage::codegen::cuda
