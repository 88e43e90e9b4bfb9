// Attribute structs of the elementwise operators.
#pragma once

#include "collage/attrs.h"

namespace collage {

}  // namespace collage
