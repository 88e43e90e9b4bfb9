// Operators of the dynamic module whose output shape follows an input's values, run when those
// values are known only at run time: the windows and MelWeightMatrix (runtime/algorithms/
// dyn_signal.h), CenterCropPad, Col2Im and AffineGrid (dyn_geometry.h), as the reference kernels
// compute them; Shape of a value shaped at run time; and Dropout with ratio or training_mode
// given at run time (inference: the identity, and a mask of ones).
#include <algorithm>
#include <cstring>

#include "dyn_geometry.h"
#include "dyn_signal.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

// Beyond this a generated length is taken for a bad input, as the reference executor takes it.
constexpr int64_t kMaxGenerated = int64_t{1} << 31;

double double_at(const Value& v, int64_t i) {
  switch (v.dtype) {
    case COLLAGE_DTYPE_F32: return v.as<float>()[i];
    case COLLAGE_DTYPE_F64: return v.as<double>()[i];
    case COLLAGE_DTYPE_I32: return v.as<int32_t>()[i];
    case COLLAGE_DTYPE_I64: return static_cast<double>(v.as<int64_t>()[i]);
    default: throw KernelError("element type " + type_text(v.dtype, v.shape) + " is not read here");
  }
}

template <typename T>
void store_as(const std::vector<double>& values, uint8_t* out) {
  T* o = reinterpret_cast<T*>(out);
  for (size_t i = 0; i < values.size(); ++i) o[i] = static_cast<T>(values[i]);
}

// `values` as output 0 of `shape`, converted as a cast does.
void store(const std::vector<double>& values, const std::vector<int64_t>& shape, Outputs& out) {
  uint8_t* o = out.make(0, shape);
  switch (out.dtype(0)) {
    case COLLAGE_DTYPE_F32: store_as<float>(values, o); return;
    case COLLAGE_DTYPE_F64: store_as<double>(values, o); return;
    case COLLAGE_DTYPE_I8: store_as<int8_t>(values, o); return;
    case COLLAGE_DTYPE_I16: store_as<int16_t>(values, o); return;
    case COLLAGE_DTYPE_I32: store_as<int32_t>(values, o); return;
    case COLLAGE_DTYPE_I64: store_as<int64_t>(values, o); return;
    case COLLAGE_DTYPE_U8: store_as<uint8_t>(values, o); return;
    case COLLAGE_DTYPE_U16: store_as<uint16_t>(values, o); return;
    case COLLAGE_DTYPE_U32: store_as<uint32_t>(values, o); return;
    case COLLAGE_DTYPE_U64: store_as<uint64_t>(values, o); return;
    default: throw KernelError("output type " + type_text(out.dtype(0), shape) + " is not made here");
  }
}

// The single integer of `v`, checked to lie in [min, kMaxGenerated].
int64_t length_of(const Value& v, const char* role, int64_t min) {
  if (v.numel() != 1) throw KernelError(std::string(role) + " must be a single integer");
  const int64_t n = int_at(v, 0);
  if (n < min || n > kMaxGenerated)
    throw KernelError(std::string(role) + " is " + std::to_string(n) + "; it must lie in [" +
                      std::to_string(min) + ", " + std::to_string(kMaxGenerated) + "]");
  return n;
}

std::vector<int64_t> ints_of(const Value& v) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < v.numel(); ++i) out.push_back(int_at(v, i));
  return out;
}

// lists: [periodic]
void window(const DynParams& p, WindowKind kind, const Value& size, Outputs& out) {
  const int64_t n = length_of(size, "size", 0);
  store(cosine_window(kind, n, p.value(0, 1) != 0), {n}, out);
}

