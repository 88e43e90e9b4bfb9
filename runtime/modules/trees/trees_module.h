// The trees runtime module's function table (include/collage/runtime_module.h). The shared library
// exports it as collage_rt_module_v1_get; the compiler links the same code in and calls this.
#pragma once

#include "collage/runtime_module.h"

namespace collage::rt_trees {

inline constexpr const char* kModuleName = "trees";
// trees/2: the avx512_ranks variant (kernel parameter 3) and faster AVX-512 loops; cost-database
// records of trees/1 kernels are stale.
// trees/3: AVX2 loops (kernel parameters 4 and 5) and automatic capped at AVX2 (6), chosen on
// CPUs without AVX-512.
inline constexpr const char* kModuleVersion = "trees/3";

// Static storage, never freed.
const collage_rt_module_v1_t* module_table();

}  // namespace collage::rt_trees
