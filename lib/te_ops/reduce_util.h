// Reductions over any set of axes as TE computes (with vector-friendly partial results along a
// long innermost axis), and the index helpers of the operators built on them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collage/te.h"
#include "collage/tensor.h"

namespace collage::te_ops {

// A reduction over the axes k of `shape` with reduced[k] set; they are dropped from the result,
// or kept with size 1 when `keepdims`. `source` receives one index per axis of `shape`.
te::Tensor reduce_over(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                       te::ReduceOp op, const std::function<te::Expr(const std::vector<te::Expr>&)>& source,
                       const std::string& name);

// As above, the elements of the last, partial block of a long innermost axis (the partial
// results' tail) read through `tail_source`: a stage computed at a loop feeds one stage, so a
// statistic that `source` reads (softmax's maximum) needs a copy of its own for the tail's reads.
te::Tensor reduce_over(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                       te::ReduceOp op,
                       const std::function<te::Expr(const std::vector<te::Expr>&)>& source,
                       const std::function<te::Expr(const std::vector<te::Expr>&)>& tail_source,
                       const std::string& name);

// The sum of squared deviations of source(idx) from their mean over the axes with reduced[k]
// set (a mean of its own, `inv_n` times a keepdims sum, so that each statistic has one reader:
// the variance's second pass), kept with size-1 axes when `keepdims`.
te::Tensor squared_deviations(const Shape& shape, const std::vector<bool>& reduced, bool keepdims,
                              const te::Expr& inv_n,
                              const std::function<te::Expr(const std::vector<te::Expr>&)>& source,
                              const std::string& name);

// Index `idx` of the full shape mapped into a keepdims statistic (reduced axes read 0).
std::vector<te::Expr> stat_index(const std::vector<te::Expr>& idx, const std::vector<bool>& reduced);

std::vector<te::Expr> as_exprs(const std::vector<te::Var>& v);

// t(idx), widened to f32 when t holds f16 or bf16.
te::Expr load_f32(const te::Tensor& t, const std::vector<te::Expr>& idx);

// `v` (f32) rounded to `t` and widened back when t is f16 or bf16: where ONNX's definition makes a
// 16-bit value inside an operator (the reference's round16, lib/ops/nn_ops.h); `v` otherwise.
te::Expr round16(DType t, const te::Expr& v);

}  // namespace collage::te_ops
