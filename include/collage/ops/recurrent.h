// Attribute struct of the recurrent operators RNN, GRU and LSTM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collage/attrs.h"

namespace collage {

// RNN, GRU and LSTM (ONNX 7-22). `activations` lists the gate functions, comma-separated, per
// direction (RNN: 1, GRU: 2, LSTM: 3; empty: the defaults Tanh / Sigmoid,Tanh /
// Sigmoid,Tanh,Tanh); Sigmoid, Tanh, Relu, HardSigmoid, LeakyRelu, Affine, ThresholdedRelu,
// ScaledTanh, Elu, Softsign and Softplus take their alpha and beta from activation_alpha /
// activation_beta in order. clip > 0 clips the gate inputs to [-clip, clip]. direction is
// "forward", "reverse" or "bidirectional"; layout 1 puts the batch axis first.
struct RecurrentAttrs : AttrsOf<RecurrentAttrs> {
  std::vector<float> activation_alpha;
  std::vector<float> activation_beta;
  std::string activations;
  float clip = 0.f;
  std::string direction = "forward";
  int64_t hidden_size = 0;
  int64_t input_forget = 0;         // LSTM
  int64_t layout = 0;
  int64_t linear_before_reset = 0;  // GRU
  template <class V>
  void fields(V& v) {
    v.field("activation_alpha", activation_alpha);
    v.field("activation_beta", activation_beta);
    v.field("activations", activations);
    v.field("clip", clip);
    v.field("direction", direction);
    v.field("hidden_size", hidden_size);
    v.field("input_forget", input_forget);
    v.field("layout", layout);
    v.field("linear_before_reset", linear_before_reset);
  }
};

}  // namespace collage
