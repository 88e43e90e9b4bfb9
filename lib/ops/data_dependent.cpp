// NonZero, Unique and NonMaxSuppression: operators whose output shapes depend on their input
// values. Their inference gives a dynamic dimension (kDynamicDim) unless every input that decides
// the shape is a compile-time constant, in which case it computes the exact shape; the reference
// executor infers again on the actual inputs before running the kernel. NonMaxSuppression's and
// Unique's algorithms are the runtime's (runtime/modules/dynamic), so that an artifact computes
// what the reference does.
#include <cassert>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "collage/ops/data_dependent.h"
#include "core/str_cat.h"
#include "dyn_nms.h"
#include "dyn_unique.h"
#include "ops/op_sets.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// ---- NonZero -----------------------------------------------------------------------------------

// A scalar counts as a one-element vector (as ONNX Runtime has it).
int64_t nonzero_rank(const TensorType& t) {
  return std::max<int64_t>(static_cast<int64_t>(t.shape.size()), 1);
}

int64_t count_nonzero(const Tensor& x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x.numel(); ++i) n += x.get_as_double(i) != 0.0;
  return n;
}

absl::Status infer_nonzero(InferContext& ctx) {
  const TensorType& x = ctx.input(0);
  const Tensor* c = ctx.constant(0);
  ctx.set_output(0, {DType::i64, {nonzero_rank(x), c ? count_nonzero(*c) : kDynamicDim}});
  return absl::OkStatus();
}

absl::Status run_nonzero(const KernelArgs& k) {
  const Tensor& x = k.inputs[0];
  Tensor& out = k.outputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape().size());
  const int64_t count = out.shape()[1];
  const std::vector<int64_t> strides = shape_strides(x.shape());
  int64_t j = 0;
  for (int64_t i = 0; i < x.numel() && j < count; ++i) {
    if (x.get_as_double(i) == 0.0) continue;
    if (rank == 0) out.data<int64_t>()[j] = 0;
    for (int64_t d = 0; d < rank; ++d)
      out.data<int64_t>()[d * count + j] = i / strides[d] % x.shape()[d];
    ++j;
  }
  if (j != count)
    return absl::InternalError(str_cat("found ", j, " non-zero elements, ", count, " expected"));
  return absl::OkStatus();
}

// ---- Unique ------------------------------------------------------------------------------------

// X seen as `n` slices along the unique axis: slice i holds the elements (o, i, k) for o < outer,
// k < inner, at flat index (o * n + i) * inner + k.
struct SliceView {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t axis = -1;  // -1: every element is a slice
};

absl::StatusOr<SliceView> slice_view(const UniqueAttrs& a, const Shape& shape) {
  SliceView v;
  if (a.axis == UniqueAttrs::kAll) {
    v.n = shape_numel(shape);
    return v;
  }
  auto axis = normalize_axis(a.axis, static_cast<int64_t>(shape.size()));
  if (!axis) return absl::InvalidArgumentError(str_cat("axis ", a.axis, " is out of range"));
  v.axis = *axis;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < v.axis) v.outer *= shape[d];
    if (d > v.axis) v.inner *= shape[d];
  }
  v.n = shape[v.axis];
  return v;
}

// Elements ordered as numbers: NaNs equal to each other and above everything, -0 equal to 0.
template <typename T>
int compare_values(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) - std::isnan(b);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

absl::StatusOr<rt_dynamic::UniqueGroups> unique_groups(const Tensor& x, const UniqueAttrs& a) {
  auto view = slice_view(a, x.shape());
  if (!view.ok()) return view.status();
  const SliceView v = *view;
  const bool half = x.dtype() == DType::f16 || x.dtype() == DType::bf16;
  rt_dynamic::UniqueGroups groups;
  absl::Status s = dispatch_dtype(x.dtype(), [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* data = x.data<T>();
    auto compare = [&](int64_t i, int64_t j) {
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t k = 0; k < v.inner; ++k) {
          const int64_t ei = (o * v.n + i) * v.inner + k, ej = (o * v.n + j) * v.inner + k;
          const int c = half ? compare_values(x.get_as_double(ei), x.get_as_double(ej))
                             : compare_values(data[ei], data[ej]);
          if (c) return c;
        }
      return 0;
    };
    groups = rt_dynamic::unique_groups(
        v.n, a.sorted != 0, [&](int64_t i, int64_t j) { return compare(i, j) < 0; },
        [&](int64_t i, int64_t j) { return compare(i, j) == 0; });
  });
  if (!s.ok()) return s;
  return groups;
}

