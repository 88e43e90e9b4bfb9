// Parameters of the dnnl module's recurrent kernel (OpKind::rnn): one oneDNN LSTM, GRU,
// linear-before-reset GRU or vanilla (tanh) RNN layer, in the params format of dnnl_params.h.
#pragma once

#include "dnnl_params.h"

namespace collage::rt_dnnl {

enum class RnnCell : uint32_t { vanilla_tanh = 1, lstm = 2, gru = 3, lbr_gru = 4 };
// bidirectional: both directions, their outputs concatenated along the channels.
enum class RnnDirection : uint32_t { left_to_right = 1, right_to_left = 2, bidirectional = 3 };

// Gates per cell in oneDNN's order (LSTM i f c o, GRU u r o); the bias of the
// linear-before-reset GRU has one more (the candidate's recurrent bias). 0: unknown cell.
inline int64_t rnn_gates(RnnCell c) {
  switch (c) {
    case RnnCell::vanilla_tanh:
      return 1;
    case RnnCell::lstm:
      return 4;
    case RnnCell::gru:
    case RnnCell::lbr_gru:
      return 3;
  }
  return 0;
}

// With S steps, batch N, input I, hidden H and D directions: src is an argument [S, N, I] (or
// [N, S, I] when batch_first, ONNX's layout 1). The states src_iter / src_iter_c (optional: zero
// when absent) are arguments [D, N, H] ([N, D, H] when batch_first) or constants {1, D, N, H}.
// weights_layer {1, D, I, G, H}, weights_iter {1, D, H, G, H} and bias {1, D, G', H} are
// constants in oneDNN's gate order (G' = G + 1 for lbr_gru), or arguments in ONNX's form (W
// [D, G*H, I], R [D, G*H, H], B [D, 2*G*H]; dnnl_rnn_layout.h rearranges them). The outputs are
// optional output arguments: dst_layer [S, D, N, H] ([N, S, D, H] when batch_first), dst_iter and
// dst_iter_c in the states' form.
struct RnnParams {
  RnnCell cell = RnnCell::lstm;
  RnnDirection direction = RnnDirection::left_to_right;
  uint32_t batch_first = 0;
  Operand src, src_iter, src_iter_c, weights_layer, weights_iter, bias, dst_layer, dst_iter,
      dst_iter_c;
  template <class IO>
  void io(IO& s) {
    s.e32(cell);
    s.e32(direction);
    s.u32(batch_first);
    for (Operand* o : {&src, &src_iter, &src_iter_c, &weights_layer, &weights_iter, &bias,
                       &dst_layer, &dst_iter, &dst_iter_c})
      o->io(s);
  }
};

}  // namespace collage::rt_dnnl
