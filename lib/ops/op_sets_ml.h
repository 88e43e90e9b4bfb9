// Registration functions of the operators added for ai.onnx.ml models and Cast with strings (kept
// apart from op_sets.h so that adding one does not touch every operator family's file).
#pragma once

#include "collage/op.h"

namespace collage::ops {

void register_pairwise_coupling_op(OpRegistry& r);  // SVMPairwiseCoupling (ai.onnx.ml SVMs)
void register_cast_string_op(OpRegistry& r);        // CastString (Cast to or from STRING)

}  // namespace collage::ops
