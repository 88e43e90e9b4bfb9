// Conformance of DynamicQuantizeRange, DynamicQuantizeParams and QuantizeLinear with computed
// scale and zero point (what a large DynamicQuantizeLinear is split into) against the reference
// kernels: bit-identical, on 1, 3 and 8 threads.
#include <catch2/catch.hpp>

#include "collage/ops/dynamic_quantize_parts.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

std::shared_ptr<const OpAttrs> range_attrs(int64_t axis, int64_t chunks) {
  return make_attrs<DynamicQuantizeRangeAttrs>([&](auto& a) {
    a.axis = axis;
    a.chunks = chunks;
  });
}

}  // namespace

TEST_CASE("te_ops: DynamicQuantizeRange matches the reference", "[te_ops][quantize]") {
  Context ctx;
  struct Case {
    Shape x;
    int64_t axis, chunks;
  };
  // A ResNet activation as the split cuts it; rows that end in a vector tail; leading axes
  // reduced inside each chunk; one value per row (axis = rank).
  for (const Case& c : {Case{{1, 64, 56, 56}, 2, 4}, Case{{6, 10, 33}, 2, 5},
                        Case{{3, 8, 40}, 2, 2}, Case{{12, 9}, 2, 3}}) {
    INFO(shape_to_string(c.x) << " axis " << c.axis << " chunks " << c.chunks);
    const Graph g = single_op_graph(ctx, "DynamicQuantizeRange", {{DType::f32, c.x}},
                                    range_attrs(c.axis, c.chunks));
    CHECK(check_group(native_backend(), g, {.tolerance = 0, .lo = -3.f, .hi = 5.f, .claim = true})
              .error == 0);
  }
}

TEST_CASE("te_ops: DynamicQuantizeParams matches the reference", "[te_ops][quantize]") {
  Context ctx;
  // Rows of 3,136 (combined 64 at a time), 330 (2 at a time) and 7 (one at a time); ranges on
  // both sides of 0, above it and below it (the range is widened to hold 0).
  for (const Shape& r : {Shape{2, 4, 3136}, Shape{2, 3, 330}, Shape{2, 2, 7}})
    for (auto [lo, hi] : {std::pair{-2.f, 3.f}, std::pair{0.5f, 4.f}, std::pair{-4.f, -1.f}}) {
      INFO(shape_to_string(r) << " in [" << lo << ", " << hi << ")");
      const Graph g = single_op_graph(ctx, "DynamicQuantizeParams", {{DType::f32, r}}, nullptr, {}, 2);
      CHECK(check_group(native_backend(), g, {.tolerance = 0, .lo = lo, .hi = hi, .claim = true})
                .error == 0);
    }
}
