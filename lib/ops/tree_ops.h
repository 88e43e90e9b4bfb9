// Registration of the operators added for tree-ensemble programs (one file each).
#pragma once

#include "collage/op.h"

namespace collage::ops {

void register_gather_elements_op(OpRegistry& r);  // tree_gather_elements.cpp
void register_argmax_op(OpRegistry& r);           // tree_argmax.cpp
void register_tree_ensemble_op(OpRegistry& r);    // tree_ensemble.cpp

}  // namespace collage::ops
