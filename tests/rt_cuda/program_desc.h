// The kernel descriptor the runtime hands the cuda module for a GPU program, as the module tests
// build it. Every pointer is borrowed: the arrays must outlive the descriptor's use.
#pragma once

#include <cstdint>
#include <vector>

#include "collage/runtime_module.h"
#include "cuda_program.h"

namespace collage::testing {

inline collage_kernel_desc_t gpu_program_desc(const std::vector<uint8_t>& params,
                                              const collage_tensor_desc_t* args, int32_t num_args,
                                              int32_t num_inputs,
                                              const collage_tensor_desc_t* constant_descs,
                                              const void* const* constants, int32_t num_constants) {
  collage_kernel_desc_t desc{};
  desc.struct_size = sizeof desc;
  desc.entry = rt_cuda::kEntryProgram;
  desc.params = params.data();
  desc.params_size = params.size();
  desc.num_args = num_args;
  desc.args = args;
  desc.num_inputs = num_inputs;
  desc.num_constants = num_constants;
  desc.constant_descs = constant_descs;
  desc.constants = constants;
  return desc;
}

}  // namespace collage::testing
