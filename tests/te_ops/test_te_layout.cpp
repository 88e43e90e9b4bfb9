// Conformance of the injective (data movement) TE computes against the reference kernels:
// reshapes, Transpose, Concat, Split, Slice with negative steps, Gather with negative indices,
// GatherElements, Pad in every mode (with cropping), Expand, Tile, Shape, ConstantOfShape.
#include <catch2/catch.hpp>

#include "collage/ops/tensor.h"
#include "collage/ops/trees.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: Reshape, Flatten, Squeeze, Unsqueeze and Transpose", "[te_ops]") {
  Context ctx;
  const TensorType x = {DType::f32, {2, 3, 1, 35}};
  check_group(native_backend(),
              single_op_graph(ctx, "Reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                                a.shape = {6, -1, 5};
                              })));
  check_group(
      native_backend(),
      single_op_graph(ctx, "Flatten", {x}, make_attrs<FlattenAttrs>([](auto& a) { a.axis = 2; })));
  check_group(native_backend(),
              single_op_graph(ctx, "Squeeze", {x},
                              make_attrs<SqueezeAttrs>([](auto& a) { a.axes = {2}; })));
  check_group(native_backend(),
              single_op_graph(ctx, "Unsqueeze", {x}, make_attrs<UnsqueezeAttrs>([](auto& a) {
                                a.axes = {0, -1};
                              })));
  for (const std::vector<int64_t>& perm :
       std::vector<std::vector<int64_t>>{{}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}}) {
    INFO("perm size " << perm.size());
    check_group(native_backend(),
                single_op_graph(ctx, "Transpose", {{DType::f32, {3, 5, 7, 37}}},
                                make_attrs<TransposeAttrs>([&](auto& a) { a.perm = perm; })));
  }
  check_group(native_backend(), single_op_graph(ctx, "Transpose", {{DType::i64, {3, 5}}}));
}

TEST_CASE("te_ops: Concat and Split along any axis", "[te_ops]") {
  Context ctx;
  for (int64_t axis : {0, 1, -1}) {
    INFO("axis " << axis);
    Shape a = {2, 3, 17}, b = a, c = a;
    const int64_t k = axis < 0 ? 2 : axis;
    b[k] = 5;
    c[k] = 1;
    // f16 and bf16 parts are selected in f32 and stored back in their own type.
    for (DType t : {DType::f32, DType::f16, DType::bf16})
      check_group(native_backend(),
                  single_op_graph(ctx, "Concat", {{t, a}, {t, b}, {t, c}},
                                  make_attrs<ConcatAttrs>([&](auto& x) { x.axis = axis; })));
    check_group(native_backend(), single_op_graph(ctx, "Split", {{DType::f32, {4, 9, 37}}},
                                                  make_attrs<SplitAttrs>([&](auto& x) {
                                                    x.axis = axis;
                                                    x.split = {1, 3};
                                                    if (axis != 0) x.split = {2, 7};
                                                    if (axis == -1) x.split = {30, 7};
                                                  }),
                                                  {}, 2));
  }
  check_group(native_backend(),
              single_op_graph(ctx, "Split", {{DType::f32, {7, 3}}},
                              make_attrs<SplitAttrs>([](auto& x) { x.axis = 0; }), {}, 3));
}

TEST_CASE("te_ops: Slice with clamping and negative steps", "[te_ops]") {
  Context ctx;
  struct Case {
    std::vector<int64_t> starts, ends, axes = {}, steps = {};
  };
  const std::vector<Case> cases = {
      {{1, 2}, {4, -1}, {}, {}},
      {{-1}, {-1000}, {2}, {-1}},
      {{10, 0}, {0, 100}, {2, 0}, {-3, 2}},
      {{0, 5}, {INT64_MAX, INT64_MIN}, {1, 2}, {2, -2}}};
  for (const Case& c : cases) {
    auto attrs = make_attrs<SliceAttrs>([&](auto& a) {
      a.starts = c.starts;
      a.ends = c.ends;
      a.axes = c.axes;
      a.steps = c.steps;
    });
    check_group(native_backend(), single_op_graph(ctx, "Slice", {{DType::f32, {5, 7, 13}}}, attrs));
  }
}

TEST_CASE("te_ops: Gather and GatherElements with negative indices", "[te_ops]") {
  Context ctx;
  Tensor idx = Tensor::from_i64({2, 3}, std::vector<int64_t>{0, -1, 2, 4, -5, 1});
  for (int64_t axis : {0, 1, -1}) {
    INFO("axis " << axis);
    check_group(
        native_backend(),
        single_op_graph(ctx, "Gather", {{DType::f32, {5, 6, 5}}, {DType::i64, {2, 3}}},
                        make_attrs<GatherAttrs>([&](auto& a) { a.axis = axis; }), {Tensor(), idx}));
  }
  check_group(native_backend(),
              single_op_graph(ctx, "Gather", {{DType::f32, {5, 4}}, {DType::i64, {}}}, nullptr,
                              {Tensor(), Tensor::scalar_i64(-2)}));
  Tensor ge = Tensor::from_i64({2, 3}, std::vector<int64_t>{1, -1, 0, 2, 0, -3});
  check_group(native_backend(),
              single_op_graph(ctx, "GatherElements", {{DType::f32, {3, 4}}, {DType::i64, {2, 3}}},
                              make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 0; }),
                              {Tensor(), ge}));
  check_group(native_backend(),
              single_op_graph(ctx, "GatherElements", {{DType::f32, {2, 4}}, {DType::i64, {2, 3}}},
                              make_attrs<GatherElementsAttrs>([](auto& a) { a.axis = 1; }),
                              {Tensor(), ge}));
}

