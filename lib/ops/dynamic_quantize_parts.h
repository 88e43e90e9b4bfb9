// Registration of the internal operators a large DynamicQuantizeLinear is split into
// (include/collage/ops/dynamic_quantize_parts.h).
#pragma once

#include "collage/op.h"

namespace collage::ops {

void register_dynamic_quantize_parts(OpRegistry& r);  // DynamicQuantizeRange, ...Params

}  // namespace collage::ops
