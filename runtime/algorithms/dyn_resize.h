// Resize (ONNX opset 10-24), the planning and resampling shared by the reference kernel
// (lib/ops/tensor_resize.cpp) and the runtime's dynamic module: nearest, n-linear and cubic with
// every coordinate transformation mode, `axes`, keep_aspect_ratio_policy and antialias. The
// arithmetic follows ONNX Runtime's CPU kernel (coordinates in f32, the same rounding rules,
// axes with scale 1 left alone). Plain C++ over arrays, no dependency beyond the standard library.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace collage::rt_dynamic {

enum class ResizeInterp : uint8_t { nearest, linear, cubic };
enum class ResizeCoord : uint8_t {
  half_pixel,
  half_pixel_symmetric,
  pytorch_half_pixel,
  align_corners,
  asymmetric,
  tf_half_pixel_for_nn,
  tf_crop_and_resize
};
enum class ResizeRounding : uint8_t { round_prefer_floor, round_prefer_ceil, floor, ceil };
enum class ResizeKeepAspect : uint8_t { stretch, not_larger, not_smaller };

// The operator's parameters with the modes decoded (parse_resize_* below).
struct ResizeSpec {
  ResizeInterp interp = ResizeInterp::nearest;
  ResizeCoord coord = ResizeCoord::half_pixel;
  ResizeRounding rounding = ResizeRounding::round_prefer_floor;
  ResizeKeepAspect keep = ResizeKeepAspect::stretch;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.f;
  bool antialias = false;
  // Exactly one of scales and sizes non-empty; each (and roi, twice as long) one entry per axis
  // of `axes`, or per input axis when `axes` is empty.
  std::vector<float> roi, scales;
  std::vector<int64_t> sizes, axes;
};

struct ResizePlan {
  std::vector<int64_t> out;   // the output shape
  std::vector<float> scales;  // per axis: as given, or output / input size when sizes are given
  // Per axis, the output length align_corners and half_pixel_symmetric map onto: scale x input
  // size, unrounded, when scales are given (as ONNX and ONNX Runtime have it), the output size
  // when sizes are.
  std::vector<float> resized;
  std::vector<float> roi;  // [starts..., ends...] over every axis (tf_crop_and_resize)
};

// The mode named `s` from `names`; false for a name it does not know.
template <typename E, size_t N>
bool parse_resize_name(const std::string& s, const std::pair<const char*, E> (&names)[N], E* out) {
  for (const auto& [name, value] : names)
    if (s == name) {
      *out = value;
      return true;
    }
  return false;
}

// Each returns false for a name it does not know.
inline bool parse_resize_mode(const std::string& s, ResizeInterp* out) {
  static constexpr std::pair<const char*, ResizeInterp> kNames[] = {
      {"nearest", ResizeInterp::nearest},
      {"linear", ResizeInterp::linear},
      {"cubic", ResizeInterp::cubic}};
  return parse_resize_name(s, kNames, out);
}

inline bool parse_resize_coord(const std::string& s, ResizeCoord* out) {
  static constexpr std::pair<const char*, ResizeCoord> kNames[] = {
      {"half_pixel", ResizeCoord::half_pixel},
      {"half_pixel_symmetric", ResizeCoord::half_pixel_symmetric},
      {"pytorch_half_pixel", ResizeCoord::pytorch_half_pixel},
      {"align_corners", ResizeCoord::align_corners},
      {"asymmetric", ResizeCoord::asymmetric},
      {"tf_half_pixel_for_nn", ResizeCoord::tf_half_pixel_for_nn},
      {"tf_crop_and_resize", ResizeCoord::tf_crop_and_resize}};
  return parse_resize_name(s, kNames, out);
}

inline bool parse_resize_rounding(const std::string& s, ResizeRounding* out) {
  static constexpr std::pair<const char*, ResizeRounding> kNames[] = {
      {"round_prefer_floor", ResizeRounding::round_prefer_floor},
      {"round_prefer_ceil", ResizeRounding::round_prefer_ceil},
      {"floor", ResizeRounding::floor},
      {"ceil", ResizeRounding::ceil}};
  return parse_resize_name(s, kNames, out);
}

inline bool parse_resize_keep_aspect(const std::string& s, ResizeKeepAspect* out) {
  static constexpr std::pair<const char*, ResizeKeepAspect> kNames[] = {
      {"stretch", ResizeKeepAspect::stretch},
      {"not_larger", ResizeKeepAspect::not_larger},
      {"not_smaller", ResizeKeepAspect::not_smaller}};
  return parse_resize_name(s, kNames, out);
}

// Plans `spec` on an input of shape `in`: empty string on success, else what is wrong (a list of
// the wrong length, an axis out of range or listed twice, a scale <= 0, a negative size).
std::string plan_resize(const ResizeSpec& spec, const std::vector<int64_t>& in, ResizePlan* plan);

// Nearest: per axis, the input offset (in elements, strides of the dense input) each output
// position reads, -1 where tf_crop_and_resize extrapolates.
std::vector<std::vector<int64_t>> resize_nearest_tables(const ResizePlan& plan,
                                                        const ResizeSpec& spec,
                                                        const std::vector<int64_t>& in);

// Linear and cubic on the dense f32 `data` of shape `in`: the output of shape plan.out.
std::vector<float> resize_interpolate(const ResizePlan& plan, const ResizeSpec& spec,
                                      const std::vector<int64_t>& in, std::vector<float> data);

}  // namespace collage::rt_dynamic