void mel(const std::vector<Value>& in, Outputs& out) {
  const int64_t bins = length_of(in[0], "num_mel_bins", 1);
  const int64_t dft = length_of(in[1], "dft_length", 1);
  if (in[2].numel() != 1) throw KernelError("sample_rate must be a single integer");
  for (int i : {3, 4})
    if (in[i].numel() != 1) throw KernelError("the hertz bounds must be single floats");
  std::vector<double> w;
  const std::string e =
      mel_weight_matrix(bins, dft, int_at(in[2], 0), double_at(in[3], 0), double_at(in[4], 0), w);
  if (!e.empty()) throw KernelError(e);
  store(w, {dft / 2 + 1, bins}, out);
}

// lists: axes (empty: every axis)
void crop_pad(const DynParams& p, const Value& x, const Value& target, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes = p.list(0);
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (target.numel() != static_cast<int64_t>(axes.size()))
    throw KernelError("shape has " + std::to_string(target.numel()) + " sizes for " +
                      std::to_string(axes.size()) + " axes");
  std::vector<int64_t> shape = x.shape;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axis_in(axes[i], rank, "axis"), v = int_at(target, static_cast<int64_t>(i));
    if (v < 0) throw KernelError("shape " + std::to_string(v) + " on axis " + std::to_string(a));
    shape[a] = v;
  }
  uint8_t* y = out.make(0, shape);
  center_crop_pad(x.data, x.shape, y, shape, element_size(x.dtype));
}

// lists: dilations, pads (begins, then ends), strides
void col2im(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  const Value& x = in[0];
  const std::vector<int64_t> image = ints_of(in[1]), block = ints_of(in[2]);
  const auto r = static_cast<int64_t>(image.size());
  if (x.shape.size() != 3 || r == 0 || static_cast<int64_t>(block.size()) != r)
    throw KernelError("input " + type_text(x.dtype, x.shape) + ", image_shape and block_shape of " +
                      std::to_string(r) + " and " + std::to_string(block.size()) + " axes");
  auto per_axis = [&](size_t list, int64_t count, int64_t fallback, int64_t at) {
    const std::vector<int64_t>& v = p.list(list);
    if (v.empty()) return fallback;
    if (static_cast<int64_t>(v.size()) != count)
      throw KernelError("an attribute list has " + std::to_string(v.size()) + " values for " +
                        std::to_string(r) + " axes");
    return v[at];
  };
  std::vector<Col2ImAxis> axes;
  int64_t B = 1, L = 1;
  for (int64_t d = 0; d < r; ++d) {
    Col2ImAxis a{image[d], block[d], 0, per_axis(2, r, 1, d), per_axis(1, 2 * r, 0, d),
                 per_axis(0, r, 1, d)};
    const int64_t pad_end = per_axis(1, 2 * r, 0, r + d);
    const int64_t extent = (a.block - 1) * a.dilation + 1, padded = a.image + a.pad_begin + pad_end;
    if (a.block < 1 || a.image < 0 || a.stride < 1 || a.dilation < 1 || a.pad_begin < 0 ||
        pad_end < 0 || extent > padded)
      throw KernelError("block " + std::to_string(a.block) + " does not slide over image axis " +
                        std::to_string(d) + " of " + std::to_string(a.image));
    a.positions = (padded - extent) / a.stride + 1;
    B *= a.block, L *= a.positions;
    axes.push_back(a);
  }
  if (x.shape[1] % B != 0 || x.shape[2] != L)
    throw KernelError("input " + type_text(x.dtype, x.shape) + " must be N x C * " +
                      std::to_string(B) + " x " + std::to_string(L));
  std::vector<int64_t> shape = {x.shape[0], x.shape[1] / B};
  shape.insert(shape.end(), image.begin(), image.end());
  std::vector<double> acc(static_cast<size_t>(numel(shape)), 0.0);
  col2im_accumulate(axes, shape[0] * shape[1], [&](int64_t i) { return double_at(x, i); }, acc);
  store(acc, shape, out);
}

