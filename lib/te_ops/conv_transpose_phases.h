// ConvTranspose as stride_h x stride_w phase convolutions. Output row oh = i * s + a (a, the
// phase, in [0, s)) receives input rows i + d(a) - u through taps t0(a) + s * u, so each phase is
// a dense stride-1 convolution of the input with ceil(k / s) taps per dimension, and no tap is
// masked at run time as in the direct form (which reduces over every tap and keeps the ones the
// stride admits). The phases share one accumulator [N, SH, SW, M/B, OH/SH, OW/SW, B] computed by
// register tiles of output columns x channel blocks, as the blocked convolution's are
// (conv_schedule.cpp), and the output reads it back interleaved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/te_ops.h"

namespace collage::te_ops::deconv {

// Strides, dilations and pads at the start of each spatial dimension, resolved from the
// attributes (explicit pads, auto_pad, output_padding, output_shape) and the output's shape.
struct Window {
  std::vector<int64_t> stride, dilation, pad;
};
absl::StatusOr<Window> resolve_window(const Node& node, const Shape& x, const Shape& w,
                                      const Shape& out);

// The per-dimension figures of a 2-D, one-group, undilated ConvTranspose whose output extents
// are multiples of the strides.
struct PhaseGeometry {
  int64_t n = 1, c = 1, m = 1, h = 1, w = 1, oh = 1, ow = 1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;  // kernel, strides, pads at the start
  int64_t block = 16;                                      // output channels per accumulator block
  int64_t in_block = 8;                                    // input channels per packed block
  int64_t taps_h() const { return (kh + sh - 1) / sh; }
  int64_t taps_w() const { return (kw + sw - 1) / sw; }
  int64_t oh_phase() const { return oh / sh; }  // output rows of one phase
  int64_t ow_phase() const { return ow / sw; }
  int64_t m_blocks() const { return (m + block - 1) / block; }
  int64_t c_blocks() const { return (c + in_block - 1) / in_block; }
  double flops() const;  // of the phase convolutions, the admitted taps only
};

// The geometry when the phase form applies: x [N, C, H, W], w [C, M, KH, KW], one group,
// dilations 1 and out [N, M, OH, OW] with OH and OW multiples of the strides. nullopt otherwise.
std::optional<PhaseGeometry> phase_geometry(const Shape& x, const Shape& w, const Shape& out,
                                            int64_t group, const Window& window);

// The geometry of a group's anchor ConvTranspose, when the phase form applies.
std::optional<PhaseGeometry> phase_geometry(const Graph& graph, const Node& node);

// The computes: the input packed to [N, C/IB, HP, WP, IB] with the padding the phases read, the
// weight packed per phase (tag "pack"), the accumulator (tag "conv_transpose_phases", bias as its
// initial value) and the interleaved [N, M, OH, OW] result named `name`.
std::vector<te::Tensor> phases_compute(const std::string& name, const PhaseGeometry& g,
                                       const te::Tensor& x, const te::Tensor& w,
                                       const te::Tensor& b);

// The anchor schedule of a group whose ConvTranspose was built by phases_compute: parallel over
// chunks of phase rows (the input packed per chunk), register tiles of output columns x channel
// blocks accumulated over every input channel and tap, the group's elementwise chain applied as
// each tile is stored; the weight packed once when it is a constant.
absl::StatusOr<ScheduledGroup> schedule_phases(const AnchorGroup& group, const PhaseGeometry& g);

}  // namespace collage::te_ops::deconv
