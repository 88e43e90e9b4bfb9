// Convolution in tensor expressions: geometry, the computes (direct NCHW; blocked NCHWc with packed
// data and weights, for dense and grouped convolutions; blocked depthwise) and the tunable schedule
// templates of a group anchored at a Conv.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/te.h"
#include "collage/te_ops.h"
#include "tune/template.h"

namespace collage::te_ops::conv {

// Output-channel block of the blocked computes: one AVX-512 vector of f32; kSmallBlock, one
// AVX2 vector, where the group passes values blocked by it (compute_block).
constexpr int64_t kBlock = 16;
constexpr int64_t kSmallBlock = 8;

// A Conv's resolved geometry; 1-D convolutions have h == kh == oh == 1.
struct Geometry {
  int spatial = 2;  // 1 or 2
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t m = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t group = 1;
  bool bias = false;
  int64_t block = kBlock;  // the channel block of the blocked and depthwise computes
  // Channels per group, of the input and of the output.
  int64_t cg() const { return c / group; }
  int64_t mg() const { return m / group; }
  // One filter per channel (the channel multiplier 1 of MobileNet's and EfficientNet's
  // convolutions): the blocked depthwise compute, vectors across 16 channels.
  bool depthwise() const { return group > 1 && group == c && m == c; }
  // The blocked NCHWc compute, in which each 16-channel output block reduces over whole input
  // blocks: group 1 with enough output channels; grouped convolutions whose groups hold whole
  // blocks (ResNeXt's wider stages); grouped convolutions whose groups are smaller than a block,
  // with as many outputs as inputs per group, as block-diagonal 16 x 16 weights (the narrow
  // stages: 16 / cg times the FLOPs, in the dense micro-kernel; a last partial block when the
  // channels are not a multiple of 16, as RegNet's 104 and 440).
  bool whole_block_groups() const { return group > 1 && cg() % block == 0 && mg() % block == 0; }
  bool block_diagonal() const {
    return group > 1 && !depthwise() && cg() == mg() && block % cg() == 0;
  }
  bool blocked() const {
    return (group == 1 && m >= 8) || whole_block_groups() || block_diagonal();
  }
  int64_t in_block() const { return group == 1 && c < block ? c : block; }
  // How many consecutive output blocks reduce over the same input blocks: all of them for group
  // 1, a group's for whole-block groups, one when each block has inputs of its own
  // (block-diagonal). A register tile wider than that loads a broadcast per output block instead
  // of sharing it (ResNeXt's 256-channel stage, 8 channels a group, ran 4-block tiles: 1.36x
  // oneDNN's time).
  int64_t shared_blocks() const {
    if (group == 1) return (m + block - 1) / block;
    return whole_block_groups() ? mg() / block : 1;
  }
  // A 1x1 window with a stride (ResNet's downsample convolutions): the data pack gathers the
  // positions the windows read, [.., OH, OW, ..], so that the reduction reads it at stride 1
  // (read in place, every output channel block re-read the whole strided input, which does not
  // stay in L2 at 1024 x 14 x 14: cnn_layer_bench, bench/RESULTS.md).
  bool gathers() const { return kh == 1 && kw == 1 && (sh > 1 || sw > 1); }
  // A 1x1 window at stride 1 without padding on a 2-D input (the pointwise convolutions of
  // ResNet, DenseNet, MobileNet): output position p reads input position p alone.
  bool pointwise() const {
    return spatial == 2 && kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 &&
           oh == h && ow == w;
  }
  // The strides at which the reduction reads the data pack.
  int64_t pack_sh() const { return gathers() ? 1 : sh; }
  int64_t pack_sw() const { return gathers() ? 1 : sw; }
  double flops() const { return 2.0 * n * m * oh * ow * (c / group) * kh * kw; }
};

// Resolves `node` (a Conv) for inputs of the given shapes, computed in channel blocks of `block`.
// InvalidArgument naming the node for 3-D convolutions and inconsistent shapes.
absl::StatusOr<Geometry> resolve(const Node& node, const Shape& x, const Shape& w, bool bias,
                                 int64_t block = kBlock);

// The channel block the convolutions of the standalone group `group` compute in: kSmallBlock when
// one of its inputs or outputs is blocked by it (an AVX2 target's layout), else kBlock.
int64_t compute_block(const Graph& group);

// The input in channel blocks of `ib`, padding included: [N, ceil(C/ib), HP, WP, ib], HP and WP
// the rows and columns the windows of g.oh x g.ow outputs read, at the strides g.pack_sh() and
// g.pack_sw() (tag "conv_data_pack").
te::Tensor pack_data(const std::string& name, const Geometry& g, const te::Tensor& x, int64_t ib);

// Whether the blocked compute of `g` reading `x` runs over the oh * ow positions as one axis
// (oh 1, ow oh * ow in its data pack and accumulator), so that a register tile need not divide a
// row: a pointwise convolution reading a kernel argument stored in blocks of the compute's own
// channel block, whole blocks, its pack then the argument itself, read in place (7x7 and 14x14
// maps had 7-column tiles; cnn_layer_bench, bench/RESULTS.md).
bool runs_flat(const Geometry& g, const te::Tensor& x);

// Whether the data pack `data` reads a kernel argument stored in blocks of the pack's own channel
// block (layout_views.h), so that its innermost loop, over the channels of a block, reads
// contiguously.
bool pack_reads_blocked(const te::Tensor& data, const Geometry& g);

// Schedules the data pack `data` of a conv group whose windows are those of g.oh x g.ow outputs:
// inlined when it would copy its input as it is (a blocked argument, no padding, whole blocks:
// the reduction reads the argument in place); else computed at `at` of `out` (the rows one
// parallel chunk reads), a vector of channels at a time when pack_reads_blocked (LLVM's
// vectorizers are off: a scalar pack of 16 channels per position cost as much as a depthwise
// convolution's 9 vector FMAs).
void schedule_pack(te::Schedule& s, const te::Tensor& data, const Geometry& g, te::Stage& out,
                   const te::IterVar& at);

// The ComputeFn of Conv.
absl::StatusOr<std::vector<te::Tensor>> compute(const Graph& graph, const Node& node,
                                                std::span<const te::Tensor> inputs);

// The schedule template of a group anchored at a Conv built by `compute`.
absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& group);

}  // namespace collage::te_ops::conv
