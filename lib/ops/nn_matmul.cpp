// MatMul (numpy semantics: 1-D operands, batch broadcasting) and Gemm, both on the reference GEMM.
#include "collage/ops/nn.h"
#include "core/str_cat.h"
#include "ops/gemm_ref.h"
#include "ops/nn_ops.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// MatMul operands seen as stacks of matrices: a 1-D A is a 1 x K row, a 1-D B a K x 1 column.
struct MatMulDims {
  Shape a_batch, b_batch, batch;  // batch = broadcast of a_batch and b_batch
  int64_t m = 0, k = 0, n = 0;
  Shape out;
};

absl::StatusOr<MatMulDims> matmul_dims(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    return absl::InvalidArgumentError(str_cat("operands must have rank >= 1, got A ",
                                              list_to_string(a), " and B ", list_to_string(b)));
  MatMulDims d;
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  d.m = a2[a2.size() - 2];
  d.k = a2.back();
  d.n = b2.back();
  // At inference a dimension known only at run time (kDynamicDim) matches any size; the kernel
  // that runs the node (the dynamic module's, the reference's) checks the actual ones.
  const int64_t b_rows = b2[b2.size() - 2];
  if (b_rows != d.k && d.k != kDynamicDim && b_rows != kDynamicDim)
    return absl::InvalidArgumentError(
        str_cat("inner dimensions do not match: A ", list_to_string(a), " has ", d.k,
                " columns, B ", list_to_string(b), " has ", b_rows, " rows"));
  if (d.k == kDynamicDim) d.k = b_rows;
  d.a_batch.assign(a2.begin(), a2.end() - 2);
  d.b_batch.assign(b2.begin(), b2.end() - 2);
  auto batch = broadcast_shapes(d.a_batch, d.b_batch);
  if (!batch)
    return absl::InvalidArgumentError(str_cat("batch dimensions of A ", list_to_string(a),
                                              " and B ", list_to_string(b), " do not broadcast"));
  d.batch = *batch;
  d.out = d.batch;
  if (a.size() > 1) d.out.push_back(d.m);
  if (b.size() > 1) d.out.push_back(d.n);
  return d;
}

absl::Status infer_matmul(InferContext& ctx) {
  if (absl::Status s = require_f32(ctx, {"A", "B"}); !s.ok()) return s;
  auto d = matmul_dims(ctx.input(0).shape, ctx.input(1).shape);
  if (!d.ok()) return node_error(ctx, d.status());
  ctx.set_output(0, {DType::f32, d->out});
  return absl::OkStatus();
}

absl::Status matmul_reference(const KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  auto d = matmul_dims(a.shape(), b.shape());
  if (!d.ok()) return d.status();
  const float* ad = a.data<float>();
  const float* bd = b.data<float>();
  float* yd = args.outputs[0].data<float>();
  if (shape_numel(d->b_batch) == 1) {
    // One B for every A matrix: the A stack is a single (batch * m) x k matrix.
    gemm_f32(shape_numel(d->a_batch) * d->m, d->n, d->k, 1.f, {ad, d->k, false}, {bd, d->n, false},
             0.f, yd, d->n);
    return absl::OkStatus();
  }
  const int64_t a_step = d->m * d->k, b_step = d->k * d->n, y_step = d->m * d->n;
  for_each_broadcast(d->a_batch, d->b_batch, d->batch, [&](int64_t ia, int64_t ib, int64_t o) {
    gemm_f32(d->m, d->n, d->k, 1.f, {ad + ia * a_step, d->k, false},
             {bd + ib * b_step, d->n, false}, 0.f, yd + o * y_step, d->n);
  });
  return absl::OkStatus();
}

absl::Status infer_gemm(InferContext& ctx) {
  const auto& g = ctx.attrs<GemmAttrs>();
  if (absl::Status s = require_f32(ctx, {"A", "B", "C"}); !s.ok()) return s;
  const Shape& a = ctx.input(0).shape;
  const Shape& b = ctx.input(1).shape;
  if (a.size() != 2 || b.size() != 2)
    return ctx.error(
        str_cat("A ", list_to_string(a), " and B ", list_to_string(b), " must both have rank 2"));
  const int64_t m = g.transA ? a[1] : a[0], k = g.transA ? a[0] : a[1];
  const int64_t kb = g.transB ? b[1] : b[0], n = g.transB ? b[0] : b[1];
  if (k != kb)
    return ctx.error(str_cat("inner dimensions do not match: A ", list_to_string(a),
                             " (transA=", g.transA, ") has ", k, " columns, B ", list_to_string(b),
                             " (transB=", g.transB, ") has ", kb, " rows"));
  const Shape out = {m, n};
  if (ctx.has_input(2)) {
    const Shape& c = ctx.input(2).shape;
    auto bc = broadcast_shapes(out, c);
    if (c.size() > 2 || !bc || *bc != out)
      return ctx.error(str_cat("input C has shape ", list_to_string(c),
                               ", which does not broadcast to the output ", list_to_string(out)));
  }
  ctx.set_output(0, {DType::f32, out});
  return absl::OkStatus();
}

absl::Status gemm_reference(const KernelArgs& args) {
  const auto& g = args.get<GemmAttrs>();
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& y = args.outputs[0];
  const int64_t m = y.shape()[0], n = y.shape()[1];
  const int64_t k = g.transA ? a.shape()[0] : a.shape()[1];
  const bool use_c = args.inputs.size() > 2 && !args.inputs[2].empty() && g.beta != 0.f;
  float* yd = y.data<float>();
  if (use_c) {
    const Tensor& c = args.inputs[2];
    for_each_broadcast(c.shape(), c.shape(), y.shape(), [&](int64_t ic, int64_t, int64_t o) {
      yd[o] = g.beta * c.data<float>()[ic];
    });
  }
  gemm_f32(m, n, k, g.alpha, {a.data<float>(), a.shape()[1], g.transA != 0},
           {b.data<float>(), b.shape()[1], g.transB != 0}, use_c ? 1.f : 0.f, yd, n);
  return absl::OkStatus();
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  OpDef matmul = make_op<NoAttrs>("MatMul", FusionKind::out_elementwise_fusable, 2, 2,
                                  infer_matmul, matmul_reference);
  // Inferred with run-time dimensions as they are: probing them with one stand-in size would make
  // A's unknown columns disagree with B's known rows (theta [N, 3, 4] x grid [4, D*H*W]).
  matmul.dynamic_shapes = true;
  add_builtin(r, std::move(matmul));
  add_builtin(r, make_op<GemmAttrs>("Gemm", FusionKind::out_elementwise_fusable, 2, 3, infer_gemm,
                                    gemm_reference));
}

}  // namespace collage::ops
