// Pad: constant, reflect, edge and wrap padding, over every axis or the listed ones; negative
// pads crop.
#include <algorithm>
#include <limits>
#include <string>

#include "collage/ops/tensor.h"
#include "core/str_cat.h"
#include "ops/op_util.h"
#include "ops/tensor_copy.h"

namespace collage::ops {
namespace {

enum class PadMode { constant, reflect, edge, wrap };

// Per axis: the kept region of the input [crop_begin, crop_begin + kept) and the padding added
// before and after it.
struct PadAxis {
  int64_t crop_begin, kept, before, after;
};

absl::StatusOr<PadMode> parse_mode(const std::string& m) {
  if (m == "constant") return PadMode::constant;
  if (m == "reflect") return PadMode::reflect;
  if (m == "edge") return PadMode::edge;
  if (m == "wrap") return PadMode::wrap;
  return absl::InvalidArgumentError(
      str_cat("unknown mode '", m, "' (expected constant, reflect, edge or wrap)"));
}

// The pads of every axis: `pads` as given, or spread from the axes listed in `axes`.
absl::StatusOr<std::vector<int64_t>> full_pads(const PadAttrs& a, size_t rank) {
  if (a.axes.empty()) {
    if (a.pads.size() != 2 * rank)
      return absl::InvalidArgumentError(str_cat("pads ", list_to_string(a.pads), " has ",
                                                a.pads.size(),
                                                " entries, expected 2 * rank = ", 2 * rank));
    return a.pads;
  }
  const size_t k = a.axes.size();
  if (a.pads.size() != 2 * k)
    return absl::InvalidArgumentError(str_cat("pads ", list_to_string(a.pads), " has ",
                                              a.pads.size(), " entries for the ", k, " axes ",
                                              list_to_string(a.axes)));
  std::vector<int64_t> full(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < k; ++i) {
    auto d = normalize_axis(a.axes[i], static_cast<int64_t>(rank));
    if (!d)
      return absl::InvalidArgumentError(
          str_cat("axis ", a.axes[i], " is out of range for rank ", rank));
    if (seen[*d])
      return absl::InvalidArgumentError(str_cat("axis ", a.axes[i], " is listed twice"));
    seen[*d] = true;
    full[*d] = a.pads[i];
    full[*d + rank] = a.pads[i + k];
  }
  return full;
}

absl::StatusOr<std::vector<PadAxis>> plan_pad(const PadAttrs& a, const Shape& in) {
  const size_t rank = in.size();
  auto pads = full_pads(a, rank);
  if (!pads.ok()) return pads.status();
  auto mode = parse_mode(a.mode);
  if (!mode.ok()) return mode.status();
  std::vector<PadAxis> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = (*pads)[d], e = (*pads)[d + rank];
    // Negated and summed with overflow checks: mutated models give pads near the int64 limits.
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    int64_t crop = 0;
    const bool huge = b == kMin || e == kMin ||
                      __builtin_add_overflow(std::max<int64_t>(0, -b), std::max<int64_t>(0, -e),
                                             &crop);
    if (huge || crop > in[d])
      return absl::InvalidArgumentError(
          str_cat("pads ", list_to_string(a.pads), " crop ",
                  huge ? std::string("more than 2^63 - 1") : std::to_string(crop),
                  " elements from axis ", d, " of size ", in[d]));
    PadAxis p{std::max<int64_t>(0, -b), in[d] - crop, std::max<int64_t>(0, b),
              std::max<int64_t>(0, e)};
    int64_t padded;
    if (__builtin_add_overflow(p.before, p.kept, &padded) ||
        __builtin_add_overflow(padded, p.after, &padded))
      return absl::InvalidArgumentError(str_cat("pads ", list_to_string(a.pads), " make axis ",
                                                d, " longer than 2^63 - 1 elements"));
    if (*mode != PadMode::constant && p.kept == 0 && p.before + p.after > 0)
      return absl::InvalidArgumentError(
          str_cat("mode '", a.mode, "' cannot pad axis ", d, ", which is empty"));
    axes[d] = p;
  }
  return axes;
}

absl::Status infer_pad(InferContext& ctx) {
  const TensorType& in = ctx.input(0);
  auto plan = plan_pad(ctx.attrs<PadAttrs>(), in.shape);
  if (!plan.ok()) return ctx.error(std::string(plan.status().message()));
  Shape out(in.shape.size());
  for (size_t d = 0; d < out.size(); ++d) {
    const PadAxis& p = (*plan)[d];
    out[d] = p.before + p.kept + p.after;
  }
  ctx.set_output(0, {in.dtype, out});
  return absl::OkStatus();
}

// Index into the kept region [0, n) for padded position i (i < 0 or i >= n lie in the padding).
int64_t reflect_index(int64_t i, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - i;
}

absl::Status run_pad(const KernelArgs& k) {
  const auto& a = k.get<PadAttrs>();
  const Tensor& in = k.inputs[0];
  Tensor& out = k.outputs[0];
  auto plan = plan_pad(a, in.shape());
  if (!plan.ok()) return plan.status();
  const PadMode mode = *parse_mode(a.mode);
  const size_t esize = dtype_size(in.dtype());
  const std::vector<int64_t> in_strides = shape_strides(in.shape());
  if (mode == PadMode::constant) {
    unsigned char value[8];
    store_float_as(a.value, in.dtype(), value);
    fill_elements(out.raw(), out.numel(), esize, value);
    Shape kept(in.shape().size());
    StridedView src{in_strides, 0}, dst = dense_view(out.shape());
    for (size_t d = 0; d < kept.size(); ++d) {
      const PadAxis& p = (*plan)[d];
      kept[d] = p.kept;
      src.offset += p.crop_begin * in_strides[d];
      dst.offset += p.before * dst.strides[d];
    }
    copy_strided(kept, esize, out.raw(), dst, in.raw(), src);
    return absl::OkStatus();
  }
  // An empty output may still have an axis of any length (another axis is 0): nothing to
  // gather, and no index table for that axis.
  if (out.numel() == 0) return absl::OkStatus();
  std::vector<std::vector<int64_t>> tables(in.shape().size());
  for (size_t d = 0; d < tables.size(); ++d) {
    const PadAxis& p = (*plan)[d];
    auto& t = tables[d];
    t.resize(static_cast<size_t>(out.shape()[d]));
    for (int64_t o = 0; o < out.shape()[d]; ++o) {
      const int64_t i = o - p.before;
      const int64_t j = mode == PadMode::edge   ? std::clamp<int64_t>(i, 0, p.kept - 1)
                        : mode == PadMode::wrap ? (i % p.kept + p.kept) % p.kept
                                                : reflect_index(i, p.kept);
      t[o] = (p.crop_begin + j) * in_strides[d];
    }
  }
  gather_by_axis(esize, out.raw(), in.raw(), tables, nullptr);
  return absl::OkStatus();
}

}  // namespace

void register_pad_op(OpRegistry& r) {
  add_tensor_op(r, make_op<PadAttrs>("Pad", FusionKind::injective, 1, 1, infer_pad, run_pad));
}

}  // namespace collage::ops
