// Resize in the dynamic module, for roi, scales or sizes computed at run time (or an input whose
// shape is known only now), on the planning and resampling the reference kernel uses
// (runtime/algorithms/dyn_resize.h). Nearest runs on every element type; linear and cubic on f32.
#include <cstring>

#include "dyn_resize.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

float float_of_bits(int64_t bits) {
  const auto u = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// List `i` as floats: the f32 operand that gives it at run time, or the compile-time bits.
std::vector<float> floats(const DynParams& p, const std::vector<Value>& in, size_t i,
                          const char* what) {
  if (p.list_sources.size() > i && p.list_sources[i] >= 0) {
    const Value& v = in[p.list_sources[i]];
    if (v.dtype != COLLAGE_DTYPE_F32)
      throw KernelError(std::string(what) + " is " + type_text(v.dtype, v.shape) +
                        "; the dynamic module reads f32");
    return {v.as<float>(), v.as<float>() + v.numel()};
  }
  std::vector<float> out;
  for (int64_t b : p.list(i)) out.push_back(float_of_bits(b));
  return out;
}

// lists: roi and scales (f32 bits), sizes, [mode, coordinate mode, nearest mode, aspect policy,
// exclude_outside, antialias], [cubic_coeff_a bits, extrapolation_value bits, extrapolation_value
// in the element type's bytes], axes.
void resize(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value& x = in[0];
  ResizeSpec s;
  s.roi = floats(p, in, 0, "roi");
  s.scales = floats(p, in, 1, "scales");
  s.sizes = p.list(2);
  const std::vector<int64_t>& m = p.list(3);
  const std::vector<int64_t>& f = p.list(4);
  if (m.size() != 6 || f.size() != 3 || m[0] < 0 || m[0] > 2 || m[1] < 0 || m[1] > 6 || m[2] < 0 ||
      m[2] > 3 || m[3] < 0 || m[3] > 2)
    throw KernelError("malformed parameters");
  s.interp = static_cast<ResizeInterp>(m[0]);
  s.coord = static_cast<ResizeCoord>(m[1]);
  s.rounding = static_cast<ResizeRounding>(m[2]);
  s.keep = static_cast<ResizeKeepAspect>(m[3]);
  s.exclude_outside = m[4] != 0;
  s.antialias = m[5] != 0;
  s.cubic_coeff_a = float_of_bits(f[0]);
  s.extrapolation_value = float_of_bits(f[1]);
  s.axes = p.list(5);
  ResizePlan plan;
  if (std::string e = plan_resize(s, x.shape, &plan); !e.empty()) throw KernelError(e);
  const size_t esize = element_size(x.dtype);
  uint8_t* o = out.make(0, plan.out);
  const int64_t n = numel(plan.out);
  if (n == 0) return;
  if (plan.out == x.shape) {
    std::memcpy(o, x.data, n * esize);
    return;
  }
  if (s.interp == ResizeInterp::nearest) {
    uint8_t fill[8] = {};
    const auto bits = static_cast<uint64_t>(f[2]);
    for (size_t i = 0; i < esize && i < 8; ++i) fill[i] = static_cast<uint8_t>(bits >> (8 * i));
    const auto tables = resize_nearest_tables(plan, s, x.shape);
    const auto rank = static_cast<int64_t>(plan.out.size());
    std::vector<int64_t> index(rank, 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t at = 0;
      for (int64_t d = 0; d < rank && at >= 0; ++d) {
        const int64_t t = tables[d][index[d]];
        at = t < 0 ? -1 : at + t;
      }
      std::memcpy(o + k * esize, at < 0 ? fill : x.data + at * esize, esize);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < plan.out[d]) break;
        index[d] = 0;
      }
    }
    return;
  }
  if (x.dtype != COLLAGE_DTYPE_F32)
    throw KernelError("linear and cubic resizing of " + type_text(x.dtype, x.shape) +
                      " is not supported (the dynamic module interpolates f32)");
  std::vector<float> data(x.as<float>(), x.as<float>() + x.numel());
  const std::vector<float> y = resize_interpolate(plan, s, x.shape, std::move(data));
  std::memcpy(o, y.data(), y.size() * sizeof(float));
}

}  // namespace

bool encode_resize_modes(const std::string& mode, const std::string& coord,
                         const std::string& nearest, const std::string& keep,
                         std::vector<int64_t>* codes) {
  ResizeSpec s;
  if (!parse_resize_mode(mode, &s.interp) || !parse_resize_coord(coord, &s.coord) ||
      !parse_resize_rounding(nearest, &s.rounding) || !parse_resize_keep_aspect(keep, &s.keep))
    return false;
  *codes = {static_cast<int64_t>(s.interp), static_cast<int64_t>(s.coord),
            static_cast<int64_t>(s.rounding), static_cast<int64_t>(s.keep)};
  return true;
}

bool run_resize_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op != DynOp::resize) return false;
  resize(p, in, out);
  return true;
}

}  // namespace collage::rt_dynamic
