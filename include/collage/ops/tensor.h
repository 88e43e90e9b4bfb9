// Attribute structs of the tensor operators.
#pragma once

#include "collage/attrs.h"

namespace collage {

}  // namespace collage
