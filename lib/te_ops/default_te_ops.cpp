// default_te_ops: the registry with every operator family of the TE operator library.
#include "collage/te_ops.h"
#include "te_ops/dynamic_quantize_parts.h"

namespace collage::te_ops {

TeOpRegistry default_te_ops(const codegen::TargetSpec& target) {
  TeOpRegistry r;
  register_elementwise_ops(r);
  register_injective_ops(r);
  register_reduction_ops(r);
  register_nn_misc_ops(r);
  register_math_ops(r);
  register_indexing_ops(r);
  register_loss_ops(r);
  register_attention_op(r);
  register_norm_extra_ops(r);
  register_norm_window_ops(r);
  register_det_op(r);
  register_batch_norm_training_op(r);
  register_rotary_op(r);
  register_grid_sample_op(r);
  register_conv_integer_op(r);
  register_qlinear_matmul_ops(r);
  register_gather_nd_op(r);
  register_scatter_ops(r);
  register_tensor_scatter_op(r);
  register_cumulative_ops(r);
  register_bitwise_ops(r);
  register_quantize_ops(r);
  register_dynamic_quantize_parts(r);
  register_resize_op(r);
  register_conv_ops(r);
  register_dense_ops(r, target);
  return r;
}

}  // namespace collage::te_ops
