// ONNX's recurrent weights and biases in oneDNN's gate order and layouts, shared by the compiler
// (constants, rearranged once) and the dnnl module (weights given at run time). ONNX orders LSTM
// gates i o f c and GRU gates z r h; oneDNN i f c o and u r o. Standard C++ only.
#pragma once

#include <cstdint>

#include "dnnl_params_rnn.h"

namespace collage::rt_dnnl {

// The ONNX gate that oneDNN's gate `g` of `cell` is.
inline int64_t rnn_onnx_gate(RnnCell cell, int64_t g) {
  static constexpr int64_t kLstm[] = {0, 2, 3, 1};
  return cell == RnnCell::lstm ? kLstm[g] : g;
}

// ONNX's W or R [D, G*H, K] as oneDNN's ldigo {1, D, K, G, H}.
inline void rnn_ldigo(RnnCell cell, int64_t dirs, int64_t hidden, int64_t k_size, const float* in,
                      float* out) {
  const int64_t G = rnn_gates(cell), H = hidden;
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t g = 0; g < G; ++g) {
      const float* rows = in + (d * G + rnn_onnx_gate(cell, g)) * H * k_size;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t k = 0; k < k_size; ++k)
          out[((d * k_size + k) * G + g) * H + h] = rows[h * k_size + k];
    }
}

// ONNX's B [D, 2*G*H] (Wb then Rb; null: zeros) as oneDNN's ldgo bias {1, D, G', H}: Wb + Rb
// per gate, except that the linear-before-reset GRU keeps its candidate's Wb and Rb apart (gates
// 2 and 3).
inline void rnn_ldgo_bias(RnnCell cell, int64_t dirs, int64_t hidden, const float* b, float* out) {
  const int64_t G = rnn_gates(cell), H = hidden;
  const bool lbr = cell == RnnCell::lbr_gru;
  const int64_t out_gates = G + (lbr ? 1 : 0);
  auto wb = [&](int64_t d, int64_t g, int64_t h) { return b ? b[(d * 2 * G + g) * H + h] : 0.f; };
  auto rb = [&](int64_t d, int64_t g, int64_t h) {
    return b ? b[(d * 2 * G + G + g) * H + h] : 0.f;
  };
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t g = 0; g < out_gates; ++g)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t src = rnn_onnx_gate(cell, g);
        out[(d * out_gates + g) * H + h] = lbr && g == 2   ? wb(d, 2, h)
                                           : lbr && g == 3 ? rb(d, 2, h)
                                                           : wb(d, src, h) + rb(d, src, h);
      }
}

}  // namespace collage::rt_dnnl
