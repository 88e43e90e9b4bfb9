// Reductions (sum, mean, max) and softmax over the middle axis of an outer x extent x inner view,
// on Eigen arrays. Units are blocks of outer rows, or of inner columns when rows are few.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
using ArrayMap = Eigen::Map<Array>;
using ConstArrayMap = Eigen::Map<const Array>;

constexpr int64_t kInnerGrain = 64;
constexpr double kSoftmaxWorkPerElement = 8;

// The outer x extent x inner view shared by both kernels, and its cut into units of
// `outer_block_` rows by `inner_block_` columns.
class AxisKernel : public EigenKernel {
 protected:
  explicit AxisKernel(const KernelSetup& s) : table_(s.constant_data()), out_(s.num_inputs()) {}

  std::string init_view(const KernelSetup& s, const OperandRef& x, int64_t outer, int64_t extent,
                        int64_t inner, bool reduces, const char* what) {
    outer_ = outer, extent_ = extent, inner_ = inner;
    const int64_t in_numel = checked_numel({outer, extent, inner});
    const int64_t out_numel = checked_numel({outer, reduces ? 1 : extent, inner});
    if (in_numel < 0 || out_numel < 0) return std::string(what) + ": negative or oversized view";
    if (extent < 1) return std::string(what) + ": the reduced axis is empty";
    if (std::string e = s.check_single_output(out_numel); !e.empty()) return what + (": " + e);
    if (std::string e = s.check_operand(x, in_numel, what); !e.empty()) return e;
    // A softmax element costs an exp and three passes; a reduced element one add.
    const int64_t want =
        units_for_work(static_cast<double>(in_numel) * (reduces ? 1 : kSoftmaxWorkPerElement));
    const int64_t rows = std::max<int64_t>(outer, 1), cols = std::max<int64_t>(inner, 1);
    outer_block_ = rows;
    inner_block_ = cols;
    if (want <= rows) {
      outer_block_ = ceil_div(rows, want);
    } else {
      outer_block_ = 1;
      inner_block_ = std::min(
          cols, std::max(kInnerGrain, round_up(ceil_div(cols, ceil_div(want, rows)), kInnerGrain)));
    }
    inner_blocks_ = ceil_div(cols, inner_block_);
    units_ = in_numel == 0 ? 0 : ceil_div(rows, outer_block_) * inner_blocks_;
    return {};
  }

  // Calls f(o, i0, i1) for every outer row o and inner range of the units.
  template <typename F>
  void for_units(int64_t unit_begin, int64_t unit_end, F&& f) const {
    for (int64_t u = unit_begin; u < unit_end; ++u) {
      const int64_t ob = u / inner_blocks_, ib = u % inner_blocks_;
      const int64_t o1 = std::min(outer_, (ob + 1) * outer_block_);
      const int64_t i0 = ib * inner_block_, i1 = std::min(inner_, i0 + inner_block_);
      for (int64_t o = ob * outer_block_; o < o1; ++o) f(o, i0, i1);
    }
  }

  OperandTable table_;
  int32_t out_;
  int64_t outer_ = 0, extent_ = 0, inner_ = 0;
  int64_t outer_block_ = 1, inner_block_ = 1, inner_blocks_ = 1;
};

class ReduceKernel : public AxisKernel {
 public:
  explicit ReduceKernel(const KernelSetup& s) : AxisKernel(s) {}

  std::string init(const KernelSetup& s, const ReduceParams& p) {
    p_ = p;
    return init_view(s, p.x, p.outer, p.extent, p.inner, true, "reduce input");
  }

