// Tensor expressions of values stored in a blocked layout (collage/layout.h): the stored shape,
// the logical view a compute reads a blocked kernel argument through, and the stage that writes a
// logical result in blocked order. Schedules inline the view (its tag is kLayoutViewTag) and find
// the stored output by its tag (kStoredViewTag).
#pragma once

#include <string>

#include "collage/layout.h"
#include "collage/te.h"

namespace collage::te_ops {

inline constexpr char kLayoutViewTag[] = "layout_view";
inline constexpr char kStoredViewTag[] = "layout_store";

// The shape of the buffer holding a value of logical shape `logical` in `layout`:
// [N, C/b, spatial..., b] for channel-blocked, `logical` for plain.
Shape stored_shape(const Shape& logical, const Layout& layout);

// `stored` (of stored_shape) seen in its logical shape: element (n, c, i...) reads
// stored(n, c / b, i..., c % b).
te::Tensor logical_view(const te::Tensor& stored, const Layout& layout);

// A stage of stored_shape(logical.shape(), layout) that writes `logical` in `layout`'s order.
te::Tensor stored_view(const te::Tensor& logical, const Layout& layout, std::string name);

// The logical tensor a stored_view stage writes, or an undefined tensor when `t` is no such stage.
te::Tensor stored_source(const te::Tensor& t);

}  // namespace collage::te_ops
