// Conformance of the MatMul TE computes on f64 (lib/te_ops/matmul_generic.cpp) and on f16 and bf16
// (lib/te_ops/dense_compute.cpp, exact), and of MatMulInteger and QLinearMatMul
// (lib/te_ops/qlinear_matmul_op.cpp), against the reference kernels: 8-bit inputs over their whole range, 1-D operands, 2-D, batched and
// broadcast batches, zero points absent, per tensor and per row / column, f32 and f16 scales.
// Integer outputs must be identical.
#include <catch2/catch.hpp>

#include <random>

#include "common/backend_check.h"
#include "collage/ops/nn.h"
#include "common/graph_test_util.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Values over the whole range of the 8-bit type `t`.
Tensor full_range(DType t, const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor v(DType::i64, shape);
  const int64_t lo = t == DType::u8 ? 0 : -128;
  for (int64_t k = 0; k < v.numel(); ++k)
    v.data<int64_t>()[k] = lo + static_cast<int64_t>(rng() % 256);
  return v.cast(t);
}

Tensor scales(DType t, const Shape& shape, uint32_t seed, float lo, float hi) {
  return random_f32(shape, seed, lo, hi).cast(t);
}

struct Case {
  Shape a, b;
  bool per_column = false;  // b's scale and zero point (and a's zero point) per column (row)
};

const std::vector<Case> kCases = {{{3, 5}, {5, 4}},
                                  {{2, 3, 7}, {2, 7, 4}},
                                  {{2, 3, 7}, {7, 5}, true},
                                  {{4, 16}, {16, 9}, true},
                                  {{1, 6}, {2, 6, 3}}};

}  // namespace

TEST_CASE("te_ops: MatMulInteger matches the reference", "[te_ops]") {
  Context ctx;
  for (DType ta : {DType::u8, DType::i8})
    for (DType tb : {DType::u8, DType::i8})
      for (const Case& c : kCases)
        for (int zp : {0, 1}) {
          INFO(dtype_name(ta) << " x " << dtype_name(tb) << " " << shape_to_string(c.a) << " @ "
                              << shape_to_string(c.b) << " zero points " << zp);
          const int64_t m = c.a[c.a.size() - 2], n = c.b.back();
          std::vector<TensorType> types = {{ta, c.a}, {tb, c.b}};
          std::vector<Tensor> inputs = {full_range(ta, c.a, 1), full_range(tb, c.b, 2)};
          if (zp) {
            const Shape az = c.per_column ? Shape{m} : Shape{}, bz = c.per_column ? Shape{n} : Shape{};
            types.push_back({ta, az});
            types.push_back({tb, bz});
            inputs.push_back(full_range(ta, az, 3));
            inputs.push_back(full_range(tb, bz, 4));
          }
          check_group(native_backend(), single_op_graph(ctx, "MatMulInteger", types),
                      {.inputs = inputs});
        }
}

TEST_CASE("te_ops: QLinearMatMul requantises as the reference", "[te_ops]") {
  Context ctx;
  for (DType st : {DType::f32, DType::f16})
    for (DType t : {DType::u8, DType::i8})
      for (const Case& c : kCases) {
        INFO(dtype_name(t) << " scales " << dtype_name(st) << " " << shape_to_string(c.a) << " @ "
                           << shape_to_string(c.b));
        const Shape col = c.per_column ? Shape{c.b.back()} : Shape{};
        const std::vector<TensorType> types = {{t, c.a}, {st, {}}, {t, {}},   {t, c.b},
                                               {st, col}, {t, col}, {st, {}}, {t, {}}};
        // y_scale near the sums' spread, so that most outputs fall inside the range.
        const std::vector<Tensor> inputs = {
            full_range(t, c.a, 5),           scales(st, {}, 6, 0.01f, 0.05f),
            full_range(t, {}, 7),            full_range(t, c.b, 8),
            scales(st, col, 9, 0.01f, 0.05f), full_range(t, col, 10),
            scales(st, {}, 11, 0.2f, 0.6f),  full_range(t, {}, 12)};
        check_group(native_backend(), single_op_graph(ctx, "QLinearMatMul", types),
                    {.inputs = inputs});
      }
}

