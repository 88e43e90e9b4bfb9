// Convolution in tensor expressions: geometry, the two computes (direct NCHW, blocked NCHWc with
// packed data and weights) and the tunable schedule template of a group anchored at a Conv.
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

// Output-channel block of the blocked layout: one AVX-512 vector of f32.
constexpr int64_t kBlock = 16;

// A Conv's resolved geometry; 1-D convolutions have h == kh == oh == 1.
struct Geometry {
  int spatial = 2;  // 1 or 2
  int64_t n = 1, c = 1, h = 1, w = 1;
  int64_t m = 1, kh = 1, kw = 1, oh = 1, ow = 1;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pl = 0;
  int64_t group = 1;
  bool bias = false;
  // Blocked NCHWc compute (group 1 and enough output channels); direct NCHW otherwise.
  bool blocked() const { return group == 1 && m >= 8; }
  int64_t in_block() const { return c < kBlock ? c : kBlock; }
  double flops() const { return 2.0 * n * m * oh * ow * (c / group) * kh * kw; }
};

// Resolves `node` (a Conv) for inputs of the given shapes. InvalidArgument naming the node for
// 3-D convolutions and inconsistent shapes.
absl::StatusOr<Geometry> resolve(const Node& node, const Shape& x, const Shape& w, bool bias);

// The ComputeFn of Conv.
absl::StatusOr<std::vector<te::Tensor>> compute(const Graph& graph, const Node& node,
                                                std::span<const te::Tensor> inputs);

// The schedule template of a group anchored at a Conv built by `compute`.
absl::StatusOr<tune::ScheduleTemplate> schedule_template(const AnchorGroup& group);

}  // namespace collage::te_ops::conv
