// The patterns (with their checks) the dnnl backend registers.
#pragma once

#include "collage/backend.h"

namespace collage::dnnl_backend {

void add_dnnl_patterns(Backend& b);

}  // namespace collage::dnnl_backend
