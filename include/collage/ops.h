// Attribute structs of every built-in operator.
#pragma once

#include "collage/ops/control_flow.h"
#include "collage/ops/data_dependent.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"
#include "collage/ops/trees.h"
