// The openvino backend's candidate rules.
#include "backends/openvino/openvino_rules.h"

#include <algorithm>

#include "backends/openvino/region_ends.h"
#include "backends/openvino/region_onnx.h"
#include "collage/ops/nn.h"
#include "collage/ops/tensor.h"

namespace collage::openvino_backend {
namespace {

bool is_chain_kind(FusionKind k) {
  return k == FusionKind::elementwise || k == FusionKind::broadcast;
}

// The one node reading n's single output, or -1 when its result leaves the chain another way.
NodeId single_user(const Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.outputs.size() != 1) return -1;
  const ValueId v = node.outputs[0];
  if (std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end()) return -1;
  const std::vector<NodeId>& users = g.users()[v];
  if (users.empty()) return -1;
  for (NodeId u : users)
    if (u != users[0]) return -1;
  return users[0];
}

// Whether some value flows between node m and a node of `set`, either way.
bool touches(const Graph& g, const NodeSet& set, NodeId m) {
  for (ValueId in : g.node(m).inputs)
    if (in != kNoValue && g.value(in).kind == ValueKind::node_output &&
        set.contains(g.value(in).producer))
      return true;
  for (ValueId out : g.node(m).outputs)
    for (NodeId u : g.users()[out])
      if (set.contains(u)) return true;
  return false;
}

bool has_empty_value(const Graph& g, const Node& n) {
  for (const std::vector<ValueId>* values : {&n.inputs, &n.outputs})
    for (ValueId v : *values)
      if (v != kNoValue && g.value(v).type.numel() == 0) return true;
  return false;
}

bool has_value_of(const Graph& g, const Node& n, DType dtype) {
  for (const std::vector<ValueId>* values : {&n.inputs, &n.outputs})
    for (ValueId v : *values)
      if (v != kNoValue && g.value(v).type.dtype == dtype) return true;
  return false;
}

// Whether a ceil-mode pooling of `n` keeps a last window that ONNX drops (one that would start
// in the end padding): OpenVINO's output is then one larger than the node's.
bool keeps_dropped_window(const Graph& g, const Node& n, const std::vector<int64_t>& pads,
                          const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& dilations,
                          const std::vector<int64_t>& kernel) {
  const Shape& in = g.value(n.inputs[0]).type.shape;
  const Shape& out = g.value(n.outputs[0]).type.shape;
  const size_t k = kernel.size();
  if (in.size() != k + 2 || out.size() != k + 2) return true;
  for (size_t i = 0; i < k; ++i) {
    const int64_t pb = pads.empty() ? 0 : pads[i], pe = pads.empty() ? 0 : pads[i + k];
    const int64_t s = strides.empty() ? 1 : strides[i];
    const int64_t d = dilations.empty() ? 1 : dilations[i];
    const int64_t span = in[i + 2] + pb + pe - ((kernel[i] - 1) * d + 1);
    if (span < 0 || (span + s - 1) / s + 1 != out[i + 2]) return true;
  }
  return false;
}

// Variants OpenVINO computes differently from ONNX Runtime, or cannot read (found by the
// operator cases of tests/ops, test_openvino_op_cases.cpp).
bool differs_from_onnx(const Graph& g, const Node& n) {
  const std::string& op = n.op_name();
  // i8 arithmetic: OpenVINO does not wrap around as ONNX Runtime does.
  if (has_value_of(g, n, DType::i8)) return true;
  // 16-bit LayerNormalization: ONNX rounds the normalised value, the scaled one and the sum with
  // the bias to the type (stash_type 1); OpenVINO computes in f32 and rounds once.
  if (op == "LayerNormalization" &&
      (has_value_of(g, n, DType::f16) || has_value_of(g, n, DType::bf16)))
    return true;
  // Pad's wrap mode (ONNX 19) is not among the modes the region export writes for OpenVINO.
  if (op == "Pad") return n.get<PadAttrs>().mode == "wrap";
  if (op == "AveragePool") {
    // Ceil-mode windows that include padding: OpenVINO divides the last window by a smaller
    // count than ONNX Runtime.
    const auto& a = n.get<AveragePoolAttrs>();
    // Dilated averaging (ONNX 19) is beyond OpenVINO's AvgPool.
    for (int64_t d : a.dilations)
      if (d != 1) return true;
    return a.ceil_mode != 0 &&
           (a.count_include_pad != 0 ||
            keeps_dropped_window(g, n, a.pads, a.strides, {}, a.kernel_shape));
  }
  if (op == "MaxPool") {
    const auto& a = n.get<MaxPoolAttrs>();
    if (n.outputs.size() > 1) return true;  // Indices: OpenVINO numbers them differently
    return a.ceil_mode != 0 &&
           keeps_dropped_window(g, n, a.pads, a.strides, a.dilations, a.kernel_shape);
  }
  if (op == "Resize") {
    // OpenVINO's ONNX frontend reads no tf_crop_and_resize; its cubic weights outside the
    // input and its round_prefer_ceil differ from ONNX Runtime's.
    const auto& a = n.get<ResizeAttrs>();
    return a.coordinate_transformation_mode == "tf_crop_and_resize" ||
           a.coordinate_transformation_mode == "half_pixel_symmetric" || a.antialias != 0 ||
           !a.axes.empty() || a.keep_aspect_ratio_policy != "stretch" ||
           (a.mode == "cubic" && a.exclude_outside != 0) || a.nearest_mode == "round_prefer_ceil";
  }
  return false;
}

// Operators OpenVINO removes: a group of nothing else would return its input unchanged, which
// OpenVINO's CPU plugin does not copy into the output buffer.
bool is_pass_through(const Node& n) {
  return n.op_name() == "Identity" || n.op_name() == "Dropout";
}

}  // namespace

