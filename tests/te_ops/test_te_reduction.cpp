// Conformance of the reduction TE computes (ReduceSum/Mean/Max, ArgMax, Softmax, LogSoftmax,
// LayerNormalization, InstanceNormalization) against the reference kernels.
#include <catch2/catch.hpp>

#include "collage/ops/elementwise.h"
#include "collage/ops/nn.h"
#include "collage/ops/trees.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: ReduceSum, ReduceMean and ReduceMax over any axes", "[te_ops]") {
  Context ctx;
  const std::vector<std::vector<int64_t>> axes = {{}, {0}, {-1}, {1}, {0, 2}, {1, 2}};
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"})
    for (const auto& ax : axes)
      for (int64_t keep : {0, 1}) {
        INFO(op << " axes " << ax.size() << " keepdims " << keep);
        auto attrs = make_attrs<ReduceAttrs>([&](auto& a) {
          a.axes = ax;
          a.keepdims = keep;
        });
        check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, {5, 67, 13}}}, attrs),
                    {1e-4});
      }
  // Long innermost axes reduce in blocks of partial results: with and without a last partial block.
  for (int64_t n : {1000, 1024})
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
      INFO(op << " over " << n);
      check_group(
          native_backend(),
          single_op_graph(ctx, op, {{DType::f32, {3, 5, n}}}, make_attrs<ReduceAttrs>([](auto& a) {
                            a.axes = {1, 2};
                          })),
          {.tolerance = 1e-5, .elementwise = false});
    }
  check_group(native_backend(),
              single_op_graph(ctx, "ReduceSum", {{DType::i64, {4, 9}}},
                              make_attrs<ReduceAttrs>([](auto& a) { a.axes = {1}; })));
  check_group(
      native_backend(),
      single_op_graph(ctx, "ReduceMean", {{DType::f32, {4, 9}}},
                      make_attrs<ReduceAttrs>([](auto& a) { a.noop_with_empty_axes = 1; })));
}

TEST_CASE("te_ops: ArgMax picks the first or last maximum", "[te_ops]") {
  Context ctx;
  for (int64_t axis : {0, 1, -1})
    for (int64_t keep : {0, 1})
      for (int64_t last : {0, 1}) {
        auto attrs = make_attrs<ArgMaxAttrs>([&](auto& a) {
          a.axis = axis;
          a.keepdims = keep;
          a.select_last_index = last;
        });
        INFO("axis " << axis << " keepdims " << keep << " last " << last);
        check_group(native_backend(),
                    single_op_graph(ctx, "ArgMax", {{DType::f32, {6, 11, 7}}}, attrs));
        // Integers in [0, 5): ties everywhere.
        check_group(native_backend(),
                    single_op_graph(ctx, "ArgMax", {{DType::i64, {6, 11, 7}}}, attrs));
        // Long axes reduce in blocks of partial results.
        check_group(native_backend(),
                    single_op_graph(ctx, "ArgMax", {{DType::i64, {3, 70, 100}}}, attrs));
      }
}

TEST_CASE("te_ops: Softmax and LogSoftmax over every axis", "[te_ops]") {
  Context ctx;
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (int64_t axis : {0, 1, 2, -1}) {
      INFO(op << " axis " << axis);
      auto attrs = make_attrs<SoftmaxAttrs>([&](auto& a) { a.axis = axis; });
      check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, {3, 45, 37}}}, attrs),
                  {1e-4, -4.f, 4.f});
      check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, {2, 5, 3}}}, attrs),
                  {1e-4});
      check_group(native_backend(), single_op_graph(ctx, op, {{DType::f32, {3, 2, 1000}}}, attrs),
                  {1e-4});
      // f64 (exp and log of f64 are libm's; the reference's sums differ in order).
      check_group(native_backend(), single_op_graph(ctx, op, {{DType::f64, {3, 5, 7}}}, attrs),
                  GroupCheck{.tolerance = 1e-5, .lo = -4.f, .hi = 4.f, .elementwise = false});
    }
}

TEST_CASE("te_ops: LayerNormalization and InstanceNormalization", "[te_ops]") {
  Context ctx;
  for (int64_t axis : {-1, -2, 1}) {
    INFO("axis " << axis);
    auto attrs = make_attrs<LayerNormalizationAttrs>([&](auto& a) {
      a.axis = axis;
      a.epsilon = 1e-3f;
    });
    const Shape x = {3, 41, 37};
    const Shape norm(x.begin() + (axis < 0 ? 3 + axis : axis), x.end());
    check_group(native_backend(),
                single_op_graph(ctx, "LayerNormalization",
                                {{DType::f32, x}, {DType::f32, norm}, {DType::f32, norm}}, attrs),
                {.tolerance = 1e-5, .lo = 0.f, .hi = 2.f, .elementwise = false});
    check_group(
        native_backend(),
        single_op_graph(ctx, "LayerNormalization", {{DType::f32, x}, {DType::f32, {x[2]}}}, attrs),
        {.tolerance = 1e-5, .elementwise = false});
  }
  check_group(native_backend(),
              single_op_graph(ctx, "InstanceNormalization",
                              {{DType::f32, {2, 5, 9, 11}}, {DType::f32, {5}}, {DType::f32, {5}}}),
              {.tolerance = 1e-5, .elementwise = false});
}