absl::Status infer_unique(InferContext& ctx) {
  const auto& a = ctx.attrs<UniqueAttrs>();
  const TensorType& x = ctx.input(0);
  if (a.sorted != 0 && a.sorted != 1)
    return ctx.error(str_cat("sorted must be 0 or 1, got ", a.sorted));
  auto view = slice_view(a, x.shape);
  if (!view.ok()) return ctx.error(std::string(view.status().message()));
  int64_t unique = kDynamicDim;
  if (const Tensor* c = ctx.constant(0)) {
    auto groups = unique_groups(*c, a);
    if (!groups.ok()) return ctx.error(std::string(groups.status().message()));
    unique = static_cast<int64_t>(groups->first.size());
  }
  const int outputs = ctx.requested_outputs() > 0 ? ctx.requested_outputs() : 1;
  if (outputs > 4) return ctx.error(str_cat("has 4 outputs, ", outputs, " requested"));
  Shape y = {unique};
  if (view->axis >= 0) {
    y = x.shape;
    y[view->axis] = unique;
  }
  // The number of slices is dynamic when the input's axis (or any dimension) is.
  const int64_t slices = x.is_dynamic() && (view->axis < 0 || x.shape[view->axis] == kDynamicDim)
                             ? kDynamicDim
                             : view->n;
  ctx.set_output(0, {x.dtype, y});
  if (outputs > 1) ctx.set_output(1, {DType::i64, {unique}});
  if (outputs > 2) ctx.set_output(2, {DType::i64, {slices}});
  if (outputs > 3) ctx.set_output(3, {DType::i64, {unique}});
  return absl::OkStatus();
}

absl::Status run_unique(const KernelArgs& k) {
  const Tensor& x = k.inputs[0];
  const auto& a = k.get<UniqueAttrs>();
  auto groups = unique_groups(x, a);
  if (!groups.ok()) return groups.status();
  const SliceView v = *slice_view(a, x.shape());
  const auto unique = static_cast<int64_t>(groups->first.size());
  Tensor& y = k.outputs[0];
  if (y.numel() != unique * v.outer * v.inner)
    return absl::InternalError("output Y was not allocated for the unique slices");
  const size_t esize = dtype_size(x.dtype());
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t u = 0; u < unique; ++u)
      std::memcpy(static_cast<uint8_t*>(y.raw()) + ((o * unique + u) * v.inner) * esize,
                  static_cast<const uint8_t*>(x.raw()) +
                      ((o * v.n + groups->first[u]) * v.inner) * esize,
                  v.inner * esize);
  const std::vector<int64_t>* lists[] = {&groups->first, &groups->inverse, &groups->counts};
  for (size_t i = 1; i < k.outputs.size(); ++i)
    if (!lists[i - 1]->empty())  // an empty X: no lists, and memcpy must not see their null data
      std::memcpy(k.outputs[i].raw(), lists[i - 1]->data(), lists[i - 1]->size() * sizeof(int64_t));
  return absl::OkStatus();
}

// ---- NonMaxSuppression -------------------------------------------------------------------------

// The thresholds and box limit from the optional scalar inputs (defaults where absent).
absl::Status nms_params(const std::vector<const Tensor*>& scalars, const Shape& boxes,
                        const Shape& scores, bool center, rt_dynamic::NmsParams* p) {
  p->batches = boxes[0];
  p->boxes = boxes[1];
  p->classes = scores[1];
  p->center_point_box = center;
  if (scalars[0]) p->max_per_class = std::max<int64_t>(scalars[0]->get_as_int64(0), 0);
  if (scalars[1]) p->iou_threshold = static_cast<float>(scalars[1]->get_as_double(0));
  if (scalars[2]) {
    p->has_score_threshold = true;
    p->score_threshold = static_cast<float>(scalars[2]->get_as_double(0));
  }
  if (!(p->iou_threshold >= 0 && p->iou_threshold <= 1))
    return absl::InvalidArgumentError(
        str_cat("iou_threshold must be in [0, 1], got ", p->iou_threshold));
  return absl::OkStatus();
}