bool only_pass_through(const Graph& g, const NodeSet& s) {
  for (NodeId m : s.to_vector())
    if (!is_pass_through(g.node(m))) return false;
  return true;
}

std::vector<bool> supported_nodes(const Graph& g) {
  std::vector<bool> out(g.nodes().size(), false);
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    // Zero-element tensors: OpenVINO's CPU plugin fails on some (a division by zero in Gather).
    out[i] = has_onnx_form(n.op_name()) && !n.outputs.empty() && !has_empty_value(g, n) &&
             !differs_from_onnx(g, n);
  }
  return out;
}

std::vector<NodeSet> single_nodes(const Graph& g, const std::vector<bool>& supported) {
  std::vector<NodeSet> out;
  for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n)
    if (supported[n] && !is_pass_through(g.node(n)))
      out.push_back(NodeSet::of(g.nodes().size(), {n}));
  return out;
}

std::vector<NodeSet> chains(const Graph& g, const GraphReachability& reach,
                            const RuleOptions& options, const std::vector<bool>& supported) {
  const size_t n = g.nodes().size();
  std::vector<NodeSet> out;
  for (NodeId a = 0; a < static_cast<NodeId>(n); ++a) {
    if (!supported[a]) continue;
    NodeSet set = NodeSet::of(n, {a});
    size_t size = 1;
    for (NodeId cur = a; static_cast<int>(size) < options.max_depth;) {
      const NodeId u = single_user(g, cur);
      if (u < 0 || !supported[u] || !is_chain_kind(g.node(u).op->fusion)) break;
      set.insert(u);
      ++size;
      if (!reach.is_convex(set)) break;
      out.push_back(set);
      cur = u;
    }
  }
  return out;
}

std::vector<NodeSet> regions(const Graph& g, const GraphReachability& reach,
                             const std::vector<bool>& supported) {
  const auto n = static_cast<NodeId>(g.nodes().size());
  std::vector<bool> taken(n, false);
  std::vector<NodeSet> out;
  for (NodeId start = 0; start < n; ++start) {
    if (!supported[start] || taken[start]) continue;
    NodeSet region = NodeSet::of(n, {start});
    for (bool grew = true; grew;) {
      grew = false;
      for (NodeId m = 0; m < n; ++m) {
        if (!supported[m] || taken[m] || region.contains(m) || !touches(g, region, m)) continue;
        NodeSet bigger = region;
        bigger.insert(m);
        if (!reach.is_convex(bigger)) continue;
        region = std::move(bigger);
        grew = true;
      }
    }
    for (NodeId m : region.to_vector()) taken[m] = true;
    if (region.count() > 1 && !only_pass_through(g, region)) out.push_back(std::move(region));
  }
  return out;
}

void add_openvino_rules(Backend& b) {
  b.add_pattern_rule("openvino.op", [](const Graph& g, const GraphReachability&,
                                       const RuleOptions&) {
    return single_nodes(g, supported_nodes(g));
  });
  b.add_pattern_rule("openvino.chain", [](const Graph& g, const GraphReachability& reach,
                                          const RuleOptions& options) {
    return chains(g, reach, options, supported_nodes(g));
  });
  b.add_pattern_rule("openvino.region", [](const Graph& g, const GraphReachability& reach,
                                           const RuleOptions&) {
    return regions(g, reach, supported_nodes(g));
  });
  b.add_pattern_rule("openvino.region_end", [](const Graph& g, const GraphReachability& reach,
                                               const RuleOptions& options) {
    return region_ends(g, regions(g, reach, supported_nodes(g)), options);
  });
}

}  // namespace collage::openvino_backend
