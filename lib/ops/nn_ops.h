// Internal interface of the nn operator files: per-file registration and shared input checks.
#pragma once

#include <initializer_list>

#include "absl/status/status.h"
#include "collage/op.h"
#include "collage/tensor.h"

namespace collage::ops {

// Each nn_*.cpp file registers its operators; register_nn_ops calls them all.
void register_conv_op(OpRegistry& r);            // Conv
void register_conv_transpose_op(OpRegistry& r);  // ConvTranspose
void register_pool_ops(OpRegistry& r);           // MaxPool, AveragePool, GlobalAveragePool
void register_norm_ops(OpRegistry& r);           // Batch-, Instance-, LayerNormalization
void register_batch_norm_training_op(OpRegistry& r);  // BatchNormalizationTraining
void register_deform_conv_op(OpRegistry& r);     // DeformConv
void register_max_unpool_op(OpRegistry& r);      // MaxUnpool
void register_softmax_ops(OpRegistry& r);        // Softmax, LogSoftmax
void register_matmul_ops(OpRegistry& r);         // MatMul, Gemm

// Adds a built-in operator; a duplicate name is a programming error.
void add_builtin(OpRegistry& r, OpDef def);

// Checks that every given input is f32 (the only element type of the nn reference kernels).
// `names` are the ONNX input names in order, used in the error: "input W must be f32, got i64".
absl::Status require_f32(const InferContext& ctx, std::initializer_list<const char*> names);

// `s` (an error from a helper such as resolve_window) prefixed with the operator and node.
absl::Status node_error(const InferContext& ctx, const absl::Status& s);

// The spatial axes of an N x C x D1..Dn shape.
Shape spatial_dims(const Shape& s);

// v rounded to t when t is f16 or bf16 (through float, to nearest even); v itself for any other
// type. Where ONNX's definition makes a 16-bit value inside an operator (an f16 softmax's steps,
// a 16-bit normalisation's normalised and scaled values), a wider computation rounds it here.
double round16(DType t, double v);

}  // namespace collage::ops
