// Batched matrix multiplication with Eigen's GEMM on row-major maps, split into batch, row and
// column blocks, followed by an elementwise epilogue on each finished block.
#include <Eigen/Core>

#include "eigen_elementwise.h"
#include "eigen_kernel.h"

namespace collage::rt_eigen {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using Stride = Eigen::OuterStride<>;
template <typename M>
using ConstMap = Eigen::Map<const M, Eigen::Unaligned, Stride>;
using OutMap = Eigen::Map<RowMat, Eigen::Unaligned, Stride>;

// Tiles are cut no smaller than this many rows and columns: smaller tiles lose a quarter or more
// of Eigen's single-call throughput to packing.
constexpr int64_t kRowGrain = 32;
constexpr int64_t kColGrain = 64;

class MatMulKernel : public EigenKernel {
 public:
  explicit MatMulKernel(const KernelSetup& s) : table_(s.constant_data()), out_(s.num_inputs()) {}

  std::string init(const KernelSetup& s, MatMulParams p) {
    p_ = std::move(p);
    const size_t nb = p_.batch_dims.size();
    if (p_.a_batch_strides.size() != nb || p_.b_batch_strides.size() != nb)
      return "matmul: batch stride lists do not match the " + std::to_string(nb) +
             " batch dimensions";
    if (checked_mul(p_.m, p_.k) < 0 || checked_mul(p_.k, p_.n) < 0 || checked_mul(p_.m, p_.n) < 0)
      return "matmul: bad sizes M=" + std::to_string(p_.m) + " N=" + std::to_string(p_.n) +
             " K=" + std::to_string(p_.k);
    batch_ = checked_numel(p_.batch_dims);
    if (batch_ < 0) return "matmul: negative or oversized batch dimensions";
    const int64_t out_numel = checked_mul(batch_, p_.m * p_.n);
    if (out_numel < 0) return "matmul: output is too large";
    if (std::string e = s.check_single_output(out_numel); !e.empty()) return "matmul: " + e;
    if (std::string e = check_input(s, p_.a, p_.a_batch_strides, p_.m * p_.k, "matmul input A");
        !e.empty())
      return e;
    if (std::string e = check_input(s, p_.b, p_.b_batch_strides, p_.k * p_.n, "matmul input B");
        !e.empty())
      return e;
    if (std::string e = epilogue_.init(p_.epilogue, s, out_numel); !e.empty())
      return "matmul epilogue: " + e;
    choose_blocks();
    return {};
  }

  void run(void* const* args, int64_t unit_begin, int64_t unit_end) const override {
    const float* a = table_.get(p_.a, args);
    const float* b = table_.get(p_.b, args);
    float* y = static_cast<float*>(args[out_]);
    const int64_t per_batch_block = row_blocks_ * col_blocks_;
    for (int64_t u = unit_begin; u < unit_end; ++u) {
      const int64_t bb = u / per_batch_block, rb = (u / col_blocks_) % row_blocks_,
                    cb = u % col_blocks_;
      const int64_t m0 = rb * row_block_, m1 = std::min(p_.m, m0 + row_block_);
      const int64_t n0 = cb * col_block_, n1 = std::min(p_.n, n0 + col_block_);
      const int64_t b_end = std::min(batch_, (bb + 1) * batch_block_);
      for (int64_t batch = bb * batch_block_; batch < b_end; ++batch)
        run_block(a, b, y, args, batch, m0, m1, n0, n1);
    }
  }

 private:
  std::string check_input(const KernelSetup& s, const OperandRef& ref,
                          const std::vector<int64_t>& strides, int64_t matrix, const char* what) {
    int64_t extent = batch_ > 0 && matrix > 0 ? matrix : 0;
    for (size_t i = 0; i < strides.size() && extent > 0; ++i) {
      const int64_t reach = checked_mul(p_.batch_dims[i] - 1, strides[i]);
      if (reach < 0 || extent + reach > kMaxExtent) return std::string(what) + ": bad batch stride";
      extent += reach;
    }
    return s.check_operand(ref, extent, what);
  }

