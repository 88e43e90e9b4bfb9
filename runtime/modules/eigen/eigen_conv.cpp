// 2-D convolution (NCHW): im2col of a block of output pixels and one Eigen GEMM per group, a
// direct loop for depthwise convolution, then the elementwise epilogue (bias, activations).
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <vector>

#include "eigen_elementwise.h"
#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Stride = Eigen::OuterStride<>;
using ConstMap = Eigen::Map<const RowMat, Eigen::Unaligned, Stride>;
using OutMap = Eigen::Map<RowMat, Eigen::Unaligned, Stride>;

// Pixel blocks are multiples of this many output pixels; an im2col block holds at most
// kColBufferFloats values (512 KiB), so it stays in L2 while the GEMM reads it.
constexpr int64_t kPixelGrain = 32;
constexpr int64_t kColBufferFloats = int64_t{1} << 17;

class ConvKernel : public EigenKernel {
 public:
  explicit ConvKernel(const KernelSetup& s) : table_(s.constant_data()), out_(s.num_inputs()) {}

  std::string init(const KernelSetup& s, ConvParams p) {
    p_ = std::move(p);
    if (std::string e = check_sizes(); !e.empty()) return "conv: " + e;
    cg_ = p_.channels / p_.group;
    mg_ = p_.out_channels / p_.group;
    pixels_ = checked_mul(p_.out_h, p_.out_w);
    patch_ = checked_numel({cg_, p_.kernel_h, p_.kernel_w});
    const int64_t in_numel = checked_numel({p_.batch, p_.channels, p_.height, p_.width});
    const int64_t w_numel = checked_numel({p_.out_channels, patch_});
    const int64_t out_numel = checked_numel({p_.batch, p_.out_channels, pixels_});
    if (pixels_ < 0 || patch_ < 0 || in_numel < 0 || w_numel < 0 || out_numel < 0)
      return "conv: tensors are too large";
    if (std::string e = s.check_single_output(out_numel); !e.empty()) return "conv: " + e;
    if (std::string e = s.check_operand(p_.x, in_numel, "conv input"); !e.empty()) return e;
    if (std::string e = s.check_operand(p_.w, w_numel, "conv weights"); !e.empty()) return e;
    if (std::string e = epilogue_.init(p_.epilogue, s, out_numel); !e.empty())
      return "conv epilogue: " + e;
    depthwise_ = cg_ == 1 && mg_ == 1;
    pointwise_ = p_.kernel_h == 1 && p_.kernel_w == 1 && p_.stride_h == 1 && p_.stride_w == 1 &&
                 p_.pad_top == 0 && p_.pad_left == 0 && p_.out_h == p_.height &&
                 p_.out_w == p_.width;
    choose_blocks();
    return {};
  }

  void run(void* const* args, int64_t unit_begin, int64_t unit_end) const override {
    const float* x = table_.get(p_.x, args);
    const float* w = table_.get(p_.w, args);
    float* y = static_cast<float*>(args[out_]);
    if (depthwise_) {
      for (int64_t u = unit_begin; u < unit_end; ++u) {
        const int64_t n = u / blocks_, c0 = (u % blocks_) * block_;
        const int64_t c1 = std::min(p_.channels, c0 + block_);
        for (int64_t c = c0; c < c1; ++c) depthwise_channel(x, w, y, n, c);
        epilogue_.apply(y, args, (n * p_.out_channels + c0) * pixels_,
                        (n * p_.out_channels + c1) * pixels_);
      }
      return;
    }
    std::vector<float> col(pointwise_ ? 0 : static_cast<size_t>(patch_ * block_));
    for (int64_t u = unit_begin; u < unit_end; ++u) {
      const int64_t pb = u % blocks_, g = (u / blocks_) % p_.group, n = u / (blocks_ * p_.group);
      const int64_t p0 = pb * block_, p1 = std::min(pixels_, p0 + block_), np = p1 - p0;
      const float* in = x + (n * p_.channels + g * cg_) * p_.height * p_.width;
      OutMap out(y + (n * p_.out_channels + g * mg_) * pixels_ + p0, mg_, np, Stride(pixels_));
      const ConstMap wg(w + g * mg_ * patch_, mg_, patch_, Stride(patch_));
      if (pointwise_) {
        out.noalias() = wg * ConstMap(in + p0, cg_, np, Stride(pixels_));
      } else {
        im2col(in, p0, np, col.data());
        out.noalias() = wg * ConstMap(col.data(), patch_, np, Stride(np));
      }
      const int64_t row0 = (n * p_.out_channels + g * mg_) * pixels_;
      for (int64_t m = 0; m < mg_; ++m)
        epilogue_.apply(y, args, row0 + m * pixels_ + p0, row0 + m * pixels_ + p1);
    }
  }

