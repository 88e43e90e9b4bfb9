// Lowering of ReduceSum/ReduceMean/ReduceMax and Softmax/LogSoftmax to Eigen kernels over an
// outer x extent x inner view of the input.
#include <set>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "eigen_lowering.h"
#include "ops/op_util.h"

namespace collage::eigen {
namespace {

int64_t numel_of(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= s[i];
  return n;
}

}  // namespace

absl::StatusOr<LoweredKernel> lower_reduce(const Graph& g, const Node& node, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  const auto& attrs = node.get<ReduceAttrs>();
  const Shape& xs = g.value(node.inputs[0]).type.shape;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (attrs.axes.empty() && attrs.noop_with_empty_axes)
    return unsupported(node, "a reduction over no axes is a copy");
  std::set<int64_t> axes;
  for (int64_t a : attrs.axes) {
    std::optional<int64_t> axis = ops::normalize_axis(a, rank);
    if (!axis) return unsupported(node, str_cat("axis ", a, " is out of range"));
    axes.insert(*axis);
  }
  if (attrs.axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.insert(a);
  rt_eigen::ReduceParams p;
  if (axes.empty()) {
    p.outer = numel_of(xs, 0, xs.size()), p.extent = 1, p.inner = 1;
  } else {
    // The reduced axes must form one block (size-1 axes between them do not matter).
    const size_t first = static_cast<size_t>(*axes.begin()),
                 last = static_cast<size_t>(*axes.rbegin());
    for (size_t a = first; a <= last; ++a)
      if (!axes.count(static_cast<int64_t>(a)) && xs[a] != 1)
        return unsupported(node, "reduced axes must be adjacent");
    p.outer = numel_of(xs, 0, first);
    p.extent = numel_of(xs, first, last + 1);
    p.inner = numel_of(xs, last + 1, xs.size());
  }
  if (p.extent == 0) return unsupported(node, "reduction over an empty axis");
  const std::string& op = node.op_name();
  p.op = op == "ReduceSum"    ? rt_eigen::ReduceOp::sum
         : op == "ReduceMean" ? rt_eigen::ReduceOp::mean
                              : rt_eigen::ReduceOp::max;
  absl::StatusOr<rt_eigen::OperandRef> rx = ops.ref(node.inputs[0]);
  if (!rx.ok()) return rx.status();
  p.x = *rx;
  return LoweredKernel{rt_eigen::kEntryReduce, rt_eigen::encode_params(p), ops.take_constants()};
}

absl::StatusOr<LoweredKernel> lower_softmax(const Graph& g, const Node& node, OperandMap& ops) {
  if (absl::Status s = require_f32(node, g); !s.ok()) return s;
  const Shape& xs = g.value(node.inputs[0]).type.shape;
  std::optional<int64_t> axis =
      ops::normalize_axis(node.get<SoftmaxAttrs>().axis, static_cast<int64_t>(xs.size()));
  if (!axis) return unsupported(node, "axis is out of range");
  rt_eigen::SoftmaxParams p;
  const size_t a = static_cast<size_t>(*axis);
  p.outer = numel_of(xs, 0, a);
  p.extent = xs[a];
  p.inner = numel_of(xs, a + 1, xs.size());
  p.log = node.op_name() == "LogSoftmax";
  if (p.extent == 0) return unsupported(node, "softmax over an empty axis");
  absl::StatusOr<rt_eigen::OperandRef> rx = ops.ref(node.inputs[0]);
  if (!rx.ok()) return rx.status();
  p.x = *rx;
  return LoweredKernel{rt_eigen::kEntrySoftmax, rt_eigen::encode_params(p), ops.take_constants()};
}

}  // namespace collage::eigen
