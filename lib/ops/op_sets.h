// Registration functions of the built-in operator families (one .cpp file family each).
#pragma once

#include "collage/op.h"

namespace collage::ops {

void register_nn_ops(OpRegistry& r);           // conv, pooling, normalisation, softmax, matmul
void register_elementwise_ops(OpRegistry& r);  // unary, binary, comparison, cast, where
void register_reduction_ops(OpRegistry& r);    // ReduceMean, ReduceSum, ReduceMax
void register_tensor_ops(OpRegistry& r);       // shape manipulation and data movement
void register_tree_ops(OpRegistry& r);         // GatherElements, ArgMax, TreeEnsemble (tree programs)
void register_indexing_ops(OpRegistry& r);     // Trilu, CumSum, GatherND, Scatter*, EyeLike
void register_norm_extra_ops(OpRegistry& r);   // Hardmax, LpNormalization, RMSNormalization, ...
void register_loss_ops(OpRegistry& r);         // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_attention_op(OpRegistry& r);     // Attention (ONNX 23-25)
void register_grid_sample_op(OpRegistry& r);   // GridSample
void register_rotary_embedding_op(OpRegistry& r);  // RotaryEmbedding
void register_lp_pool_op(OpRegistry& r);       // LpPool
void register_quantize_ops(OpRegistry& r);     // Quantize/DequantizeLinear, QLinearMatMul, ...
void register_recurrent_ops(OpRegistry& r);    // RNN, GRU, LSTM
void register_text_ops(OpRegistry& r);         // TfIdfVectorizer
void register_data_dependent_ops(OpRegistry& r);  // NonZero, Unique, NonMaxSuppression
void register_control_flow_ops(OpRegistry& r);    // If, Loop, Scan (bodies are graphs)
void register_signal_ops(OpRegistry& r);  // the window functions, MelWeightMatrix
void register_center_crop_pad_op(OpRegistry& r);  // CenterCropPad
void register_affine_grid_op(OpRegistry& r);      // AffineGrid
void register_quantized_conv_ops(OpRegistry& r);  // ConvInteger, QLinearConv
void register_col2im_op(OpRegistry& r);           // Col2Im
void register_topk_op(OpRegistry& r);             // TopK
void register_string_ops(OpRegistry& r);  // StringConcat, StringEqual, StringSplit, StringNormalizer
void register_regex_full_match_op(OpRegistry& r);  // RegexFullMatch (RE2)
void register_label_encoder_op(OpRegistry& r);     // LabelEncoder (ai.onnx.ml)

}  // namespace collage::ops
