// Registration of the nn operator family and the checks its files share.
#include "ops/nn_ops.h"

#include <cassert>

#include "core/str_cat.h"
#include "ops/op_sets.h"

namespace collage::ops {

void add_builtin(OpRegistry& r, OpDef def) {
  [[maybe_unused]] absl::Status s = r.add(std::move(def));
  assert(s.ok());
}

absl::Status require_f32(const InferContext& ctx, std::initializer_list<const char*> names) {
  int i = 0;
  for (const char* name : names) {
    if (ctx.has_input(i) && ctx.input(i).dtype != DType::f32)
      return ctx.error(
          str_cat("input ", name, " must be f32, got ", dtype_name(ctx.input(i).dtype)));
    ++i;
  }
  return absl::OkStatus();
}

absl::Status node_error(const InferContext& ctx, const absl::Status& s) {
  return ctx.error(std::string(s.message()));
}

Shape spatial_dims(const Shape& s) {
  return Shape(s.begin() + 2, s.end());
}

void register_nn_ops(OpRegistry& r) {
  register_conv_op(r);
  register_conv_transpose_op(r);
  register_pool_ops(r);
  register_norm_ops(r);
  register_softmax_ops(r);
  register_matmul_ops(r);
}

}  // namespace collage::ops
