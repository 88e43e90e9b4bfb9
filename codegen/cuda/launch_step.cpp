// Compiled kernels as launch steps.
#include "codegen/cuda/launch_step.h"

namespace collage::codegen::cuda {

rt_cuda::LaunchStep launch_step(const CompiledCuda& kernel, uint32_t image,
                                std::vector<uint64_t> args) {
  rt_cuda::LaunchStep s;
  s.image = image;
  s.function = kernel.name;
  for (int i = 0; i < 3; ++i) {
    s.grid[i] = static_cast<uint32_t>(kernel.launch.grid[i]);
    s.block[i] = static_cast<uint32_t>(kernel.launch.block[i]);
  }
  s.args = std::move(args);
  return s;
}

std::vector<uint8_t> image_bytes(const CompiledCuda& kernel) {
  return {kernel.image.begin(), kernel.image.end()};
}

}  // namespace collage::codegen::cuda