 private:
  std::string check_sizes() const {
    for (int64_t v : {p_.batch, p_.channels, p_.height, p_.width, p_.out_channels, p_.out_h,
                      p_.out_w, p_.pad_top, p_.pad_left})
      if (v < 0 || v > kMaxExtent) return "negative or oversized size";
    for (int64_t v : {p_.kernel_h, p_.kernel_w, p_.stride_h, p_.stride_w, p_.dilation_h,
                      p_.dilation_w, p_.group})
      if (v < 1 || v > kMaxExtent) return "kernel sizes, strides, dilations and group must be >= 1";
    // Input coordinates (output index * stride + tap * dilation) must not overflow.
    for (auto [out, stride, taps, dilation] :
         {std::array{p_.out_h, p_.stride_h, p_.kernel_h, p_.dilation_h},
          std::array{p_.out_w, p_.stride_w, p_.kernel_w, p_.dilation_w}}) {
      const int64_t a = checked_mul(out, stride), b = checked_mul(taps, dilation);
      if (a < 0 || b < 0 || a + b > kMaxExtent) return "strides or dilations are too large";
    }
    if (p_.channels % p_.group != 0 || p_.out_channels % p_.group != 0)
      return "group " + std::to_string(p_.group) + " does not divide the " +
             std::to_string(p_.channels) + " input and " + std::to_string(p_.out_channels) +
             " output channels";
    return {};
  }

  void choose_blocks() {
    if (depthwise_) {
      const double work = static_cast<double>(p_.batch) * static_cast<double>(p_.channels) *
                          static_cast<double>(pixels_ * p_.kernel_h * p_.kernel_w);
      const int64_t per_image = ceil_div(units_for_work(work), std::max<int64_t>(p_.batch, 1));
      block_ = std::max<int64_t>(1, ceil_div(p_.channels, per_image));
      blocks_ = std::max<int64_t>(1, ceil_div(p_.channels, block_));
      units_ = p_.channels == 0 || pixels_ == 0 ? 0 : p_.batch * blocks_;
      return;
    }
    const double work = static_cast<double>(p_.batch * p_.group) * static_cast<double>(pixels_) *
                        static_cast<double>(mg_) * static_cast<double>(patch_);
    const int64_t per_image =
        ceil_div(units_for_work(work), std::max<int64_t>(p_.batch * p_.group, 1));
    const int64_t pixels = std::max<int64_t>(pixels_, 1);
    block_ = round_up(ceil_div(pixels, per_image), kPixelGrain);
    block_ =
        std::min(block_, std::max(kPixelGrain, kColBufferFloats / std::max<int64_t>(patch_, 1)));
    block_ = std::min(block_, pixels);
    blocks_ = ceil_div(pixels, block_);
    units_ = pixels_ == 0 || mg_ == 0 ? 0 : p_.batch * p_.group * blocks_;
  }

