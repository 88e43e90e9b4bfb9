// A compiled kernel as a step of a GPU program (runtime/modules/cuda/cuda_program.h): what the
// cuda runtime module launches, with the launch configuration the code generator chose.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cuda/nvrtc_compiler.h"
#include "cuda_program.h"

namespace collage::codegen::cuda {

// A launch of `kernel` from the program's cubin number `image`, its parameters at the arena
// offsets `args` (in the kernel's parameter order).
rt_cuda::LaunchStep launch_step(const CompiledCuda& kernel, uint32_t image,
                                std::vector<uint64_t> args);

// The kernel's image as the bytes a program carries.
std::vector<uint8_t> image_bytes(const CompiledCuda& kernel);

}  // namespace collage::codegen::cuda
