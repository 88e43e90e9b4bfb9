// Conformance of the Attention TE compute against the reference kernel: 3-D and 4-D inputs,
// grouped key/value heads, masks of every rank (float and bool), causal and sliding windows,
// soft-capping, the key/value cache with present outputs, padding lengths, the qk output modes,
// 16-bit inputs rounded as ONNX rounds them; and RotaryEmbedding.
#include <catch2/catch.hpp>
#include <optional>

#include "collage/ops/attention.h"
#include "common/backend_check.h"
#include "core/str_cat.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Attention over inputs Q, K, V, then attn_mask, past_key, past_value, nonpad_kv_seqlen where
// given (a constant where `constants` has a tensor).
Graph attention_graph(const Context& ctx, const std::vector<std::optional<TensorType>>& inputs,
                      std::function<void(AttentionAttrs&)> set, int outputs = 1,
                      const std::vector<Tensor>& constants = {}) {
  GraphBuilder b(ctx, "attention");
  std::vector<ValueId> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i])
      ins.push_back(kNoValue);
    else if (i < constants.size() && !constants[i].empty())
      ins.push_back(b.add_constant(str_cat("c", i), constants[i]));
    else
      ins.push_back(b.add_input(str_cat("x", i), *inputs[i]));
  }
  auto outs = b.add_node("Attention", ins, make_attrs<AttentionAttrs>(set), "op", outputs);
  INFO(outs.status().ToString());
  REQUIRE(outs.ok());
  for (ValueId v : *outs) b.add_output(v);
  auto g = b.finish();
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  return std::move(*g);
}

TensorType f32(Shape s) { return {DType::f32, std::move(s)}; }

}  // namespace

