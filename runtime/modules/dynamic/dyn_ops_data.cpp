// NonZero, NonMaxSuppression and Unique in the dynamic module: the shapes of their outputs are
// what they compute. NonMaxSuppression and Unique run the algorithms the reference kernels use
// (dyn_nms.h, dyn_unique.h).
#include <cmath>
#include <cstring>
#include <type_traits>

#include "dyn_nms.h"
#include "dyn_unique.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Calls f with a typed pointer tag for the element types the operators compute on.
template <typename F>
void dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case COLLAGE_DTYPE_F32: f(static_cast<float*>(nullptr)); return;
    case COLLAGE_DTYPE_I64: f(static_cast<int64_t*>(nullptr)); return;
    case COLLAGE_DTYPE_I32: f(static_cast<int32_t*>(nullptr)); return;
    case COLLAGE_DTYPE_I8: f(static_cast<int8_t*>(nullptr)); return;
    case COLLAGE_DTYPE_BOOL: f(static_cast<uint8_t*>(nullptr)); return;
    default:
      throw KernelError("element type " + type_text(dtype, {}) + " is not supported here");
  }
}

void nonzero(const Value& x, Outputs& out) {
  const int64_t rank = std::max<int64_t>(static_cast<int64_t>(x.shape.size()), 1);
  const int64_t n = x.numel();
  std::vector<int64_t> hits;
  dispatch(x.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* v = x.as<T>();
    for (int64_t i = 0; i < n; ++i)
      if (v[i] != T(0)) hits.push_back(i);
  });
  const auto count = static_cast<int64_t>(hits.size());
  int64_t* o = out.make_as<int64_t>(0, {rank, count});
  const std::vector<int64_t> strides = strides_of(x.shape);
  for (int64_t j = 0; j < count; ++j) {
    if (x.shape.empty()) o[j] = 0;
    for (size_t d = 0; d < x.shape.size(); ++d)
      o[d * count + j] = hits[j] / strides[d] % x.shape[d];
  }
}

void nms(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value& boxes = in[0];
  const Value& scores = in[1];
  if (boxes.dtype != COLLAGE_DTYPE_F32 || scores.dtype != COLLAGE_DTYPE_F32 ||
      boxes.shape.size() != 3 || scores.shape.size() != 3 || boxes.shape[2] != 4 ||
      boxes.shape[0] != scores.shape[0] || boxes.shape[1] != scores.shape[2])
    throw KernelError("boxes " + type_text(boxes.dtype, boxes.shape) + " and scores " +
                      type_text(scores.dtype, scores.shape) +
                      " must be f32 [batches, boxes, 4] and [batches, classes, boxes]");
  NmsParams params;
  params.batches = boxes.shape[0];
  params.boxes = boxes.shape[1];
  params.classes = scores.shape[1];
  params.center_point_box = p.value(0, 0) == 1;
  auto scalar = [&](size_t i) -> const Value* {
    return i < in.size() && in[i].data && in[i].numel() == 1 ? &in[i] : nullptr;
  };
  if (const Value* v = scalar(2)) params.max_per_class = std::max<int64_t>(*v->as<int64_t>(), 0);
  if (const Value* v = scalar(3)) params.iou_threshold = *v->as<float>();
  if (const Value* v = scalar(4)) {
    params.has_score_threshold = true;
    params.score_threshold = *v->as<float>();
  }
  if (!(params.iou_threshold >= 0 && params.iou_threshold <= 1))
    throw KernelError("iou_threshold must be in [0, 1], got " +
                      std::to_string(params.iou_threshold));
  const std::vector<int64_t> selected =
      non_max_suppression(boxes.as<float>(), scores.as<float>(), params);
  int64_t* o = out.make_as<int64_t>(0, {static_cast<int64_t>(selected.size() / 3), 3});
  if (!selected.empty()) std::memcpy(o, selected.data(), selected.size() * sizeof(int64_t));
}

template <typename T>
int compare(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) - std::isnan(b);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

void unique(const DynParams& p, const Value& x, Outputs& out) {
  const int64_t all = p.value(0, kAllAxes);
  const auto rank = static_cast<int64_t>(x.shape.size());
  int64_t outer = 1, n = x.numel(), inner = 1, axis = -1;
  if (all != kAllAxes) {
    axis = axis_in(all, rank, "axis");
    n = x.shape[axis];
    for (int64_t d = 0; d < rank; ++d) {
      if (d < axis) outer *= x.shape[d];
      if (d > axis) inner *= x.shape[d];
    }
  }
  UniqueGroups groups;
  dispatch(x.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* v = x.as<T>();
    auto cmp = [&](int64_t i, int64_t j) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < inner; ++k)
          if (int c = compare(v[(o * n + i) * inner + k], v[(o * n + j) * inner + k])) return c;
      return 0;
    };
    groups = unique_groups(
        n, p.value(1, 1) != 0, [&](int64_t i, int64_t j) { return cmp(i, j) < 0; },
        [&](int64_t i, int64_t j) { return cmp(i, j) == 0; });
  });
  const auto count = static_cast<int64_t>(groups.first.size());
  std::vector<int64_t> y_shape{count};
  if (axis >= 0) {
    y_shape = x.shape;
    y_shape[axis] = count;
  }
  const size_t esize = element_size(x.dtype);
  uint8_t* y = out.make(0, y_shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < count; ++u)
      std::memcpy(y + (o * count + u) * inner * esize,
                  x.data + (o * n + groups.first[u]) * inner * esize, inner * esize);
  const std::vector<int64_t>* lists[] = {&groups.first, &groups.inverse, &groups.counts};
  for (size_t i = 1; i < out.count(); ++i) {
    const std::vector<int64_t>& l = *lists[i - 1];
    int64_t* o = out.make_as<int64_t>(i, {static_cast<int64_t>(l.size())});
    if (!l.empty()) std::memcpy(o, l.data(), l.size() * sizeof(int64_t));
  }
}

}  // namespace

bool run_data_dependent_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::nonzero:
      nonzero(in[0], out);
      return true;
    case DynOp::nms:
      nms(p, in, out);
      return true;
    case DynOp::unique:
      unique(p, in[0], out);
      return true;
    default:
      return false;
  }
}

}  // namespace collage::rt_dynamic
