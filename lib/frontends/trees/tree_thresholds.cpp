// The float32 form of each split rule (see tree_thresholds.h).
#include "frontends/trees/tree_thresholds.h"

#include <cmath>
#include <limits>

#include "frontends/trees/tree_util.h"

namespace collage {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// The smallest float32 that is >= t, and the largest that is <= t (t not NaN).
float round_up_to_float(double t) {
  float f = nearest_float(t);
  if (static_cast<double>(f) < t) f = std::nextafter(f, kInf);
  return f;
}

float round_down_to_float(double t) {
  float f = nearest_float(t);
  if (static_cast<double>(f) > t) f = std::nextafter(f, -kInf);
  return f;
}

}  // namespace

float float_bound_less_equal(double t) {
  // With f the largest float <= t, a float x satisfies double(x) <= t exactly when x <= f (no
  // float lies in (f, t]), which is x < nextafter(f, +inf). t below every finite float gives
  // f = -inf and the bound -FLT_MAX (only -inf passes); t >= FLT_MAX gives the bound +inf.
  return std::nextafter(round_down_to_float(t), kInf);
}

FloatSplit float_split(const TreeEnsemble& m, size_t tree, int32_t node) {
  const TreeNode& n = m.trees[tree].nodes[node];
  FloatSplit s;
  s.feature = n.feature;
  // The graph input is float32, so x is always a float32 value; only the threshold needs care.
  //  - less_f32:       x < float(t) as it stands.
  //  - less_equal_f32: for floats, x <= f  <=>  x < nextafter(f, +inf).
  //  - less_equal_f64: see float_bound_less_equal.
  //  - less_f64:       a float x satisfies double(x) < t exactly when x < g, g the smallest
  //                    float >= t (no float lies in [t, g)); t above FLT_MAX gives g = +inf.
  // `<= +inf` (LightGBM writes it for splits between missing and present values) becomes
  // threshold +inf, which every finite x passes, and inf_left for x = +inf itself.
  const double t = n.threshold;
  float f = 0.f;
  switch (n.compare) {
    case TreeCompare::less_f32:
      s.threshold = nearest_float(t);
      break;
    case TreeCompare::less_equal_f32:
    case TreeCompare::less_equal_f64:
      f = n.compare == TreeCompare::less_equal_f32 ? nearest_float(t) : round_down_to_float(t);
      s.threshold = std::nextafter(f, kInf);
      s.inf_left = f == kInf;
      break;
    case TreeCompare::less_f64:
      s.threshold = round_up_to_float(t);
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

SplitFeatures split_features(const TreeEnsemble& m) {
  SplitFeatures f;
  for (size_t t = 0; t < m.trees.size(); ++t)
    for (size_t i = 0; i < m.trees[t].nodes.size(); ++i) {
      if (m.trees[t].nodes[i].is_leaf()) continue;
      const FloatSplit s = float_split(m, t, static_cast<int32_t>(i));
      f.zero_band |= s.zero_band != 0.f;
      f.inf_left |= s.inf_left;
    }
  return f;
}

}  // namespace collage
