// The strings runtime module's function table (include/collage/runtime_module.h): the string
// operators of ONNX and ai.onnx.ml (str_params.h), run through kernel_run_strings. The shared
// library libcollage_rt_strings.so exports it as collage_rt_module_v1_get; the compiler links the
// same code in (lib/backends/strings) and calls this.
#pragma once

#include "collage/runtime_module.h"

namespace collage::rt_strings {

inline constexpr const char* kModuleName = "strings";
inline constexpr const char* kModuleVersion = "strings/1";

// Static storage, never freed.
const collage_rt_module_v1_t* module_table();

}  // namespace collage::rt_strings
