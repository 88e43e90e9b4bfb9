// Attribute structs of every built-in operator.
#pragma once

#include "collage/ops/attention.h"
#include "collage/ops/elementwise.h"
#include "collage/ops/indexing.h"
#include "collage/ops/loss.h"
#include "collage/ops/math.h"
#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "collage/ops/pooling.h"
#include "collage/ops/quantize.h"
#include "collage/ops/recurrent.h"
#include "collage/ops/sampling.h"
#include "collage/ops/tensor.h"
#include "collage/ops/text.h"
#include "collage/ops/trees.h"