  void run(void* const* args, int64_t unit_begin, int64_t unit_end) const override {
    const float* x = table_.get(p_.x, args);
    float* y = static_cast<float*>(args[out_]);
    const float scale = p_.op == ReduceOp::mean ? 1.f / static_cast<float>(extent_) : 1.f;
    for_units(unit_begin, unit_end, [&](int64_t o, int64_t i0, int64_t i1) {
      const float* in = x + o * extent_ * inner_;
      if (inner_ == 1) {
        const ConstArrayMap row(in, extent_);
        y[o] = p_.op == ReduceOp::max ? row.maxCoeff() : row.sum() * scale;
        return;
      }
      ArrayMap acc(y + o * inner_ + i0, i1 - i0);
      acc = ConstArrayMap(in + i0, i1 - i0);
      for (int64_t r = 1; r < extent_; ++r) {
        const ConstArrayMap next(in + r * inner_ + i0, i1 - i0);
        if (p_.op == ReduceOp::max)
          acc = acc.max(next);
        else
          acc += next;
      }
      if (p_.op == ReduceOp::mean) acc *= scale;
    });
  }

 private:
  ReduceParams p_;
};

class SoftmaxKernel : public AxisKernel {
 public:
  explicit SoftmaxKernel(const KernelSetup& s) : AxisKernel(s) {}

  std::string init(const KernelSetup& s, const SoftmaxParams& p) {
    p_ = p;
    return init_view(s, p.x, p.outer, p.extent, p.inner, false, "softmax input");
  }

  void run(void* const* args, int64_t unit_begin, int64_t unit_end) const override {
    const float* x = table_.get(p_.x, args);
    float* y = static_cast<float*>(args[out_]);
    std::vector<float> scratch(inner_ == 1 ? 0 : static_cast<size_t>(2 * inner_block_));
    for_units(unit_begin, unit_end, [&](int64_t o, int64_t i0, int64_t i1) {
      const float* in = x + o * extent_ * inner_;
      float* out = y + o * extent_ * inner_;
      if (inner_ == 1)
        softmax_row(in, out);
      else
        softmax_columns(in + i0, out + i0, i1 - i0, scratch.data());
    });
  }

 private:
  void softmax_row(const float* in, float* out) const {
    const ConstArrayMap x(in, extent_);
    ArrayMap y(out, extent_);
    const float max = x.maxCoeff();
    y = (x - max).exp();
    const float sum = y.sum();
    if (p_.log)
      y = x - (max + std::log(sum));
    else
      y *= 1.f / sum;
  }

  // Softmax down `n` columns with row stride inner_, vectorised across the columns.
  void softmax_columns(const float* in, float* out, int64_t n, float* scratch) const {
    ArrayMap max(scratch, n), sum(scratch + n, n);
    max = ConstArrayMap(in, n);
    for (int64_t r = 1; r < extent_; ++r) max = max.max(ConstArrayMap(in + r * inner_, n));
    sum.setZero();
    for (int64_t r = 0; r < extent_; ++r) {
      ArrayMap y(out + r * inner_, n);
      y = (ConstArrayMap(in + r * inner_, n) - max).exp();
      sum += y;
    }
    if (p_.log) {
      max += sum.log();
      for (int64_t r = 0; r < extent_; ++r)
        ArrayMap(out + r * inner_, n) = ConstArrayMap(in + r * inner_, n) - max;
    } else {
      sum = sum.inverse();
      for (int64_t r = 0; r < extent_; ++r) ArrayMap(out + r * inner_, n) *= sum;
    }
  }

  SoftmaxParams p_;
};

template <typename Kernel, typename Params>
std::string create(const KernelSetup& s, const uint8_t* params, size_t size, const char* what,
                   KernelPtr& out) {
  Params p;
  if (std::string e = decode_params(params, size, p); !e.empty()) return what + (" " + e);
  auto kernel = std::make_unique<Kernel>(s);
  if (std::string e = kernel->init(s, p); !e.empty()) return e;
  out = std::move(kernel);
  return {};
}

}  // namespace

std::string create_reduce_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                 KernelPtr& out) {
  return create<ReduceKernel, ReduceParams>(s, params, size, "reduce", out);
}

std::string create_softmax_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                  KernelPtr& out) {
  return create<SoftmaxKernel, SoftmaxParams>(s, params, size, "softmax", out);
}

}  // namespace collage::rt_eigen
