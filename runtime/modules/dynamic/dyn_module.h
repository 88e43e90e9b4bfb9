// The dynamic runtime module's function table (include/collage/runtime_module.h): operators whose
// shapes are known only at run time, run through kernel_run_dynamic. The shared library
// libcollage_rt_dynamic.so exports it as collage_rt_module_v1_get; the compiler links the same
// code in (lib/backends/dynamic) and calls this.
#pragma once

#include "collage/runtime_module.h"

namespace collage::rt_dynamic {

inline constexpr const char* kModuleName = "dynamic";
// dynamic/2: parameters of version 3 (control-flow bodies) and the operators appended with them.
inline constexpr const char* kModuleVersion = "dynamic/2";

// Static storage, never freed.
const collage_rt_module_v1_t* module_table();

}  // namespace collage::rt_dynamic
