// Registration functions of the built-in operator families (one .cpp file family each).
#pragma once

#include "collage/op.h"

namespace collage::ops {

void register_nn_ops(OpRegistry& r);           // conv, pooling, normalisation, softmax, matmul
void register_elementwise_ops(OpRegistry& r);  // unary, binary, comparison, cast, where
void register_reduction_ops(OpRegistry& r);    // ReduceMean, ReduceSum, ReduceMax
void register_tensor_ops(OpRegistry& r);       // shape manipulation and data movement
void register_tree_ops(OpRegistry& r);         // GatherElements, ArgMax, TreeEnsemble (tree programs)
void register_data_dependent_ops(OpRegistry& r);  // NonZero, Unique, NonMaxSuppression
void register_control_flow_ops(OpRegistry& r);    // If, Loop, Scan (bodies are graphs)

}  // namespace collage::ops
