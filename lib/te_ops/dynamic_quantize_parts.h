// The TE computes and schedules of DynamicQuantizeRange and DynamicQuantizeParams (what the pass
// pipeline splits a large DynamicQuantizeLinear into).
#pragma once

#include "collage/te_ops.h"

namespace collage::te_ops {

void register_dynamic_quantize_parts(TeOpRegistry& r);

}  // namespace collage::te_ops