TEST_CASE("te_ops: Pad in constant, reflect and edge modes, with cropping", "[te_ops]") {
  Context ctx;
  const std::vector<std::vector<int64_t>> pads = {
      {0, 1, 2, 0, 3, 1}, {1, 0, 0, 2, 0, 3}, {0, -1, 2, 0, 1, -2}, {0, 0, 0, 0, 0, 0}};
  for (const char* mode : {"constant", "reflect", "edge"})
    for (const auto& p : pads) {
      INFO(mode);
      auto attrs = make_attrs<PadAttrs>([&](auto& a) {
        a.pads = p;
        a.mode = mode;
        a.value = 1.5f;
      });
      for (DType t : {DType::f32, DType::f16, DType::bf16})
        check_group(native_backend(), single_op_graph(ctx, "Pad", {{t, {3, 5, 7}}}, attrs));
    }
}

TEST_CASE("te_ops: Expand, Tile, Shape and ConstantOfShape", "[te_ops]") {
  Context ctx;
  check_group(native_backend(), single_op_graph(ctx, "Expand", {{DType::f32, {3, 1, 7}}},
                                                make_attrs<ExpandAttrs>([](auto& a) {
                                                  a.shape = {2, 1, 5, 1};
                                                })));
  check_group(native_backend(), single_op_graph(ctx, "Tile", {{DType::f32, {3, 1, 7}}},
                                                make_attrs<TileAttrs>([](auto& a) {
                                                  a.repeats = {2, 3, 1};
                                                })));
  check_group(native_backend(),
              single_op_graph(ctx, "Shape", {{DType::f32, {3, 1, 7}}},
                              make_attrs<ShapeAttrs>([](auto& a) { a.start = -2; })));
  check_group(native_backend(), single_op_graph(ctx, "ConstantOfShape", {},
                                                make_attrs<ConstantOfShapeAttrs>([](auto& a) {
                                                  a.shape = {3, 4};
                                                  a.value = Tensor::scalar_i64(7);
                                                })));
}

TEST_CASE("te_ops: Resize nearest and linear with the coordinate modes", "[te_ops]") {
  Context ctx;
  struct Case {
    std::string mode, coord, nearest = "round_prefer_floor";
    std::vector<float> scales = {};
    std::vector<int64_t> sizes = {};
  };
  const std::vector<Case> cases = {
      {"nearest", "asymmetric", "floor", {1, 1, 2, 2}},
      {"nearest", "half_pixel", "round_prefer_floor", {}, {1, 3, 7, 9}},
      {"nearest", "align_corners", "round_prefer_ceil", {}, {1, 3, 3, 13}},
      {"nearest", "tf_half_pixel_for_nn", "ceil", {1, 1, 0.5f, 1.5f}},
      {"linear", "half_pixel", "", {1, 1, 2, 2}},
      {"linear", "align_corners", "", {}, {1, 3, 9, 4}},
      {"linear", "pytorch_half_pixel", "", {}, {1, 3, 1, 11}},
      {"linear", "asymmetric", "", {1, 2, 1.5f, 0.75f}}};
  for (const Case& c : cases) {
    INFO(c.mode << " " << c.coord << " " << c.nearest);
    auto attrs = make_attrs<ResizeAttrs>([&](auto& a) {
      a.mode = c.mode;
      a.coordinate_transformation_mode = c.coord;
      if (!c.nearest.empty()) a.nearest_mode = c.nearest;
      a.scales = c.scales;
      a.sizes = c.sizes;
    });
    check_group(native_backend(),
                single_op_graph(ctx, "Resize", {{DType::f32, {1, 3, 5, 6}}}, attrs));
  }
}

TEST_CASE("te_ops: integer and bool data through the layout operators, Range", "[te_ops]") {
  Context ctx;
  check_group(
      native_backend(),
      single_op_graph(
          ctx, "Gather", {{DType::i64, {5, 4}}, {DType::i32, {3}}}, nullptr,
          {Tensor(), Tensor::from_i64({3}, std::vector<int64_t>{4, -1, 0}).cast(DType::i32)}));
  check_group(native_backend(),
              single_op_graph(ctx, "Concat", {{DType::i32, {2, 3}}, {DType::i32, {1, 3}}}));
  check_group(native_backend(),
              single_op_graph(ctx, "Pad", {{DType::i64, {3, 4}}}, make_attrs<PadAttrs>([](auto& a) {
                                a.pads = {1, 0, 0, 2};
                                a.value = 7.f;
                              })));
  check_group(native_backend(), single_op_graph(ctx, "Transpose", {{DType::boolean, {3, 5}}}));
  check_group(native_backend(), single_op_graph(ctx, "Squeeze", {{DType::f32, {1, 3, 1, 5}}}));
  for (DType t : {DType::i64, DType::i32, DType::f32}) {
    INFO("Range " << dtype_name(t));
    Tensor start = Tensor::scalar_i64(-3).cast(t), limit = Tensor::scalar_i64(17).cast(t),
           delta = Tensor::scalar_i64(4).cast(t);
    check_group(native_backend(),
                single_op_graph(ctx, "Range", {start.type(), limit.type(), delta.type()}, nullptr,
                                {start, limit, delta}));
  }
}
