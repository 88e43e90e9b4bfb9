// MaxPool's Indices output as a TE compute (max_pool_indices.cpp).
#pragma once

#include <string>

#include "collage/te.h"
#include "ops/nn_window.h"

namespace collage::te_ops {

// For each window of `w` over x [N, C, spatial...] (output `out`, i64): the flat index in x of
// its first largest element in tap order, the spatial part row-major (storage_order 0) or
// column-major (1), as the reference reports it.
te::Tensor max_pool_indices(const te::Tensor& x, const ops::Window& w, int64_t storage_order,
                            const Shape& out, const std::string& name);

}  // namespace collage::te_ops
