// The float32 form of each split rule (see tree_thresholds.h).
#include "frontends/trees/tree_thresholds.h"

#include <cmath>
#include <limits>

#include "core/str_cat.h"
#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The largest float32 that is <= t (t not NaN).
float round_down_to_float(double t) {
  float f = static_cast<float>(t);
  if (static_cast<double>(f) > t) f = std::nextafter(f, -kInf);
  return f;
}

}  // namespace

absl::StatusOr<FloatSplit> float_split(const TreeEnsemble& m, size_t tree, int32_t node) {
  const TreeNode& n = m.trees[tree].nodes[node];
  FloatSplit s;
  s.feature = n.feature;
  // The graph input is float32, so x is always a float32 value; only the threshold needs care.
  //  - less_f32:       x < float(t) as it stands.
  //  - less_equal_f32: for floats, x <= f  <=>  x < nextafter(f, +inf).
  //  - less_equal_f64: LightGBM compares double(x) <= t. With f the largest float <= t, a float x
  //    satisfies double(x) <= t exactly when x <= f (no float lies in (f, t]), which is
  //    x < nextafter(f, +inf). When t is below every finite float, f = -inf and the test becomes
  //    x < -FLT_MAX (only -inf goes left); when t >= FLT_MAX it becomes x < +inf (+inf goes
  //    right, as double(+inf) <= t is false for a finite t).
  // Only `<= +inf` has no float32 form: x = +inf must go left, and nothing is above +inf.
  double t = n.threshold;
  float f = 0.f;
  switch (n.compare) {
    case TreeCompare::less_f32:
      s.threshold = static_cast<float>(t);
      break;
    case TreeCompare::less_equal_f32:
    case TreeCompare::less_equal_f64:
      f = n.compare == TreeCompare::less_equal_f32 ? static_cast<float>(t) : round_down_to_float(t);
      if (f == kInf)
        return absl::UnimplementedError(str_cat(
            model_label(m), ": tree ", tree, " node ", node,
            " compares x <= +inf, which has no float32 form (x = +inf must go left)"));
      s.threshold = std::nextafter(f, kInf);
      break;
  }
  switch (n.missing) {
    case TreeMissing::nan:
      s.nan_left = n.default_left;
      break;
    case TreeMissing::nan_is_zero:
      // LightGBM MissingType::None: NaN is compared as 0.
      s.nan_left = 0.f < s.threshold;
      break;
    case TreeMissing::zero_or_nan:
      // LightGBM MissingType::Zero: |x| <= kZeroThreshold (1e-35f) is missing, like NaN.
      s.nan_left = n.default_left;
      s.zero_band = std::nextafter(1e-35f, kInf);
      break;
  }
  return s;
}

bool has_zero_band(const TreeEnsemble& m) {
  for (const Tree& t : m.trees)
    for (const TreeNode& n : t.nodes)
      if (!n.is_leaf() && n.missing == TreeMissing::zero_or_nan) return true;
  return false;
}

}  // namespace collage
