// Attribute structs of the nn operators (convolution, pooling, normalisation, softmax, matmul).
// Field names are the ONNX attribute names; list-valued fields left empty take the ONNX default
// (e.g. strides of 1 on every spatial axis).
#pragma once

#include <string>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// Conv(X, W, [B]). X is N x C x D1..Dn (n = 1..3), W is M x C/group x k1..kn, B is M.
struct ConvAttrs : AttrsOf<ConvAttrs> {
  std::string auto_pad = "NOTSET";  // NOTSET, SAME_UPPER, SAME_LOWER, VALID
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;  // empty: taken from W
  std::vector<int64_t> pads;          // begin values of every axis, then end values
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("auto_pad", auto_pad);
    v.field("dilations", dilations);
    v.field("group", group);
    v.field("kernel_shape", kernel_shape);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

// ConvTranspose(X, W, [B]). X is N x C x D1..Dn, W is C x M/group x k1..kn, B is M.
struct ConvTransposeAttrs : AttrsOf<ConvTransposeAttrs> {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;  // spatial sizes (or the full output shape); sets the pads
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("auto_pad", auto_pad);
    v.field("dilations", dilations);
    v.field("group", group);
    v.field("kernel_shape", kernel_shape);
    v.field("output_padding", output_padding);
    v.field("output_shape", output_shape);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

// MaxPool(X) with one output (the Indices output is not supported).
struct MaxPoolAttrs : AttrsOf<MaxPoolAttrs> {
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> pads;
  int64_t storage_order = 0;  // only matters for the Indices output
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("auto_pad", auto_pad);
    v.field("ceil_mode", ceil_mode);
    v.field("dilations", dilations);
    v.field("kernel_shape", kernel_shape);
    v.field("pads", pads);
    v.field("storage_order", storage_order);
    v.field("strides", strides);
  }
};

struct AveragePoolAttrs : AttrsOf<AveragePoolAttrs> {
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
  int64_t count_include_pad = 0;
  std::vector<int64_t> dilations;  // opset 19; empty: all 1
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  template <class V>
  void fields(V& v) {
    v.field("auto_pad", auto_pad);
    v.field("ceil_mode", ceil_mode);
    v.field("count_include_pad", count_include_pad);
    v.field("dilations", dilations);
    v.field("kernel_shape", kernel_shape);
    v.field("pads", pads);
    v.field("strides", strides);
  }
};

// BatchNormalization(X, scale, B, mean, var), inference only (training_mode must be 0).
struct BatchNormalizationAttrs : AttrsOf<BatchNormalizationAttrs> {
  float epsilon = 1e-5f;
  float momentum = 0.9f;  // training only; kept so that ONNX models import
  int64_t training_mode = 0;
  template <class V>
  void fields(V& v) {
    v.field("epsilon", epsilon);
    v.field("momentum", momentum);
    v.field("training_mode", training_mode);
  }
};

// InstanceNormalization(X, scale, B).
struct InstanceNormalizationAttrs : AttrsOf<InstanceNormalizationAttrs> {
  float epsilon = 1e-5f;
  template <class V>
  void fields(V& v) {
    v.field("epsilon", epsilon);
  }
};

// LayerNormalization(X, Scale, [B]): normalises over the axes [axis, rank) with one output.
struct LayerNormalizationAttrs : AttrsOf<LayerNormalizationAttrs> {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;  // 1 = float; statistics are computed in at least float precision
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
    v.field("epsilon", epsilon);
    v.field("stash_type", stash_type);
  }
};

// Softmax(X) and LogSoftmax(X) over one axis (opset-13 semantics).
struct SoftmaxAttrs : AttrsOf<SoftmaxAttrs> {
  int64_t axis = -1;
  template <class V>
  void fields(V& v) {
    v.field("axis", axis);
  }
};

// Gemm(A, B, [C]): Y = alpha * A' * B' + beta * C, C unidirectionally broadcast to M x N.
struct GemmAttrs : AttrsOf<GemmAttrs> {
  float alpha = 1.f;
  float beta = 1.f;
  int64_t transA = 0;
  int64_t transB = 0;
  template <class V>
  void fields(V& v) {
    v.field("alpha", alpha);
    v.field("beta", beta);
    v.field("transA", transA);
    v.field("transB", transB);
  }
};

}  // namespace collage
