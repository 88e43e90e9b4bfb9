// The built-in operator set.
#include "ops/dynamic_quantize_parts.h"
#include "ops/op_sets.h"
#include "ops/op_sets_ml.h"

namespace collage {

void register_builtin_ops(OpRegistry& registry) {
  ops::register_nn_ops(registry);
  ops::register_elementwise_ops(registry);
  ops::register_reduction_ops(registry);
  ops::register_tensor_ops(registry);
  ops::register_tree_ops(registry);
  ops::register_indexing_ops(registry);
  ops::register_norm_extra_ops(registry);
  ops::register_loss_ops(registry);
  ops::register_attention_op(registry);
  ops::register_grid_sample_op(registry);
  ops::register_rotary_embedding_op(registry);
  ops::register_lp_pool_op(registry);
  ops::register_quantize_ops(registry);
  ops::register_dynamic_quantize_parts(registry);
  ops::register_recurrent_ops(registry);
  ops::register_text_ops(registry);
  ops::register_data_dependent_ops(registry);
  ops::register_control_flow_ops(registry);
  ops::register_signal_ops(registry);
  ops::register_center_crop_pad_op(registry);
  ops::register_affine_grid_op(registry);
  ops::register_quantized_conv_ops(registry);
  ops::register_col2im_op(registry);
  ops::register_topk_op(registry);
  ops::register_string_ops(registry);
  ops::register_regex_full_match_op(registry);
  ops::register_label_encoder_op(registry);
  ops::register_pairwise_coupling_op(registry);
  ops::register_cast_string_op(registry);
}

}  // namespace collage
