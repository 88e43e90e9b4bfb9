// Dense computes: out[batch..., i, j] = sum_k A'[..., i, k] * Bp[..., j / nr, k, j % nr] where Bp
// holds B' (transposed for Gemm's transB, scaled by Gemm's alpha) in panels of nr columns, zero
// past the last column (for a B the batch shares, over A's batch and rows as one axis of rows);
// Gemm's beta * C is the reduction's initial value. f16 and bf16 operands are widened to f32
// (B's panels hold f32), summed in f32 in k order and rounded to the type once, as the reference
// executor computes them (and numpy, which made ONNX's expected values: the product of two 16-bit
// floats is exact in f32, so a fused multiply-add rounds as mul + add).
#include <algorithm>

#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "te_ops/conv_dense_common.h"
#include "te_ops/dense.h"
#include "te_ops/te_op_util.h"

namespace collage::te_ops::dense {
namespace {

// What the dense compute needs to know about its operands.
struct Operands {
  std::string name;
  te::Tensor a, b, c;
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  bool a_vector = false, b_vector = false;  // MatMul 1-D operands
  int64_t m = 1, n = 1, k = 1;
  Shape a_batch, b_batch, batch;  // batch dims of A, B and of the output (broadcast)
  int64_t nr = 16;                // panel columns
  DType type = DType::f32;        // of the operands and the output (the sums are f32)
};

absl::Status fail(const Operands& o, const std::string& op, const std::string& what) {
  return absl::InvalidArgumentError(str_cat(op, " '", o.name, "': ", what));
}

// Index list of a broadcast operand's batch dims from the output's batch indices.
std::vector<te::Expr> batch_index(const Shape& operand, const Shape& out,
                                  const std::vector<te::Var>& v) {
  std::vector<te::Expr> idx;
  const size_t off = out.size() - operand.size();
  for (size_t d = 0; d < operand.size(); ++d)
    idx.push_back(operand[d] == 1 ? te::Expr(0) : te::Expr(v[off + d]));
  return idx;
}

std::vector<te::Tensor> build(const Operands& o, const std::string& tag) {
  const int64_t nr = o.nr;
  const int64_t panels = (o.n + nr - 1) / nr;
  const Shape& bb = o.b_batch;
  Shape out_shape = o.batch;
  if (!o.a_vector) out_shape.push_back(o.m);
  if (!o.b_vector) out_shape.push_back(o.n);
  // The reduction covers whole panels (n rounded up to nr): a register tile of the last panel
  // then never needs shifting back inside the tensor, which would make its panel reads
  // non-affine (gathers). The anchor output is the [.., n] view of it.
  const bool padded = !o.b_vector && o.n % nr != 0;
  const bool narrow = o.type != DType::f32;
  const size_t nb = o.batch.size();
  // B'(bb..., k, j).
  auto b_at = [&](std::vector<te::Expr> idx, te::Expr k, te::Expr j) {
    if (o.b_vector) return o.b(k);
    if (o.trans_b) {
      idx.push_back(j);
      idx.push_back(k);
    } else {
      idx.push_back(k);
      idx.push_back(j);
    }
    return o.b(idx);
  };
  te::Tensor bp;
  if (!o.b_vector) {
    Shape pshape = bb;
    pshape.insert(pshape.end(), {panels, o.k, nr});
    bp = te::compute(
        pshape,
        [&](const std::vector<te::Var>& v) {
          std::vector<te::Expr> idx(v.begin(), v.begin() + bb.size());
          const te::Var &jo = v[bb.size()], &k = v[bb.size() + 1], &jl = v[bb.size() + 2];
          te::Expr j = jo * nr + jl;
          te::Expr value =
              cast_to(DType::f32, b_at(idx, k, o.n % nr == 0 ? j : te::minimum(j, o.n - 1)));
          if (o.alpha != 1.f) value = value * o.alpha;
          return o.n % nr == 0 ? value : te::select(j < o.n, value, 0.0f);
        },
        o.name + ".b_panels", "dense_b_pack");
  }
  te::IterVar k = te::reduce_axis({0, o.k}, "k");
  // A whose batch is its own, times a B the batch shares ([1, 14, 14, 384] x [384, 1536], a
  // ConvNeXt block's MatMul; [197, 1, 768] x [768, 2304], ViT's projection as exported): A's rows
  // are consecutive in memory across the batch, one product of batch x m rows. The reduction is
  // computed over those rows, so a register tile of mr rows may span batch entries instead of
  // rounding each entry's m rows up to mr (14 rows computed as 18, 7 as 12 with AVX2's 6).
  const bool rows_flattened = !o.a_vector && !o.b_vector && !o.trans_a && bb.empty() &&
                              !o.batch.empty() && o.a_batch == o.batch &&
                              shape_numel(out_shape) > 0;
  Shape acc_shape = out_shape;
  if (rows_flattened) acc_shape = {shape_numel(o.batch) * o.m, o.n};
  if (padded) acc_shape.back() = panels * nr;
  // Row r of the flattened product: A's batch indices and row.
  auto unflatten = [&](const te::Expr& r) {
    std::vector<te::Expr> idx(nb + 1);
    int64_t inner = o.m;
    idx[nb] = te::floormod(r, o.m);
    for (size_t d = nb; d-- > 0;) {
      te::Expr q = te::floordiv(r, inner);
      idx[d] = d == 0 ? q : te::floormod(q, o.batch[d]);
      inner *= o.batch[d];
    }
    return idx;
  };
  te::Tensor acc = te::compute(
      acc_shape,
      [&](const std::vector<te::Var>& v) {
        te::Expr i = o.a_vector ? te::Expr(0) : te::Expr(v[rows_flattened ? 0 : nb]);
        te::Expr j = o.b_vector ? te::Expr(0) : te::Expr(v[acc_shape.size() - 1]);
        std::vector<te::Expr> ai;
        if (rows_flattened) {
          ai = unflatten(i);
          ai.push_back(k);
        } else if (o.a_vector) {
          ai = {k};
        } else {
          ai = batch_index(o.a_batch, o.batch, v);
          if (o.trans_a) {
            ai.push_back(k);
            ai.push_back(i);
          } else {
            ai.push_back(i);
            ai.push_back(k);
          }
        }
        te::Expr bv;
        if (o.b_vector) {
          bv = cast_to(DType::f32, o.b(k));
        } else {
          std::vector<te::Expr> bi =
              rows_flattened ? std::vector<te::Expr>{} : batch_index(bb, o.batch, v);
          bi.insert(bi.end(), {te::floordiv(j, nr), k, te::floormod(j, nr)});
          bv = bp(bi);
        }
        te::Expr src = cast_to(DType::f32, o.a(ai)) * bv;
        if (!o.c.defined() || o.beta == 0.f) return te::sum(src, {k});
        // C broadcast to [M, N] (unidirectional: trailing dims align).
        std::vector<te::Expr> ci;
        const Shape& cs = o.c.shape();
        const std::vector<te::Expr> mn = {i, padded ? te::minimum(j, o.n - 1) : j};
        for (size_t d = 0; d < cs.size(); ++d)
          ci.push_back(cs[d] == 1 ? te::Expr(0) : mn[2 - cs.size() + d]);
        te::Expr init = cast_to(DType::f32, cs.empty() ? o.c(std::vector<te::Expr>{}) : o.c(ci));
        if (o.beta != 1.f) init = init * o.beta;
        return te::sum(src, {k}, init);
      },
      padded || narrow || rows_flattened ? o.name + ".panels" : o.name, tag);
  if (!padded && !narrow && !rows_flattened) return {acc};
  // The output: the [.., n] view of the rows and padded panels, rounded to a 16-bit type.
  te::Tensor out = te::compute(
      out_shape,
      [&](const std::vector<te::Var>& v) {
        std::vector<te::Expr> idx(v.begin(), v.end());
        if (rows_flattened) {
          te::Expr row = idx[0];
          for (size_t d = 1; d + 1 < idx.size(); ++d) row = row * out_shape[d] + idx[d];
          idx = {row, idx.back()};
        }
        return cast_to(o.type, acc(idx));
      },
      o.name, "dense_view");
  return {out};
}

// The operands' type: f32, f16 or bf16, the same for all (ONNX's type constraint T).
absl::Status check_types(Operands& o, const std::string& op) {
  o.type = o.a.dtype();
  for (const te::Tensor& t : {o.a, o.b, o.c})
    if (t.defined() && (t.dtype() != o.type || !is_float_like(t.dtype())))
      return fail(o, op,
                  str_cat("input '", t.name(), "' is ", dtype_name(t.dtype()),
                          ", the dense compute takes f32, f16 or bf16, the same for every input"));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<te::Tensor>> matmul(const codegen::TargetSpec& target, const Node& node,
                                               std::span<const te::Tensor> inputs) {
  Operands o;
  o.name = node.name;
  if (inputs.size() != 2 || !inputs[0].defined() || !inputs[1].defined())
    return fail(o, "MatMul", "needs inputs A and B");
  o.a = inputs[0];
  o.b = inputs[1];
  if (absl::Status s = check_types(o, "MatMul"); !s.ok()) return s;
  const Shape &a = o.a.shape(), &b = o.b.shape();
  if (a.empty() || b.empty()) return fail(o, "MatMul", "scalar operands are not allowed");
  o.a_vector = a.size() == 1;
  o.b_vector = b.size() == 1;
  o.k = a.back();
  o.m = o.a_vector ? 1 : a[a.size() - 2];
  const int64_t bk = o.b_vector ? b[0] : b[b.size() - 2];
  o.n = o.b_vector ? 1 : b.back();
  if (bk != o.k)
    return fail(o, "MatMul", str_cat("inner dimensions differ: A [", shape_to_string(a),
                                     "], B [", shape_to_string(b), "]"));
  if (!o.a_vector) o.a_batch.assign(a.begin(), a.end() - 2);
  if (!o.b_vector) o.b_batch.assign(b.begin(), b.end() - 2);
  const size_t nb = std::max(o.a_batch.size(), o.b_batch.size());
  o.batch.assign(nb, 1);
  for (size_t d = 0; d < nb; ++d) {
    const int64_t x = d + o.a_batch.size() >= nb ? o.a_batch[d + o.a_batch.size() - nb] : 1;
    const int64_t y = d + o.b_batch.size() >= nb ? o.b_batch[d + o.b_batch.size() - nb] : 1;
    if (x != y && x != 1 && y != 1)
      return fail(o, "MatMul", str_cat("batch dimensions do not broadcast: A [",
                                       shape_to_string(a), "], B [", shape_to_string(b), "]"));
    o.batch[d] = std::max(x, y);
  }
  o.nr = panel_columns(target, o.n);
  return build(o, "dense");
}

absl::StatusOr<std::vector<te::Tensor>> gemm(const codegen::TargetSpec& target, const Node& node,
                                             std::span<const te::Tensor> inputs) {
  const auto& attrs = node.get<GemmAttrs>();
  Operands o;
  o.name = node.name;
  if (inputs.size() < 2 || !inputs[0].defined() || !inputs[1].defined())
    return fail(o, "Gemm", "needs inputs A and B");
  o.a = inputs[0];
  o.b = inputs[1];
  if (inputs.size() > 2) o.c = inputs[2];
  if (absl::Status s = check_types(o, "Gemm"); !s.ok()) return s;
  o.trans_a = attrs.transA != 0;
  o.trans_b = attrs.transB != 0;
  o.alpha = attrs.alpha;
  o.beta = attrs.beta;
  const Shape &a = o.a.shape(), &b = o.b.shape();
  if (a.size() != 2 || b.size() != 2)
    return fail(o, "Gemm", str_cat("A [", shape_to_string(a), "] and B [", shape_to_string(b),
                                   "] must be matrices"));
  o.m = o.trans_a ? a[1] : a[0];
  o.k = o.trans_a ? a[0] : a[1];
  o.n = o.trans_b ? b[0] : b[1];
  if ((o.trans_b ? b[1] : b[0]) != o.k)
    return fail(o, "Gemm", str_cat("inner dimensions differ: A [", shape_to_string(a), "], B [",
                                   shape_to_string(b), "]"));
  if (o.c.defined()) {
    const Shape& c = o.c.shape();
    const Shape mn = {o.m, o.n};
    bool ok = c.size() <= 2;
    for (size_t d = 0; ok && d < c.size(); ++d)
      ok = c[d] == 1 || c[d] == mn[2 - c.size() + d];
    if (!ok)
      return fail(o, "Gemm", str_cat("C [", shape_to_string(c), "] does not broadcast to [",
                                     o.m, ", ", o.n, "]"));
  }
  o.nr = panel_columns(target, o.n);
  return build(o, "dense");
}

}  // namespace

int64_t panel_columns(const codegen::TargetSpec& target, int64_t n) {
  const int64_t lanes = detail::f32_lanes(target);
  return n >= 2 * lanes ? 2 * lanes : lanes;
}

ComputeFn matmul_compute(const codegen::TargetSpec& target) {
  return [target](const Graph& g, const Node& node, std::span<const te::Tensor> inputs)
             -> absl::StatusOr<std::vector<te::Tensor>> {
    if (inputs.size() == 2 && inputs[0].defined() && inputs[1].defined() &&
        (inputs[0].dtype() == DType::f64 || inputs[1].dtype() == DType::f64))
      return generic_matmul(g, node, inputs);
    return matmul(target, node, inputs);
  };
}

ComputeFn gemm_compute(const codegen::TargetSpec& target) {
  return [target](const Graph&, const Node& node, std::span<const te::Tensor> inputs) {
    return gemm(target, node, inputs);
  };
}

}  // namespace collage::te_ops::dense