// lists: [align_corners]
void affine(const DynParams& p, const Value& theta, const Value& size, Outputs& out) {
  const std::vector<int64_t> s = ints_of(size);
  const auto r = static_cast<int64_t>(s.size()) - 2;
  if ((r != 2 && r != 3) || theta.shape.size() != 3 || theta.shape[1] != r ||
      theta.shape[2] != r + 1 || s[0] != theta.shape[0])
    throw KernelError("size of " + std::to_string(s.size()) + " values does not fit theta " +
                      type_text(theta.dtype, theta.shape));
  const std::vector<int64_t> spatial(s.begin() + 2, s.end());
  for (int64_t d : spatial)
    if (d < 0 || d > kMaxGenerated) throw KernelError("size has an extent " + std::to_string(d));
  std::vector<int64_t> shape = {s[0]};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  shape.push_back(r);
  std::vector<double> grid;
  affine_grid([&](int64_t i) { return double_at(theta, i); }, s[0], spatial, p.value(0, 0) != 0,
              grid);
  store(grid, shape, out);
}

// lists: [start], [end]
void shape_of(const DynParams& p, const Value& x, Outputs& out) {
  const auto rank = static_cast<int64_t>(x.shape.size());
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(p.value(0, 0)), end = std::max(start, clamp(p.value(1, rank)));
  int64_t* o = out.make_as<int64_t>(0, {end - start});
  for (int64_t i = start; i < end; ++i) o[i - start] = x.shape[i];
}

// lists: [ratio's f32 bits], [training_mode], each replaced by its operand when given at run time.
void dropout(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  double ratio;
  if (p.list_sources.size() > 0 && p.list_sources[0] >= 0) {
    const Value& v = in[p.list_sources[0]];
    if (v.numel() != 1) throw KernelError("ratio must be a single value");
    ratio = double_at(v, 0);
  } else {
    const auto bits = static_cast<uint32_t>(p.value(0, 0));
    float f;
    std::memcpy(&f, &bits, sizeof f);
    ratio = f;
  }
  bool training = p.value(1, 0) != 0;
  if (p.list_sources.size() > 1 && p.list_sources[1] >= 0) {
    const Value& v = in[p.list_sources[1]];
    if (v.dtype != COLLAGE_DTYPE_BOOL || v.numel() != 1)
      throw KernelError("training_mode must be a single bool");
    training = v.data[0] != 0;
  }
  if (!(ratio >= 0 && ratio < 1))
    throw KernelError("ratio " + std::to_string(ratio) + " is outside [0, 1)");
  if (training && ratio != 0)
    throw KernelError("training_mode is true with a ratio other than 0 (" + std::to_string(ratio) +
                      ", random); collage runs inference only");
  const Value& x = in[0];
  const size_t bytes = static_cast<size_t>(x.numel()) * element_size(x.dtype);
  uint8_t* y = out.make(0, x.shape);
  if (bytes) std::memcpy(y, x.data, bytes);
  if (out.count() > 1) {
    uint8_t* mask = out.make(1, x.shape);
    if (x.numel()) std::memset(mask, 1, static_cast<size_t>(x.numel()));
  }
}

}  // namespace

bool run_value_shaped_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  switch (p.op) {
    case DynOp::hann_window: window(p, WindowKind::hann, in[0], out); return true;
    case DynOp::hamming_window: window(p, WindowKind::hamming, in[0], out); return true;
    case DynOp::blackman_window: window(p, WindowKind::blackman, in[0], out); return true;
    case DynOp::mel_weight_matrix: mel(in, out); return true;
    case DynOp::center_crop_pad: crop_pad(p, in[0], in[1], out); return true;
    case DynOp::col2im: col2im(p, in, out); return true;
    case DynOp::affine_grid: affine(p, in[0], in[1], out); return true;
    case DynOp::shape: shape_of(p, in[0], out); return true;
    case DynOp::dropout: dropout(p, in, out); return true;
    default: return false;
  }
}

}  // namespace collage::rt_dynamic
