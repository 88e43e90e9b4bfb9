// Conformance of the QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear TE computes
// against the reference kernels: u8/i8/u16/i16, scales per tensor and per axis, zero points
// absent or given, ties (x / scale exactly halfway) and values that saturate; integers exact.
#include <catch2/catch.hpp>

#include <cstring>

#include "collage/ops/quantize.h"
#include "common/backend_check.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

namespace {

// A tensor of `t` holding `values` (converted as the reference's stores do).
Tensor filled(DType t, Shape shape, const std::vector<double>& values) {
  Tensor out(t, std::move(shape));
  REQUIRE(static_cast<size_t>(out.numel()) == values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    switch (t) {
      case DType::u8: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DType::i8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DType::u16: out.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case DType::i16: out.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      default: out.data<float>()[i] = static_cast<float>(v); break;
    }
  }
  return out;
}

// Zero points for `t`: near the middle of its range for the signed types, a quarter of it for
// the unsigned ones; `n` of them, different from each other.
std::vector<double> zero_points(DType t, int64_t n) {
  const double base = t == DType::u8 ? 64 : t == DType::u16 ? 16000 : t == DType::i8 ? -5 : 300;
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(base + 3 * static_cast<double>(i));
  return v;
}

constexpr DType kTypes[] = {DType::u8, DType::i8, DType::u16, DType::i16};

}  // namespace

TEST_CASE("te_ops: QuantizeLinear matches the reference", "[te_ops][quantize]") {
  Context ctx;
  const Shape x{2, 3, 4, 5};
  for (DType t : kTypes)
    for (bool per_axis : {false, true})
      for (bool zp : {false, true}) {
        INFO(dtype_name(t) << (per_axis ? " per axis" : " per tensor") << (zp ? " with" : " without")
                           << " zero point");
        const Shape s = per_axis ? Shape{3} : Shape{};
        const int64_t n = per_axis ? 3 : 1;
        // Scales small enough that [-3, 3) saturates the 8-bit types.
        std::vector<double> scales;
        for (int64_t i = 0; i < n; ++i) scales.push_back(0.0125 * static_cast<double>(i + 1));
        std::vector<TensorType> inputs = {{DType::f32, x}, {DType::f32, s}};
        std::vector<Tensor> constants = {Tensor(), filled(DType::f32, s, scales)};
        if (zp) {
          inputs.push_back({t, s});
          constants.push_back(filled(t, s, zero_points(t, n)));
        }
        auto attrs = make_attrs<QuantizeAttrs>([&](auto& a) {
          a.axis = 1;
          if (!zp) a.output_dtype = std::string(dtype_name(t));
        });
        const Graph g = single_op_graph(ctx, "QuantizeLinear", inputs, attrs, constants);
        REQUIRE(g.value(g.outputs()[0]).type.dtype == t);
        check_group(native_backend(), g, {.lo = -3.f, .hi = 3.f, .claim = true});
      }
}

TEST_CASE("te_ops: QuantizeLinear rounds halves to even as the reference", "[te_ops][quantize]") {
  Context ctx;
  // x / 0.5 = k / 2 for k = -20..19: every other value is a tie.
  std::vector<double> xs;
  for (int k = -20; k < 20; ++k) xs.push_back(0.25 * k);
  const Graph g = single_op_graph(
      ctx, "QuantizeLinear", {{DType::f32, {40}}, {DType::f32, {}}, {DType::i8, {}}},
      make_attrs<QuantizeAttrs>([](auto&) {}),
      {Tensor(), filled(DType::f32, {}, {0.5}), filled(DType::i8, {}, {1})});
  const GroupResult r = check_group(native_backend(), g,
                                    {.claim = true, .inputs = {filled(DType::f32, {40}, xs)}});
  CHECK(r.error == 0);
}

TEST_CASE("te_ops: DequantizeLinear matches the reference", "[te_ops][quantize]") {
  Context ctx;
  const Shape x{2, 4, 3, 5};
  for (DType t : kTypes)
    for (bool per_axis : {false, true})
      for (bool zp : {false, true}) {
        INFO(dtype_name(t) << (per_axis ? " per axis" : " per tensor") << (zp ? " with" : " without")
                           << " zero point");
        const Shape s = per_axis ? Shape{3} : Shape{};
        const int64_t n = per_axis ? 3 : 1;
        std::vector<double> scales;
        for (int64_t i = 0; i < n; ++i) scales.push_back(0.03 + 0.01 * static_cast<double>(i));
        std::vector<TensorType> inputs = {{t, x}, {DType::f32, s}};
        std::vector<Tensor> constants = {Tensor(), filled(DType::f32, s, scales)};
        if (zp) {
          inputs.push_back({t, s});
          constants.push_back(filled(t, s, zero_points(t, n)));
        }
        // Inputs across the whole range of t, so that unsigned values above the signed range
        // show a sign-extending conversion.
        const double lo = t == DType::u8 || t == DType::u16 ? 0 : t == DType::i8 ? -128 : -32768;
        const double hi = t == DType::u8 ? 255 : t == DType::i8 ? 127 : t == DType::u16 ? 65535 : 32767;
        std::vector<double> xs;
        for (int64_t i = 0; i < shape_numel(x); ++i)
          xs.push_back(lo + std::fmod(static_cast<double>(i) * 97.0, hi - lo + 1));
        const Graph g = single_op_graph(ctx, "DequantizeLinear", inputs,
                                        make_attrs<QuantizeAttrs>([](auto& a) { a.axis = 2; }),
                                        constants);
        check_group(native_backend(), g, {.claim = true, .inputs = {filled(t, x, xs)}});
      }
}

