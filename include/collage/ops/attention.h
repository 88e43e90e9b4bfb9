// Attribute structs of Attention (ONNX 23-25: scaled dot-product attention with masks, causal
// and sliding-window masking, grouped-query heads, a key/value cache and soft-capping) and
// RotaryEmbedding.
#pragma once

#include <cstdint>

#include "collage/attrs.h"

namespace collage {

// Attention(Q, K, V, [attn_mask], [past_key], [past_value], [nonpad_kv_seqlen]) ->
// (Y, [present_key], [present_value], [qk_matmul_output]). 4-D inputs are [batch, heads, seq,
// head size]; 3-D ones [batch, seq, heads * head size] with q_num_heads / kv_num_heads given.
// scale 0 means 1 / sqrt(head size); softcap > 0 applies softcap * tanh(x / softcap) to the
// scores; a window size of -1 is unbounded; softmax_precision is an ONNX element type (0: the
// inputs'). qk_matmul_output_mode: 0/1 the (soft-capped) scores, 2 with the mask added, 3 after
// the softmax.
struct AttentionAttrs : AttrsOf<AttentionAttrs> {
  int64_t is_causal = 0;
  int64_t q_num_heads = 0;
  int64_t kv_num_heads = 0;
  int64_t qk_matmul_output_mode = 0;
  float scale = 0.f;
  float softcap = 0.f;
  int64_t softmax_precision = 0;
  int64_t left_window_size = -1;
  int64_t right_window_size = -1;
  template <class V>
  void fields(V& v) {
    v.field("is_causal", is_causal);
    v.field("q_num_heads", q_num_heads);
    v.field("kv_num_heads", kv_num_heads);
    v.field("qk_matmul_output_mode", qk_matmul_output_mode);
    v.field("scale", scale);
    v.field("softcap", softcap);
    v.field("softmax_precision", softmax_precision);
    v.field("left_window_size", left_window_size);
    v.field("right_window_size", right_window_size);
  }
};

// RotaryEmbedding(X, cos_cache, sin_cache, [position_ids]): rotates the first
// rotary_embedding_dim (0: all) entries of each head of X ([batch, heads, seq, head] or
// [batch, seq, num_heads * head]) by the angles whose cosines and sines the caches hold (rows
// picked by position_ids, or one per batch and position); the pairs rotated are adjacent
// (interleaved) or the two halves.
struct RotaryEmbeddingAttrs : AttrsOf<RotaryEmbeddingAttrs> {
  int64_t interleaved = 0;
  int64_t rotary_embedding_dim = 0;
  int64_t num_heads = 0;
  template <class V>
  void fields(V& v) {
    v.field("interleaved", interleaved);
    v.field("rotary_embedding_dim", rotary_embedding_dim);
    v.field("num_heads", num_heads);
  }
};

}  // namespace collage
