// Conformance of the GridSample TE compute against the reference kernel: every mode and padding
// mode, aligned corners or not, 1 to 3 spatial axes, grid points inside and outside the input.
#include <catch2/catch.hpp>

#include "collage/ops/sampling.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: GridSample matches the reference", "[te_ops]") {
  Context ctx;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{2, 3, 5, 7}, {2, 4, 6, 2}}, {{1, 2, 4, 5, 3}, {1, 3, 2, 4, 3}}, {{2, 2, 9}, {2, 5, 1}}};
  for (const char* mode : {"nearest", "linear", "cubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1})
        for (const auto& [x, grid] : shapes) {
          INFO(mode << " " << padding << " align_corners " << align << " X "
                    << shape_to_string(x));
          auto attrs = make_attrs<GridSampleAttrs>([&](auto& a) {
            a.mode = mode;
            a.padding_mode = padding;
            a.align_corners = align;
          });
          // Grid points up to 0.6 outside [-1, 1], so every padding mode folds some; errors
          // relative to the largest output (cubic weights cancel in f32).
          check_group(
              native_backend(),
              single_op_graph(ctx, "GridSample", {{DType::f32, x}, {DType::f32, grid}}, attrs),
              {.tolerance = 1e-4, .lo = -1.6f, .hi = 1.6f, .elementwise = false});
        }
}
