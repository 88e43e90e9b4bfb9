// Conformance of the MeanVarianceNormalization, GroupNormalization, LRN and GlobalMaxPool TE
// computes (lib/te_ops/norm_window_ops.cpp) against the reference kernels, on f32 and f16.
#include <catch2/catch.hpp>

#include "collage/ops/normalization.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: MeanVarianceNormalization over listed axes", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 5, 7}, {0, 2, 3}},
                                         {{3, 4, 9}, {-1}},
                                         {{2, 5, 3, 4}, {1, 3}},
                                         {{4, 6}, {0, 1}}}) {
    INFO("MVN on " << shape_to_string(c.x));
    auto attrs =
        make_attrs<MeanVarianceNormalizationAttrs>([&](auto& a) { a.axes = c.axes; });
    check_group(native_backend(),
                single_op_graph(ctx, "MeanVarianceNormalization", {{DType::f32, c.x}}, attrs),
                {1e-4});
  }
}

TEST_CASE("te_ops: GroupNormalization over channel groups and spatial axes", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x;
    int64_t groups;
    DType t = DType::f32;
  };
  for (const Case& c : std::vector<Case>{{{2, 6, 5, 7}, 3},
                                         {{3, 4, 11}, 2},
                                         {{1, 8, 3, 2, 3}, 8},
                                         {{2, 4}, 1},
                                         {{2, 6, 4, 4}, 2, DType::f16}}) {
    INFO("GroupNormalization on " << shape_to_string(c.x) << " in " << c.groups << " groups");
    auto attrs = make_attrs<GroupNormalizationAttrs>([&](auto& a) {
      a.num_groups = c.groups;
      a.epsilon = 1e-3f;
    });
    check_group(native_backend(),
                single_op_graph(ctx, "GroupNormalization",
                                {{c.t, c.x}, {c.t, {c.x[1]}}, {c.t, {c.x[1]}}}, attrs),
                {c.t == DType::f16 ? 5e-3 : 1e-4});
  }
}

TEST_CASE("te_ops: LRN over odd and even channel windows", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x;
    int64_t size;
    float alpha, beta, bias;
  };
  for (const Case& c : std::vector<Case>{{{2, 7, 5, 6}, 3, 2e-4f, 0.75f, 1.f},
                                         {{1, 6, 4, 4}, 4, 1e-2f, 0.5f, 2.f},
                                         {{2, 5, 9}, 5, 0.1f, 0.9f, 1.5f},
                                         {{1, 3, 2, 2}, 8, 1e-3f, 0.75f, 1.f}}) {
    INFO("LRN size " << c.size << " on " << shape_to_string(c.x));
    auto attrs = make_attrs<LRNAttrs>([&](auto& a) {
      a.size = c.size;
      a.alpha = c.alpha;
      a.beta = c.beta;
      a.bias = c.bias;
    });
    check_group(native_backend(), single_op_graph(ctx, "LRN", {{DType::f32, c.x}}, attrs),
                GroupCheck{.tolerance = 1e-4, .lo = -3.f, .hi = 3.f});
  }
}

TEST_CASE("te_ops: GlobalMaxPool over 1 to 3 spatial axes", "[te_ops]") {
  Context ctx;
  for (const Shape& x : std::vector<Shape>{{2, 3, 5, 7}, {1, 67, 11}, {2, 2, 3, 4, 5}}) {
    INFO("GlobalMaxPool on " << shape_to_string(x));
    check_group(native_backend(), single_op_graph(ctx, "GlobalMaxPool", {{DType::f32, x}}));
  }
  check_group(native_backend(), single_op_graph(ctx, "GlobalMaxPool", {{DType::f16, {2, 3, 9}}}));
}
