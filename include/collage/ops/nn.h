// Attribute structs of the nn operators.
#pragma once

#include "collage/attrs.h"

namespace collage {

}  // namespace collage
