// TE computes of MatMulInteger and QLinearMatMul (lib/ops/quantize.cpp defines them): 8-bit
// inputs less their zero points (one value; per row of A or per column of B where given so),
// multiplied and summed in i32 over K, batched as MatMul broadcasts. QLinearMatMul requantises
// as the reference does: the multiplier a_scale * b_scale / y_scale rounded to the scales' type
// after each step (f32 arithmetic rounded to f16 gives the same for f16 scales), the sum times
// it plus y_zero_point in f64, rounded half to even and saturated. The i32 sums wrap as the
// reference's int64 sums cast to i32 do; a QLinearMatMul whose sums pass 2^31 (K above 33,000
// for full-range 8-bit values) differs from the reference's int64 sums.
#include "collage/te_ops.h"
#include "core/str_cat.h"
#include "te_ops/reduce_util.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops {
namespace {

using te::Expr;
using Outputs = absl::StatusOr<std::vector<te::Tensor>>;

bool is_8bit(DType t) { return t == DType::u8 || t == DType::i8; }

// Element `at` of a one-value or per-index vector (undefined: 0), as `t`.
Expr one_or_per(const te::Tensor& v, const Expr& at, DType t) {
  if (!v.defined()) return te::make_const(t, 0);
  std::vector<Expr> idx;
  for (int64_t k = 0; k < v.ndim(); ++k)
    idx.push_back(k + 1 == v.ndim() && v.shape()[k] != 1 ? at : Expr(int64_t{0}));
  return cast_to(t, v(idx));
}

// (A - a_zp) @ (B - b_zp) in i32 over the output's shape.
te::Tensor int_matmul(const Shape& out, const te::Tensor& a, const te::Tensor& azp,
                      const te::Tensor& b, const te::Tensor& bzp, const std::string& name) {
  const int64_t k = a.shape().back(), rank = static_cast<int64_t>(out.size());
  te::IterVar r = te::reduce_axis({0, k}, "k");
  // A batch of one value is read at 0; any other has the output's batch axes.
  auto index = [&](const te::Tensor& t, const std::vector<te::Var>& i, Expr row, Expr col) {
    const int64_t batch_rank = t.ndim() - 2;
    int64_t batch = 1;
    for (int64_t d = 0; d < batch_rank; ++d) batch *= t.shape()[d];
    std::vector<Expr> idx;
    for (int64_t d = 0; d < batch_rank; ++d)
      idx.push_back(batch == 1 ? Expr(int64_t{0}) : Expr(i[rank - 2 - batch_rank + d]));
    idx.push_back(std::move(row));
    idx.push_back(std::move(col));
    return idx;
  };
  return te::compute(
      out,
      [&](const std::vector<te::Var>& i) {
        Expr row = i[rank - 2], col = i[rank - 1];
        Expr av = cast_to(DType::i32, a(index(a, i, row, Expr(r)))) -
                  one_or_per(azp, row, DType::i32);
        Expr bv = cast_to(DType::i32, b(index(b, i, Expr(r), col))) -
                  one_or_per(bzp, col, DType::i32);
        return te::sum(av * bv, {r});
      },
      name);
}

absl::Status check_8bit(const Node& node, std::initializer_list<te::Tensor> ts) {
  for (const te::Tensor& t : ts)
    if (!is_8bit(t.dtype())) return node_error(node, "only 8-bit integer inputs are supported");
  return absl::OkStatus();
}

Outputs matmul_integer(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  if (absl::Status s = check_8bit(node, {in[0], in[1]}); !s.ok()) return s;
  te::Tensor azp = in.size() > 2 ? in[2] : te::Tensor(), bzp = in.size() > 3 ? in[3] : te::Tensor();
  return std::vector<te::Tensor>{
      int_matmul(output_type(g, node).shape, in[0], azp, in[1], bzp, tensor_name(node))};
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Outputs qlinear_matmul(const Graph& g, const Node& node, std::span<const te::Tensor> in) {
  if (absl::Status s = check_8bit(node, {in[0], in[3], in[7]}); !s.ok()) return s;
  const DType st = in[1].dtype();
  if (st != DType::f32 && st != DType::f16)
    return node_error(node, "only f32 and f16 scales are supported");
  const TensorType& out = output_type(g, node);
  const std::string name = tensor_name(node);
  te::Tensor c = int_matmul(out.shape, in[0], in[2], in[3], in[5], name + ".sum");
  const auto rank = static_cast<int64_t>(out.shape.size());
  auto in_scale_type = [st](const Expr& v) { return cast_to(DType::f32, cast_to(st, v)); };
  const double lo = out.dtype == DType::u8 ? 0 : -128, hi = out.dtype == DType::u8 ? 255 : 127;
  return std::vector<te::Tensor>{te::compute(
      out.shape,
      [&](const std::vector<te::Var>& i) {
        Expr col = i[rank - 1];
        Expr a_scale = one_or_per(in[1], int64_t{0}, DType::f32);
        Expr b_scale = one_or_per(in[4], col, DType::f32);
        Expr y_scale = one_or_per(in[6], int64_t{0}, DType::f32);
        Expr mult = in_scale_type(in_scale_type(a_scale * b_scale) / y_scale);
        Expr v = cast_to(DType::f64, c(as_exprs(i))) * cast_to(DType::f64, mult) +
                 one_or_per(in[7], int64_t{0}, DType::f64);
        v = te::minimum(te::maximum(te::round(v), te::make_const(DType::f64, lo)),
                        te::make_const(DType::f64, hi));
        return cast_to(out.dtype, v);
      },
      name)};
}

}  // namespace

void register_qlinear_matmul_ops(TeOpRegistry& r) {
  r.add("MatMulInteger", {matmul_integer, nullptr});
  r.add("QLinearMatMul", {qlinear_matmul, nullptr});
}

}  // namespace collage::te_ops
