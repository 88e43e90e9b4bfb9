// Helpers shared by the TE operator definitions: node errors, value types, broadcasting index
// maps, axis normalisation and dtype casts.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collage/graph.h"
#include "collage/te.h"

namespace collage::te_ops {

// InvalidArgument "<Op> '<node>': <message>".
absl::Status node_error(const Node& node, std::string_view message);

const TensorType& output_type(const Graph& g, const Node& node, int i = 0);

// The indices into `t` (rank r <= output rank) that numpy broadcasting maps output element `out`
// to: axes aligned at the end, size-1 axes of `t` read index 0.
std::vector<te::Expr> broadcast_index(const te::Tensor& t, std::span<const te::Var> out);

// `axis` in [-rank, rank) made non-negative; error naming the node otherwise.
absl::StatusOr<int64_t> normalize_axis(const Node& node, int64_t axis, int64_t rank);

// `v` converted to `t` unless it already has that type.
te::Expr cast_to(DType t, const te::Expr& v);

// The element of a row-major tensor of `shape` at flat position `flat`, as one index per axis.
std::vector<te::Expr> unravel(const te::Expr& flat, const Shape& shape);
// The flat row-major position of `index` in a tensor of `shape`.
te::Expr ravel(std::span<const te::Expr> index, const Shape& shape);
te::Expr ravel(std::span<const te::Var> index, const Shape& shape);

// `i` clamped to [0, extent - 1], so that a read in a branch not taken stays in bounds.
te::Expr clamp_index(const te::Expr& i, int64_t extent);

// Name of the tensor for output `i` of `node`.
std::string tensor_name(const Node& node, int i = 0);

// Fails unless every present input of `node` has one of the dtypes in `allowed`.
absl::Status require_dtypes(const Graph& g, const Node& node, std::initializer_list<DType> allowed);

inline bool is_float_like(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

}  // namespace collage::te_ops