TEST_CASE("te_ops: MatMul on f64", "[te_ops]") {
  Context ctx;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5}, {5, 4}}, {{2, 3, 7}, {2, 7, 4}}, {{2, 1, 3, 6}, {4, 6, 5}}, {{6}, {2, 6, 3}},
      {{2, 3, 6}, {6}}, {{9}, {9}}};
  for (const auto& [a, b] : shapes) {
    INFO("f64 " << shape_to_string(a) << " @ " << shape_to_string(b));
    // The reference runs MatMul in f32 for every float type; this sums in f64.
    check_group(native_backend(), single_op_graph(ctx, "MatMul", {{DType::f64, a}, {DType::f64, b}}),
                GroupCheck{.tolerance = 1e-5, .elementwise = false});
  }
}

// f16 and bf16 MatMul on the dense compute: widened to f32, summed in k order, rounded once. The
// products of 16-bit floats are exact in f32, so the sums are the reference's bit for bit (its
// GEMM sums k in order within blocks of 256): the check is exact. Constant B (packed once, as
// f32) and B as an input; 1-D operands, batches broadcast, columns that fill no whole panel.
TEST_CASE("te_ops: MatMul on f16 and bf16 equals the reference exactly", "[te_ops]") {
  Context ctx;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 5}, {5, 4}},       {{2, 3, 7}, {2, 7, 4}}, {{2, 1, 3, 6}, {4, 6, 5}},
      {{6}, {2, 6, 3}},       {{2, 3, 6}, {6}},       {{9}, {9}},
      {{37, 96}, {96, 70}},   {{2, 4, 6, 8}, {2, 4, 8, 6}}, {{1, 200}, {200, 33}}};
  for (DType t : {DType::f16, DType::bf16})
    for (const auto& [a, b] : shapes)
      for (bool b_const : {false, true}) {
        INFO(dtype_name(t) << " " << shape_to_string(a) << " @ " << shape_to_string(b)
                           << (b_const ? " (B constant)" : ""));
        const std::vector<Tensor> consts = {Tensor(), random_f32(b, 9).cast(t)};
        check_group(native_backend(),
                    single_op_graph(ctx, "MatMul", {{t, a}, {t, b}}, nullptr,
                                    b_const ? consts : std::vector<Tensor>{}),
                    {.tolerance = 0});
      }
}

// Gemm on 16-bit floats: the same dense compute, alpha folded into B's panels and beta * C the
// sums' initial value, so the f32 sums round differently from the reference's (which adds C after
// the products): within one step of the type.
TEST_CASE("te_ops: Gemm on f16 and bf16", "[te_ops]") {
  Context ctx;
  for (DType t : {DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    auto attrs = make_attrs<GemmAttrs>([](auto& a) {
      a.alpha = 0.5f;
      a.transB = 1;
    });
    check_group(native_backend(),
                single_op_graph(ctx, "Gemm", {{t, {7, 40}}, {t, {21, 40}}, {t, {21}}}, attrs),
                {.tolerance = t == DType::f16 ? 1e-3 : 8e-3});
  }
}

// A 16-bit MatMul's epilogue reads the product rounded to the type, as the graph does: MatMul,
// Mul, Add and Relu fused in one kernel give the reference's values exactly.
TEST_CASE("te_ops: a 16-bit MatMul's fused epilogue rounds where the graph rounds", "[te_ops]") {
  for (DType t : {DType::f16, DType::bf16}) {
    INFO(dtype_name(t));
    Context ctx;
    GraphBuilder gb(ctx);
    ValueId a = gb.add_input("a", {t, {2, 5, 24}});
    ValueId w = gb.add_constant("w", random_f32({24, 19}, 4).cast(t));
    ValueId v = add(gb, "MatMul", {a, w});
    v = add(gb, "Mul", {v, gb.add_constant("s", random_f32({19}, 5).cast(t))});
    v = add(gb, "Add", {v, gb.add_constant("c", random_f32({5, 1}, 6).cast(t))});
    v = add(gb, "Relu", {v});
    gb.add_output(v);
    const GroupResult r =
        check_group(native_backend(), finish(gb), {.tolerance = 0, .claim = true});
    CHECK(r.origin == "native.fuse");
  }
}