TEST_CASE("te_ops: DynamicQuantizeLinear matches the reference", "[te_ops][quantize]") {
  Context ctx;
  for (auto [lo, hi] : {std::pair{-2.f, 3.f}, std::pair{0.5f, 4.f}, std::pair{-4.f, -1.f}}) {
    INFO("x in [" << lo << ", " << hi << ")");
    const Graph g =
        single_op_graph(ctx, "DynamicQuantizeLinear", {{DType::f32, {3, 7, 11}}}, nullptr, {}, 3);
    check_group(native_backend(), g, {.lo = lo, .hi = hi, .claim = true});
  }
}

TEST_CASE("te_ops: blocked QuantizeLinear and DequantizeLinear match the reference",
          "[te_ops][quantize]") {
  // Blocks of 4 along axis 1 of length 10: the last block holds 2.
  Context ctx;
  const Shape x{3, 10, 5}, s{3, 3, 5};
  std::vector<double> scales, zps;
  for (int64_t i = 0; i < shape_numel(s); ++i) {
    scales.push_back(0.01 + 0.002 * static_cast<double>(i));
    zps.push_back(static_cast<double>(i % 7) - 3);
  }
  const auto attrs = make_attrs<QuantizeAttrs>([](auto& a) { a.block_size = 4; });
  const Graph q = single_op_graph(ctx, "QuantizeLinear",
                                  {{DType::f32, x}, {DType::f32, s}, {DType::i8, s}}, attrs,
                                  {Tensor(), filled(DType::f32, s, scales), filled(DType::i8, s, zps)});
  check_group(native_backend(), q, {.lo = -2.f, .hi = 2.f, .claim = true});
  std::vector<double> xs;
  for (int64_t i = 0; i < shape_numel(x); ++i) xs.push_back(static_cast<double>((i * 37) % 256) - 128);
  const Graph dq = single_op_graph(ctx, "DequantizeLinear",
                                   {{DType::i8, x}, {DType::f32, s}, {DType::i8, s}}, attrs,
                                   {Tensor(), filled(DType::f32, s, scales), filled(DType::i8, s, zps)});
  check_group(native_backend(), dq, {.claim = true, .inputs = {filled(DType::i8, x, xs)}});
}

TEST_CASE("te_ops: a scale of shape [1] with a scalar zero point is per tensor",
          "[te_ops][quantize]") {
  // ONNX Runtime's quantizer writes bias DequantizeLinear nodes so.
  Context ctx;
  const Graph g = single_op_graph(
      ctx, "DequantizeLinear", {{DType::u8, {4, 6}}, {DType::f32, {1}}, {DType::u8, {}}},
      make_attrs<QuantizeAttrs>([](auto&) {}),
      {Tensor(), filled(DType::f32, {1}, {0.25}), filled(DType::u8, {}, {3})});
  check_group(native_backend(), g, {.claim = true});
}

TEST_CASE("te_ops: Q/DQ at a ResNet activation's size match the reference", "[te_ops][quantize]") {
  // 1x64x56x56: parallel, vectorized loops with tails across tasks (the small cases above run
  // as one task), saturation on both sides and every rounding tie x / scale = k + 1/2 in range.
  Context ctx;
  const Shape x{1, 64, 56, 56}, per_channel{64};
  std::vector<double> scales;
  for (int64_t c = 0; c < 64; ++c) scales.push_back(0.01 + 0.0005 * static_cast<double>(c));
  for (DType t : {DType::u8, DType::i8}) {
    INFO(dtype_name(t));
    const double zp = t == DType::u8 ? 128 : -3;
    const Graph q_tensor = single_op_graph(
        ctx, "QuantizeLinear", {{DType::f32, x}, {DType::f32, {}}, {t, {}}},
        make_attrs<QuantizeAttrs>([](auto&) {}),
        {Tensor(), filled(DType::f32, {}, {0.02}), filled(t, {}, {zp})});
    const GroupResult r =
        check_group(native_backend(), q_tensor, {.lo = -4.f, .hi = 4.f, .claim = true});
    CHECK(r.error == 0);
    std::vector<double> ties;
    for (int64_t i = 0; i < shape_numel(x); ++i)
      ties.push_back(0.02 * (static_cast<double>(i % 601) - 300.5));
    CHECK(check_group(native_backend(), q_tensor,
                      {.claim = true, .inputs = {filled(DType::f32, x, ties)}})
              .error == 0);
    const Graph q_channel = single_op_graph(
        ctx, "QuantizeLinear", {{DType::f32, x}, {DType::f32, per_channel}, {t, per_channel}},
        make_attrs<QuantizeAttrs>([](auto& a) { a.axis = 1; }),
        {Tensor(), filled(DType::f32, per_channel, scales), filled(t, per_channel, zero_points(t, 64))});
    CHECK(check_group(native_backend(), q_channel, {.lo = -3.f, .hi = 3.f, .claim = true}).error == 0);
    std::vector<double> xs;
    for (int64_t i = 0; i < shape_numel(x); ++i)
      xs.push_back(static_cast<double>((i * 131) % 256) + (t == DType::i8 ? -128 : 0));
    const Graph dq = single_op_graph(
        ctx, "DequantizeLinear", {{t, x}, {DType::f32, per_channel}, {t, per_channel}},
        make_attrs<QuantizeAttrs>([](auto& a) { a.axis = 1; }),
        {Tensor(), filled(DType::f32, per_channel, scales), filled(t, per_channel, zero_points(t, 64))});
    check_group(native_backend(), dq, {.claim = true, .inputs = {filled(t, x, xs)}});
  }
  const Graph dyn = single_op_graph(ctx, "DynamicQuantizeLinear", {{DType::f32, x}}, nullptr, {}, 3);
  CHECK(check_group(native_backend(), dyn, {.lo = -3.f, .hi = 5.f, .claim = true}).error == 0);
}
