// Shape inference helpers of the elementwise operators and the family's registration entry point.
#include "ops/elementwise_common.h"

#include <cassert>

#include "ops/op_sets.h"

namespace collage::ops {

std::string type_set_to_string(TypeSet s) {
  std::string out;
  for (DType t :
       {DType::f32, DType::f16, DType::bf16, DType::i8, DType::i32, DType::i64, DType::boolean}) {
    if (!in_set(s, t)) continue;
    if (!out.empty()) out += ", ";
    out += dtype_name(t);
  }
  return out;
}

absl::Status check_dtype(const InferContext& ctx, int i, TypeSet allowed) {
  const DType t = ctx.input(i).dtype;
  if (in_set(allowed, t)) return absl::OkStatus();
  return ctx.error(str_cat("input ", i, " has dtype ", dtype_name(t), ", expected one of ",
                           type_set_to_string(allowed)));
}

absl::Status check_same_dtype(const InferContext& ctx, int i, int j) {
  const DType a = ctx.input(i).dtype, b = ctx.input(j).dtype;
  if (a == b) return absl::OkStatus();
  return ctx.error(str_cat("inputs ", i, " and ", j, " have different dtypes ", dtype_name(a),
                           " and ", dtype_name(b)));
}

absl::Status check_output_count(const InferContext& ctx, int max_outputs) {
  if (ctx.requested_outputs() <= max_outputs) return absl::OkStatus();
  return ctx.error(str_cat(ctx.requested_outputs(), " outputs requested, the operator has ",
                           max_outputs == 1 ? "1 output" : str_cat("at most ", max_outputs)));
}

absl::StatusOr<Shape> broadcast_inputs(const InferContext& ctx, const std::vector<int>& which) {
  std::vector<Shape> shapes;
  for (int i : which) shapes.push_back(ctx.input(i).shape);
  if (auto out = broadcast_all(shapes)) return *out;
  std::string list;
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (k) list += k + 1 == shapes.size() ? " and " : ", ";
    list += shape_to_string(shapes[k]);
  }
  return ctx.error(str_cat("shapes ", list, " do not broadcast"));
}

absl::Status infer_unary(InferContext& ctx, TypeSet allowed) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, allowed); !s.ok()) return s;
  ctx.set_output(0, ctx.input(0));
  return absl::OkStatus();
}

absl::Status infer_binary(InferContext& ctx, TypeSet allowed, const DType* out) {
  if (absl::Status s = check_output_count(ctx, 1); !s.ok()) return s;
  if (absl::Status s = check_dtype(ctx, 0, allowed); !s.ok()) return s;
  if (absl::Status s = check_same_dtype(ctx, 0, 1); !s.ok()) return s;
  absl::StatusOr<Shape> shape = broadcast_inputs(ctx, {0, 1});
  if (!shape.ok()) return shape.status();
  ctx.set_output(0, TensorType{out ? *out : ctx.input(0).dtype, std::move(*shape)});
  return absl::OkStatus();
}

void add_builtin_op(OpRegistry& r, OpDef def) {
  declare_attr_inputs(def);
  [[maybe_unused]] absl::Status s = r.add(std::move(def));
  assert(s.ok() && "built-in operator registered twice");
}

void register_elementwise_ops(OpRegistry& r) {
  register_unary_math_ops(r);
  register_binary_arith_ops(r);
  register_comparison_ops(r);
  register_cast_ops(r);
  register_activation_ops(r);
  register_logic_ops(r);
  register_math_ops(r);
  register_variadic_ops(r);
}

}  // namespace collage::ops