  // col[r][t] = input value under kernel row r = (c, i, j) for output pixel p0 + t, 0 in padding.
  // Filled one output row segment at a time: zeros, then a (strided) copy, then zeros.
  void im2col(const float* in, int64_t p0, int64_t np, float* col) const {
    const int64_t H = p_.height, W = p_.width, OW = p_.out_w, sw = p_.stride_w;
    for (int64_t c = 0; c < cg_; ++c)
      for (int64_t i = 0; i < p_.kernel_h; ++i)
        for (int64_t j = 0; j < p_.kernel_w; ++j) {
          float* dst = col + ((c * p_.kernel_h + i) * p_.kernel_w + j) * np;
          const float* src = in + c * H * W;
          const int64_t shift = j * p_.dilation_w - p_.pad_left;  // iw = ow * sw + shift
          const auto [lo, hi] = valid_columns(shift);
          for (int64_t t = 0; t < np;) {
            const int64_t oh = (p0 + t) / OW, ow0 = (p0 + t) % OW;
            const int64_t seg = std::min(OW - ow0, np - t);
            const int64_t ih = oh * p_.stride_h - p_.pad_top + i * p_.dilation_h;
            float* d = dst + t;  // d[k] is output column ow0 + k
            // Columns [a, b) of the segment read the input; the rest is padding.
            const int64_t a = std::clamp(lo, ow0, ow0 + seg) - ow0;
            const int64_t b = std::clamp(hi, ow0 + a, ow0 + seg) - ow0;
            if (ih < 0 || ih >= H || a == b) {
              std::fill(d, d + seg, 0.f);
            } else {
              const float* from = src + ih * W + (ow0 + a) * sw + shift;
              std::fill(d, d + a, 0.f);
              if (sw == 1) {
                std::copy(from, from + (b - a), d + a);
              } else {
                for (int64_t k = 0; k < b - a; ++k) d[a + k] = from[k * sw];
              }
              std::fill(d + b, d + seg, 0.f);
            }
            t += seg;
          }
        }
  }

  // The output columns [lo, hi) whose input column ow * stride_w + shift lies inside the input.
  std::pair<int64_t, int64_t> valid_columns(int64_t shift) const {
    const int64_t W = p_.width, sw = p_.stride_w;
    const int64_t lo = shift >= 0 ? 0 : ceil_div(-shift, sw);
    const int64_t hi = W - 1 - shift < 0 ? 0 : std::min(p_.out_w, (W - 1 - shift) / sw + 1);
    return {std::min(lo, p_.out_w), std::max(hi, std::min(lo, p_.out_w))};
  }

  // One output plane of a depthwise convolution, accumulated tap by tap over whole rows.
  void depthwise_channel(const float* x, const float* w, float* y, int64_t n, int64_t c) const {
    const int64_t H = p_.height, W = p_.width, OH = p_.out_h, OW = p_.out_w;
    const int64_t sw = p_.stride_w;
    const float* in = x + (n * p_.channels + c) * H * W;
    const float* taps = w + c * p_.kernel_h * p_.kernel_w;
    float* out = y + (n * p_.channels + c) * pixels_;
    std::fill(out, out + pixels_, 0.f);
    for (int64_t oh = 0; oh < OH; ++oh) {
      float* orow = out + oh * OW;
      for (int64_t i = 0; i < p_.kernel_h; ++i) {
        const int64_t ih = oh * p_.stride_h - p_.pad_top + i * p_.dilation_h;
        if (ih < 0 || ih >= H) continue;
        const float* irow = in + ih * W;
        for (int64_t j = 0; j < p_.kernel_w; ++j) {
          const float tap = taps[i * p_.kernel_w + j];
          const int64_t shift = j * p_.dilation_w - p_.pad_left;  // iw = ow * sw + shift
          const auto [lo, hi] = valid_columns(shift);
          if (sw == 1) {
            for (int64_t o = lo; o < hi; ++o) orow[o] += tap * irow[o + shift];
          } else {
            for (int64_t o = lo; o < hi; ++o) orow[o] += tap * irow[o * sw + shift];
          }
        }
      }
    }
  }

  ConvParams p_;
  OperandTable table_;
  int32_t out_;
  EwEngine epilogue_;
  int64_t cg_ = 1, mg_ = 1, pixels_ = 0, patch_ = 0;
  bool depthwise_ = false, pointwise_ = false;
  // Depthwise: units are (image, block of `block_` channels); otherwise (image, group, block of
  // `block_` output pixels). `blocks_` is the number of blocks per image (and group).
  int64_t block_ = 1, blocks_ = 1;
};

}  // namespace

std::string create_conv_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                               KernelPtr& out) {
  ConvParams p;
  if (std::string e = decode_params(params, size, p); !e.empty()) return "conv " + e;
  auto kernel = std::make_unique<ConvKernel>(s);
  if (std::string e = kernel->init(s, std::move(p)); !e.empty()) return e;
  out = std::move(kernel);
  return {};
}

}  // namespace collage::rt_eigen