absl::Status infer_nms(InferContext& ctx) {
  const TensorType& boxes = ctx.input(0);
  const TensorType& scores = ctx.input(1);
  if (ctx.attrs<NonMaxSuppressionAttrs>().center_point_box != 0 &&
      ctx.attrs<NonMaxSuppressionAttrs>().center_point_box != 1)
    return ctx.error("center_point_box must be 0 or 1");
  if (boxes.dtype != DType::f32 || scores.dtype != DType::f32)
    return ctx.error(str_cat("boxes and scores must be f32, got ", type_to_string(boxes), " and ",
                             type_to_string(scores)));
  if (boxes.shape.size() != 3 || scores.shape.size() != 3)
    return ctx.error(str_cat("boxes and scores must have rank 3, got ", type_to_string(boxes),
                             " and ", type_to_string(scores)));
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDynamicDim || b == kDynamicDim; };
  if (!agree(boxes.shape[2], 4) || !agree(boxes.shape[0], scores.shape[0]) ||
      !agree(boxes.shape[1], scores.shape[2]))
    return ctx.error(str_cat("boxes must be [batches, boxes, 4] and scores [batches, classes, "
                             "boxes], got ",
                             shape_to_string(boxes.shape), " and ", shape_to_string(scores.shape)));
  static const char* const kScalars[] = {"max_output_boxes_per_class", "iou_threshold",
                                         "score_threshold"};
  bool all_constant = ctx.constant(0) && ctx.constant(1);
  std::vector<const Tensor*> scalars;
  for (int i = 2; i < 5; ++i) {
    if (!ctx.has_input(i)) {
      scalars.push_back(nullptr);
      continue;
    }
    const TensorType& t = ctx.input(i);
    const DType want = i == 2 ? DType::i64 : DType::f32;
    if (t.dtype != want || t.numel() != 1)
      return ctx.error(str_cat(kScalars[i - 2], " must be a single ", dtype_name(want),
                               ", got ", type_to_string(t)));
    scalars.push_back(ctx.constant(i));
    all_constant = all_constant && ctx.constant(i);
  }
  int64_t selected = kDynamicDim;
  if (all_constant) {
    rt_dynamic::NmsParams p;
    const bool center = ctx.attrs<NonMaxSuppressionAttrs>().center_point_box == 1;
    if (absl::Status s = nms_params(scalars, boxes.shape, scores.shape, center, &p); !s.ok())
      return ctx.error(std::string(s.message()));
    selected = static_cast<int64_t>(
        rt_dynamic::non_max_suppression(ctx.constant(0)->data<float>(),
                                        ctx.constant(1)->data<float>(), p)
            .size() /
        3);
  }
  ctx.set_output(0, {DType::i64, {selected, 3}});
  return absl::OkStatus();
}

absl::Status run_nms(const KernelArgs& k) {
  std::vector<const Tensor*> scalars;
  for (size_t i = 2; i < 5; ++i)
    scalars.push_back(i < k.inputs.size() && !k.inputs[i].empty() ? &k.inputs[i] : nullptr);
  rt_dynamic::NmsParams p;
  const bool center = k.get<NonMaxSuppressionAttrs>().center_point_box == 1;
  if (absl::Status s =
          nms_params(scalars, k.inputs[0].shape(), k.inputs[1].shape(), center, &p);
      !s.ok())
    return s;
  const std::vector<int64_t> selected =
      rt_dynamic::non_max_suppression(k.inputs[0].data<float>(), k.inputs[1].data<float>(), p);
  Tensor& out = k.outputs[0];
  if (out.numel() != static_cast<int64_t>(selected.size()))
    return absl::InternalError("the output was not allocated for the selected boxes");
  std::memcpy(out.raw(), selected.data(), selected.size() * sizeof(int64_t));
  return absl::OkStatus();
}

OpDef dynamic_op(OpDef d) {
  d.dynamic_shapes = true;
  return d;
}

}  // namespace

void register_data_dependent_ops(OpRegistry& r) {
  for (OpDef d : {make_op<NoAttrs>("NonZero", FusionKind::opaque, 1, 1, infer_nonzero,
                                   run_nonzero),
                  make_op<UniqueAttrs>("Unique", FusionKind::opaque, 1, 1, infer_unique,
                                       run_unique),
                  make_op<NonMaxSuppressionAttrs>("NonMaxSuppression", FusionKind::opaque, 2, 5,
                                                  infer_nms, run_nms)}) {
    [[maybe_unused]] absl::Status s = r.add(dynamic_op(std::move(d)));
    assert(s.ok());
  }
}

}  // namespace collage::ops
