// Parameters of the dnnl module's deformable convolution kernel (OpKind::deform_conv), in the
// params format of dnnl_params.h.
#pragma once

#include "dnnl_params.h"

namespace collage::rt_dnnl {

// ONNX DeformConv, 2-D: x [N, C, H, W]; offset [N, 2 * OG * kh * kw, OH, OW] (per offset group
// and tap: the row then the column displacement); mask (optional) [N, OG * kh * kw, OH, OW];
// weights {1, G, M / G, C / G * kh * kw} and bias (optional) {1, G, M / G, 1}; each of these an
// argument or a constant; dst [N, M, OH, OW]. Taps sample x bilinearly, zero outside the plane.
struct DeformConvParams {
  Operand x, offset, mask, weights, bias, dst;
  int64_t groups = 1, offset_groups = 1;
  std::vector<int64_t> kernel, strides, dilations, pad_begin;  // 2 values each
  template <class IO>
  void io(IO& s) {
    for (Operand* o : {&x, &offset, &mask, &weights, &bias, &dst}) o->io(s);
    s.i64(groups);
    s.i64(offset_groups);
    s.dims(kernel);
    s.dims(strides);
    s.dims(dilations);
    s.dims(pad_begin);
  }
};

}  // namespace collage::rt_dnnl