TEST_CASE("te_ops: Attention matches the reference", "[te_ops]") {
  Context ctx;
  const GroupCheck check{.tolerance = 1e-4, .lo = -1.f, .hi = 1.f, .elementwise = false};
  SECTION("4-D, grouped heads, causal, windows, soft-capping") {
    for (int causal : {0, 1})
      for (float softcap : {0.f, 2.f}) {
        INFO("causal " << causal << " softcap " << softcap);
        check_group(native_backend(),
                    attention_graph(ctx, {f32({2, 4, 5, 8}), f32({2, 2, 7, 8}), f32({2, 2, 7, 6})},
                                    [&](auto& a) {
                                      a.is_causal = causal;
                                      a.softcap = softcap;
                                    }),
                    check);
      }
    check_group(native_backend(),
                attention_graph(ctx, {f32({1, 2, 6, 4}), f32({1, 2, 6, 4}), f32({1, 2, 6, 4})},
                                [](auto& a) {
                                  a.left_window_size = 2;
                                  a.right_window_size = 1;
                                  a.scale = 0.3f;
                                }),
                check);
  }
  SECTION("3-D with head counts") {
    check_group(native_backend(),
                attention_graph(ctx, {f32({2, 5, 12}), f32({2, 7, 4}), f32({2, 7, 10})},
                                [](auto& a) {
                                  a.q_num_heads = 6;
                                  a.kv_num_heads = 2;
                                  a.is_causal = 1;
                                }),
                check);
  }
  SECTION("masks") {
    const std::vector<std::pair<DType, Shape>> masks = {
        {DType::f32, {5, 7}}, {DType::f32, {2, 1, 5, 7}}, {DType::boolean, {1, 4, 5, 7}},
        {DType::boolean, {7}}, {DType::f32, {5, 4}}};
    for (const auto& [t, s] : masks) {
      INFO("mask " << dtype_name(t) << " " << shape_to_string(s));
      check_group(
          native_backend(),
          attention_graph(
              ctx, {f32({2, 4, 5, 8}), f32({2, 4, 7, 8}), f32({2, 4, 7, 8}), TensorType{t, s}},
              [](auto&) {}),
          check);
    }
  }
  SECTION("cache, present outputs and the qk output modes") {
    for (int64_t mode : {0, 1, 2, 3}) {
      INFO("qk_matmul_output_mode " << mode);
      check_group(native_backend(),
                  attention_graph(
                      ctx,
                      {f32({1, 4, 3, 8}), f32({1, 2, 3, 8}), f32({1, 2, 3, 8}), f32({3, 6}),
                       f32({1, 2, 3, 8}), f32({1, 2, 3, 8})},
                      [&](auto& a) {
                        a.is_causal = 1;
                        a.qk_matmul_output_mode = mode;
                      },
                      4),
                  check);
    }
  }
  SECTION("padding lengths") {
    Tensor lengths = Tensor::from_i64({2}, std::vector<int64_t>{4, 7});
    check_group(
        native_backend(),
        attention_graph(ctx,
                        {f32({2, 2, 3, 8}), f32({2, 2, 7, 8}), f32({2, 2, 7, 8}), std::nullopt,
                         std::nullopt, std::nullopt, TensorType{DType::i64, {2}}},
                        [](auto& a) { a.is_causal = 1; }, 1,
                        {Tensor(), Tensor(), Tensor(), Tensor(), Tensor(), Tensor(), lengths}),
        check);
  }
  SECTION("16-bit inputs round where ONNX rounds") {
    // One f16 step apart at most (2^-11 relative), where an f32 sum rounds differently from the
    // reference's double one.
    const GroupCheck narrow{.tolerance = 2e-3, .lo = -1.f, .hi = 1.f, .elementwise = false};
    auto t16 = [](DType t, Shape s) { return TensorType{t, std::move(s)}; };
    const DType h = DType::f16;
    for (int64_t precision : {0, 1}) {
      INFO("f16, softmax_precision " << precision);
      check_group(native_backend(),
                  attention_graph(ctx,
                                  {t16(h, {2, 4, 5, 8}), t16(h, {2, 2, 7, 8}),
                                   t16(h, {2, 2, 7, 6}), t16(h, {5, 7})},
                                  [&](auto& a) {
                                    a.is_causal = 1;
                                    a.softmax_precision = precision;
                                  }),
                  narrow);
    }
    check_group(native_backend(),
                attention_graph(ctx,
                                {t16(h, {1, 4, 3, 8}), t16(h, {1, 2, 3, 8}), t16(h, {1, 2, 3, 8}),
                                 std::nullopt, t16(h, {1, 2, 3, 8}), t16(h, {1, 2, 3, 8})},
                                [](auto& a) { a.qk_matmul_output_mode = 3; }, 4),
                narrow);
    check_group(native_backend(),
                attention_graph(ctx,
                                {t16(DType::bf16, {1, 2, 3, 8}), t16(DType::bf16, {1, 2, 5, 8}),
                                 t16(DType::bf16, {1, 2, 5, 8})},
                                [](auto& a) { a.softmax_precision = 1; }),
                GroupCheck{.tolerance = 2e-2, .lo = -1.f, .hi = 1.f, .elementwise = false});
    const Graph bf16_softmax = attention_graph(
        ctx, {t16(DType::bf16, {1, 2, 3, 8}), t16(DType::bf16, {1, 2, 5, 8}),
              t16(DType::bf16, {1, 2, 5, 8})},
        [](auto&) {});
    auto refused = native_backend().build(bf16_softmax, BuildOptions{});
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(std::string(refused.status().message()), Catch::Contains("bf16 softmax"));
  }
}

TEST_CASE("te_ops: RotaryEmbedding matches the reference", "[te_ops]") {
  Context ctx;
  for (int64_t interleaved : {0, 1})
    for (int64_t rot : {0, 4}) {
      INFO("interleaved " << interleaved << " rotary_embedding_dim " << rot);
      auto attrs = make_attrs<RotaryEmbeddingAttrs>([&](auto& a) {
        a.interleaved = interleaved;
        a.rotary_embedding_dim = rot;
        a.num_heads = 3;
      });
      const int64_t half = (rot ? rot : 8) / 2;
      // 4-D with caches per (batch, seq); 3-D with position ids into longer caches.
      check_group(
          native_backend(),
          single_op_graph(ctx, "RotaryEmbedding",
                          {f32({2, 3, 5, 8}), f32({2, 5, half}), f32({2, 5, half})}, attrs));
      Tensor pos = Tensor::from_i64({2, 5}, std::vector<int64_t>{0, 1, 2, 3, 4, 6, 5, 9, 8, 7});
      check_group(native_backend(),
                  single_op_graph(ctx, "RotaryEmbedding",
                                  {f32({2, 5, 24}), f32({10, half}), f32({10, half}),
                                   TensorType{DType::i64, {2, 5}}},
                                  attrs, {Tensor(), Tensor(), Tensor(), pos}));
    }
}
