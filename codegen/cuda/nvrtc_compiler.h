// Compilation of generated CUDA C with NVRTC into a cubin (or PTX) for one GPU architecture,
// cached on disk. NVRTC needs no GPU: any machine with the CUDA toolkit can compile for sm_90.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/cuda/cuda_codegen.h"

namespace collage::codegen::cuda {

enum class ImageKind : uint8_t { cubin, ptx };

struct NvrtcOptions {
  // Compute capability as major * 10 + minor (90: sm_90, H100/H200). Callers with a device pass
  // its capability (see device_compute_capability()).
  int arch = 90;
  ImageKind kind = ImageKind::cubin;
  // Where compiled images are kept: nullopt uses default_cuda_cache_dir(), an empty path turns
  // the cache off. The directory is created when missing.
  std::optional<std::filesystem::path> cache_dir;
};

struct CompiledCuda {
  std::string name;   // the kernel's name (its __global__ function)
  std::string image;  // cubin bytes, or PTX text
  ImageKind kind = ImageKind::cubin;
  int arch = 90;
  LaunchConfig launch;
  std::vector<KernelParam> params;
  bool from_cache = false;
  std::string log;  // NVRTC's log (warnings); empty when taken from the cache
};

// Compiles `kernel` for `options.arch`. The cache key is a hash of the source, the architecture,
// the image kind, the compile flags and NVRTC's version; an entry records its full key and is
// used only when it matches. Errors: InvalidArgument with NVRTC's log when the source does not
// compile or the architecture is not one NVRTC supports; Internal for other NVRTC failures. A
// cache that cannot be read or written is skipped (compilation still succeeds).
absl::StatusOr<CompiledCuda> compile_cuda(const CudaKernel& kernel,
                                          const NvrtcOptions& options = {});

// $XDG_CACHE_HOME/collage/cuda, else $HOME/.cache/collage/cuda; empty when neither is set. Reads
// the environment (call it once at the edge of the program when that matters).
std::filesystem::path default_cuda_cache_dir();

// NVRTC's version as "13.0".
std::string nvrtc_version();

}  // namespace collage::codegen::cuda
