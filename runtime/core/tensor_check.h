// Checking a caller's DLTensor against the plan's tensor it stands for: device, dtype, shape,
// density, data pointer.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>

#include "program.h"

namespace collage::rt {

// The DLPack type of a collage_dtype_t (bool: {kDLUInt, 8, 1}).
DLDataType dlpack_dtype(int32_t dtype);

// The data pointer of `t` after checking it against `info` (`role` "input" or "output" and
// index `i` name it in errors, Code::invalid_argument, e.g. "input 0 'x': expected f32[1x4], got
// f32[1x5]").
Status check_tensor(const char* role, size_t i, const TensorInfo& info, const DLTensor& t,
                    void** data);

}  // namespace collage::rt
