// Concat along the channels of values stored in channel blocks, computed in the stored order.
#pragma once

#include <string>
#include <vector>

#include "collage/te.h"

namespace collage::te_ops {

// When every one of `parts` (the non-empty inputs of a Concat along axis 1, in order) is a kernel
// argument stored in blocks of the same size, read through its logical view (layout_views.h),
// and their elements are of `dtype`: the concatenation computed block by block in that stored
// order, which parts each block comes from decided per block and its channels one vector (the
// logical form selects per channel, across blocks, and so reads by gathers), returned through
// its logical view. Otherwise an undefined tensor.
te::Tensor concat_blocked(const std::vector<te::Tensor>& parts, DType dtype,
                          const std::string& name);

}  // namespace collage::te_ops
