// Conformance of the ConvInteger TE compute against the reference kernel: i8 and u8, zero points
// absent, per tensor and per output channel, groups, strides, dilations and padding; and
// QLinearConv's requantisation (scales per tensor and per channel, the i32 bias).
#include <catch2/catch.hpp>

#include "collage/ops/nn.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: ConvInteger matches the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, dilations, pads;
  };
  const std::vector<Case> cases = {
      {{1, 2, 5, 5}, {3, 2, 3, 3}, 1, {}, {}, {}},
      {{2, 4, 6, 7}, {4, 2, 3, 2}, 2, {2, 1}, {1, 2}, {1, 0, 1, 1}},
      {{1, 3, 9}, {2, 3, 3}, 1, {2}, {}, {1, 1}},
  };
  for (DType t : {DType::i8, DType::u8})
    for (const Case& c : cases)
      for (int zero_points : {0, 1, 2}) {  // none, per tensor, per output channel (weights)
        INFO(dtype_name(t) << " x " << shape_to_string(c.x) << " zero points " << zero_points);
        auto attrs = make_attrs<ConvAttrs>([&](auto& a) {
          a.group = c.group;
          a.strides = c.strides;
          a.dilations = c.dilations;
          a.pads = c.pads;
        });
        std::vector<TensorType> inputs = {{t, c.x}, {t, c.w}};
        if (zero_points > 0) {
          inputs.push_back({t, {}});
          inputs.push_back({t, zero_points == 1 ? Shape{} : Shape{c.w[0]}});
        }
        check_group(native_backend(), single_op_graph(ctx, "ConvInteger", inputs, attrs),
                    {.elementwise = false});
      }
}

TEST_CASE("te_ops: QLinearConv requantises as the reference", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x, w;
    int64_t group;
    bool per_channel, bias;
  };
  const std::vector<Case> cases = {{{1, 2, 5, 5}, {3, 2, 3, 3}, 1, false, false},
                                   {{2, 4, 6, 7}, {4, 2, 3, 2}, 2, true, true},
                                   {{1, 3, 9}, {2, 3, 3}, 1, true, false}};
  for (DType t : {DType::u8, DType::i8})
    for (const Case& c : cases) {
      INFO(dtype_name(t) << " x " << shape_to_string(c.x) << " * " << shape_to_string(c.w));
      auto attrs = make_attrs<ConvAttrs>([&](auto& a) {
        a.group = c.group;
        a.pads = std::vector<int64_t>(2 * (c.x.size() - 2), 1);
      });
      const Shape ch = c.per_channel ? Shape{c.w[0]} : Shape{};
      std::vector<TensorType> types = {{t, c.x},  {DType::f32, {}}, {t, {}},
                                       {t, c.w},  {DType::f32, ch}, {t, ch},
                                       {DType::f32, {}}, {t, {}}};
      // Values 0 to 4 (random_tensor's integers), scales giving outputs mostly inside the range.
      std::vector<Tensor> inputs = {
          random_tensor(types[0], 1), random_f32({}, 2, 0.05f, 0.1f), random_tensor(types[2], 3),
          random_tensor(types[3], 4), random_f32(ch, 5, 0.05f, 0.1f), random_tensor(types[5], 6),
          random_f32({}, 7, 0.01f, 0.02f), random_tensor(types[7], 8)};
      if (c.bias) {
        types.push_back({DType::i32, {c.w[0]}});
        inputs.push_back(random_tensor(types.back(), 9));
      }
      check_group(native_backend(), single_op_graph(ctx, "QLinearConv", types, attrs),
                  {.inputs = inputs});
    }
}
