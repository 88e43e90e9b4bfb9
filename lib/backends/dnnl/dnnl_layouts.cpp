// The blocked layouts a dnnl group takes at its boundary.
#include "backends/dnnl/dnnl_layouts.h"

#include <algorithm>
#include <numeric>

#include "backends/dnnl/dnnl_group.h"
#include "collage/ops/nn.h"

namespace collage::dnnl_backend {
namespace {

// Whether a Conv reading `x` with weights `w` runs oneDNN's blocked kernel for block `b`: every
// group's output channels (and with `input`, its input channels) fill whole blocks, or it is
// depthwise over whole blocks.
bool conv_blocks(const Node& conv, const Shape& x, const Shape& w, int64_t b, bool input) {
  const int64_t groups = conv.get<ConvAttrs>().group;
  const int64_t c = x[1], m = w[0];
  if (groups <= 0 || c % groups != 0 || m % groups != 0 || m % b != 0) return false;
  if (groups > 1 && groups == c && m == c) return true;
  const int64_t cg = c / groups, mg = m / groups;
  return mg % b == 0 && (groups == 1 ? !input || c % b == 0 : cg % b == 0);
}

}  // namespace

bool takes_layout(const Graph& group, ValueId v, const Layout& layout) {
  if (layout.plain()) return true;
  const TensorType& type = group.value(v).type;
  if ((layout.c_block != 8 && layout.c_block != 16) || type.dtype != DType::f32 ||
      type.shape.size() > 5 || !check_layout(layout, type).ok())
    return false;
  std::vector<NodeId> nodes(group.nodes().size());
  std::iota(nodes.begin(), nodes.end(), 0);
  auto plan = analyze_group(group, nodes, /*standalone=*/true);
  if (!plan.ok()) return false;
  const Node& anchor = group.node(plan->anchor_node);
  const Shape& out_shape = group.value(plan->output).type.shape;
  const bool conv = plan->anchor == Anchor::conv;
  if (!conv && plan->anchor != Anchor::pool && plan->anchor != Anchor::eltwise &&
      plan->anchor != Anchor::binary)
    return false;
  if (conv && (anchor.inputs.size() < 2 || anchor.inputs[1] == kNoValue)) return false;
  auto conv_ok = [&](bool input) {
    return conv_blocks(anchor, group.value(anchor.inputs[0]).type.shape,
                       group.value(anchor.inputs[1]).type.shape, layout.c_block, input);
  };
  if (v == plan->output) return !conv || conv_ok(/*input=*/false);
  // Every read of v is one the kernel takes blocked.
  bool read = false;
  for (const Node& n : group.nodes())
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != v) continue;
      read = true;
      const bool is_anchor = &n == &anchor;
      bool ok = false;
      if (is_anchor && plan->anchor == Anchor::binary)
        ok = type.shape == out_shape;
      else if (is_anchor)
        ok = i == 0 && (!conv || conv_ok(/*input=*/true));
      else
        ok =
            type.shape == out_shape &&
            std::any_of(plan->chain.begin(), plan->chain.end(), [&](const ChainStep& s) {
              return s.kind == ChainStep::Kind::binary && s.other == v && &group.node(s.node) == &n;
            });
      if (!ok) return false;
    }
  return read;
}

}  // namespace collage::dnnl_backend
