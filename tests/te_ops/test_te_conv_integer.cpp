// Conformance of the ConvInteger TE compute against the reference kernel: i8 and u8, zero points
// absent, per tensor and per output channel, groups, strides, dilations and padding.
#include <catch2/catch.hpp>

#include "collage/ops/nn.h"
#include "common/backend_check.h"
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