  // Whole matrices per unit when there are enough of them; otherwise each matrix is cut into
  // tiles, halving the longer tile side (down to the grains) until there are enough tiles:
  // near-square tiles keep Eigen's packing cost small next to the multiply.
  void choose_blocks() {
    const int64_t m = std::max<int64_t>(p_.m, 1), n = std::max<int64_t>(p_.n, 1);
    const int64_t want = units_for_work(static_cast<double>(batch_) * static_cast<double>(p_.m) *
                                        static_cast<double>(p_.n) * static_cast<double>(p_.k));
    batch_block_ = 1;
    int64_t row_tiles = 1, col_tiles = 1;
    if (want <= batch_) {
      batch_block_ = ceil_div(batch_, want);
    } else if (batch_ > 0) {
      const int64_t per_matrix = ceil_div(want, batch_);
      while (row_tiles * col_tiles < per_matrix) {
        const bool rows_split = ceil_div(m, 2 * row_tiles) >= kRowGrain;
        const bool cols_split = ceil_div(n, 2 * col_tiles) >= kColGrain;
        if (rows_split && (!cols_split || ceil_div(m, row_tiles) >= ceil_div(n, col_tiles)))
          row_tiles *= 2;
        else if (cols_split)
          col_tiles *= 2;
        else
          break;
      }
    }
    row_block_ = std::min(m, round_up(ceil_div(m, row_tiles), 8));
    col_block_ = std::min(n, round_up(ceil_div(n, col_tiles), 16));
    row_blocks_ = ceil_div(m, row_block_);
    col_blocks_ = ceil_div(n, col_block_);
    units_ =
        p_.m == 0 || p_.n == 0 ? 0 : ceil_div(batch_, batch_block_) * row_blocks_ * col_blocks_;
  }

  void run_block(const float* a, const float* b, float* y, void* const* args, int64_t batch,
                 int64_t m0, int64_t m1, int64_t n0, int64_t n1) const {
    const int64_t m = p_.m, n = p_.n, k = p_.k;
    int64_t a_off = 0, b_off = 0;
    for (int64_t r = batch, d = static_cast<int64_t>(p_.batch_dims.size()) - 1; d >= 0; --d) {
      const int64_t idx = r % p_.batch_dims[d];
      r /= p_.batch_dims[d];
      a_off += idx * p_.a_batch_strides[d];
      b_off += idx * p_.b_batch_strides[d];
    }
    const int64_t rows = m1 - m0, cols = n1 - n0;
    const int64_t y_off = batch * m * n + m0 * n + n0;
    OutMap out(y + y_off, rows, cols, Stride(n));
    auto multiply = [&](const auto& lhs, const auto& rhs) {
      if (p_.alpha == 1.f)
        out.noalias() = lhs * rhs;
      else
        out.noalias() = p_.alpha * lhs * rhs;
    };
    auto with_rhs = [&](const auto& lhs) {
      if (p_.trans_b)
        multiply(lhs, ConstMap<ColMat>(b + b_off + n0 * k, k, cols, Stride(k)));
      else
        multiply(lhs, ConstMap<RowMat>(b + b_off + n0, k, cols, Stride(n)));
    };
    if (k == 0)
      out.setZero();
    else if (p_.trans_a)
      with_rhs(ConstMap<ColMat>(a + a_off + m0, rows, k, Stride(m)));
    else
      with_rhs(ConstMap<RowMat>(a + a_off + m0 * k, rows, k, Stride(k)));
    if (epilogue_.empty()) return;
    if (cols == n) {
      epilogue_.apply(y, args, y_off, y_off + rows * n);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        epilogue_.apply(y, args, y_off + r * n, y_off + r * n + cols);
    }
  }

  MatMulParams p_;
  OperandTable table_;
  int32_t out_;
  EwEngine epilogue_;
  int64_t batch_ = 0;
  int64_t batch_block_ = 1, row_block_ = 1, col_block_ = 1;
  int64_t row_blocks_ = 1, col_blocks_ = 1;
};

}  // namespace

std::string create_matmul_kernel(const KernelSetup& s, const uint8_t* params, size_t size,
                                 KernelPtr& out) {
  MatMulParams p;
  if (std::string e = decode_params(params, size, p); !e.empty()) return "matmul " + e;
  auto kernel = std::make_unique<MatMulKernel>(s);
  if (std::string e = kernel->init(s, std::move(p)); !e.empty()) return e;
  out = std::move(kernel);
  return {};
}

}  // namespace collage::rt_eigen
