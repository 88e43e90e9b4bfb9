// The cuda runtime module (libcollage_rt_cuda.so): runs the GPU regions of an artifact, each a
// GpuProgram (cuda_program.h) in one kernel record with entry "gpu_program".
#pragma once

#include "collage/runtime_module.h"

namespace collage::rt_cuda {

inline constexpr const char* kModuleName = "cuda";
inline constexpr const char* kModuleVersion = "cuda-rt/1";

const collage_rt_module_v1_t* module_table();

}  // namespace collage::rt_cuda
