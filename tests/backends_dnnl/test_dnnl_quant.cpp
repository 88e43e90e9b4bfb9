// dnnl conformance of the 8-bit integer contractions: ConvInteger and QLinearConv (u8 and i8
// inputs, i8 weights and u8 weights with a zero point of 128, zero points at 0, 128 and 255 or
// -128, 0 and 127, per-channel scales and weight zero points, bias, groups, strides, dilations,
// padding, 1-D to 3-D), MatMulInteger and QLinearMatMul (batched, per-column scales), the ONNX
// node tests' shapes, and the weights oneDNN cannot take, which dnnl must refuse naming the node.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "collage/ops/nn.h"
#include "common/backend_check.h"
#include "core/str_cat.h"
#include "backends/common/module_kernel.h"
#include "dnnl_module.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

namespace {

// Uniform integers in [lo, hi] of type `t` (u8, i8 or i32), from `seed`.
Tensor int_tensor(DType t, Shape shape, int64_t lo, int64_t hi, uint64_t seed) {
  Tensor out(t, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(lo, hi);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const int64_t v = d(rng);
    if (t == DType::u8) out.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    if (t == DType::i8) out.data<int8_t>()[i] = static_cast<int8_t>(v);
    if (t == DType::i32) out.data<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return out;
}

Tensor int_values(DType t, Shape shape, const std::vector<int64_t>& values) {
  Tensor out(t, std::move(shape));
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (t == DType::u8) out.data<uint8_t>()[i] = static_cast<uint8_t>(values[i]);
    if (t == DType::i8) out.data<int8_t>()[i] = static_cast<int8_t>(values[i]);
  }
  return out;
}

Tensor f32_values(Shape shape, std::vector<float> values) {
  return Tensor::from_f32(std::move(shape), values);
}

int64_t lowest(DType t) {
  return t == DType::u8 ? 0 : -128;
}

// How the weights, zero points and scales of one case are made.
struct Quant {
  DType x = DType::u8, w = DType::i8, y = DType::u8;
  int64_t xz = 0, yz = 0;
  // Weight zero point: one value, or (per_channel) that value plus m % 5 - 2 for channel m.
  int64_t wz = 0;
  bool per_channel = false;
  bool bias = false;
  std::string name() const {
    return str_cat("x ", dtype_name(x), " zp ", xz, ", w ", dtype_name(w), " zp ", wz,
                   per_channel ? " per channel" : "", ", y ", dtype_name(y), " zp ", yz,
                   bias ? ", bias" : "");
  }
};

std::vector<Quant> quant_cases() {
  return {
      {DType::u8, DType::i8, DType::u8, 0, 0, 0, false, false},
      {DType::u8, DType::i8, DType::u8, 128, 128, 0, true, true},
      {DType::u8, DType::u8, DType::u8, 255, 255, 128, false, true},
      {DType::u8, DType::u8, DType::i8, 128, -128, 128, true, false},
      {DType::i8, DType::i8, DType::i8, -128, 127, 0, false, true},
      {DType::i8, DType::i8, DType::u8, 5, 0, 2, true, true},
  };
}

// Weights of `shape` whose channel (axis `axis`) is m: values less their zero point in
// [-120, 119], the zero point per channel or one.
std::pair<Tensor, Tensor> weights(const Quant& q, const Shape& shape, size_t axis, uint64_t seed) {
  const int64_t channels = shape[axis];
  Tensor zp(q.w, q.per_channel ? Shape{channels} : Shape{});
  std::vector<int64_t> z(static_cast<size_t>(channels));
  for (int64_t m = 0; m < channels; ++m) z[m] = q.wz + (q.per_channel ? m % 5 - 2 : 0);
  for (int64_t m = 0; m < zp.numel(); ++m) {
    if (q.w == DType::u8) zp.data<uint8_t>()[m] = static_cast<uint8_t>(z[m]);
    else zp.data<int8_t>()[m] = static_cast<int8_t>(z[m]);
  }
  Tensor w(q.w, shape);
  Tensor d = int_tensor(DType::i32, shape, -120, 119, seed);
  int64_t inner = 1;
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t v = d.data<int32_t>()[i] + z[(i / inner) % channels];
    if (q.w == DType::u8) w.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    else w.data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  return {std::move(w), std::move(zp)};
}

// Scales that spread the outputs over the 8-bit range (and clamp some) for `k` products.
std::vector<Tensor> scales(const Quant& q, int64_t channels, int64_t k) {
  const float xs = 0.02f, ws = 0.004f;
  std::vector<float> w(q.per_channel ? channels : 1);
  for (size_t m = 0; m < w.size(); ++m) w[m] = ws * (1.f + 0.1f * static_cast<float>(m % 7));
  const float ys = xs * ws * std::sqrt(static_cast<float>(k)) * 70.f * 70.f / 50.f;
  return {f32_values({}, {xs}), f32_values({static_cast<int64_t>(w.size())}, w),
          f32_values({}, {ys})};
}

Tensor scalar(DType t, int64_t v) {
  return int_values(t, {}, {v});
}

// A single-node graph whose first input is the data and every other input a constant.
Graph quant_graph(const Context& ctx, const std::string& op, DType x, const Shape& xs,
                  std::vector<Tensor> constants, std::shared_ptr<const OpAttrs> attrs = nullptr) {
  std::vector<TensorType> types = {{x, xs}};
  constants.insert(constants.begin(), Tensor());
  for (size_t i = 1; i < constants.size(); ++i)
    types.push_back({constants[i].dtype(), constants[i].shape()});
  return single_op_graph(ctx, op, types, std::move(attrs), constants);
}

// Checks g on dnnl against the reference (integers: identical). With `fast`, the primitive
// must be one of oneDNN's optimised implementations, not its reference loops.
GroupResult check_quant(const Graph& g, const Tensor& x, const std::string& origin,
                        bool fast = false) {
  if (!rt_dnnl::int8_sums_exact()) {
    // Without VNNI oneDNN's 8-bit sums saturate: the backend refuses the node, saying why.
    const GroupAttempt refused = try_group(dnnl_backend(), g);
    CHECK_FALSE(refused.offered);
    CHECK_THAT(std::string(refused.build.message()), Catch::Contains("has no VNNI"));
    return {};
  }
  GroupCheck check{.claim = true, .threads = {0, 1, 3}, .inputs = {x}};
  check.inspect = [fast](const GroupResult& r, const Graph& group) {
    KernelDesc desc(r.record, group);
    const rt_dnnl::ProbeResult probe = rt_dnnl::probe_kernel(desc.desc());
    INFO(probe.error);
    REQUIRE(probe.error.empty());
    CHECK(probe.packed.empty());
    for (const std::string& impl : probe.implementations) {
      INFO(impl);
      if (fast) CHECK(impl.find("ref") == std::string::npos);
    }
  };
  GroupResult r = check_group(dnnl_backend(), g, check);
  CHECK(r.origin == origin);
  return r;
}

struct ConvCase {
  std::string name;
  Shape x, w;
  std::function<void(ConvAttrs&)> attrs = [](ConvAttrs&) {};
};

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 pad 1, 3 -> 8, 7x9", {1, 3, 7, 9}, {8, 3, 3, 3}, [](ConvAttrs& a) {
         a.pads = {1, 1, 1, 1};
       }},
      {"1x1, 17 -> 5 (odd channels), batch 2", {2, 17, 5, 6}, {5, 17, 1, 1}},
      {"5x5 stride 2, uneven pads", {1, 4, 9, 8}, {6, 4, 5, 5}, [](ConvAttrs& a) {
         a.strides = {2, 2};
         a.pads = {2, 1, 0, 2};
       }},
      {"3x3 dilation 2", {1, 3, 9, 11}, {4, 3, 3, 3}, [](ConvAttrs& a) {
         a.dilations = {2, 2};
         a.pads = {2, 2, 2, 2};
       }},
      {"groups 3, 9 -> 6", {1, 9, 7, 7}, {6, 3, 3, 3}, [](ConvAttrs& a) {
         a.group = 3;
         a.pads = {1, 1, 1, 1};
       }},
      {"depthwise 3x3 stride 2", {1, 8, 9, 9}, {8, 1, 3, 3}, [](ConvAttrs& a) {
         a.group = 8;
         a.strides = {2, 2};
         a.pads = {1, 1, 1, 1};
       }},
      {"SAME_UPPER", {1, 3, 7, 8}, {5, 3, 4, 4}, [](ConvAttrs& a) { a.auto_pad = "SAME_UPPER"; }},
      {"ResNet 3x3 64 -> 64, 14x14", {1, 64, 14, 14}, {64, 64, 3, 3}, [](ConvAttrs& a) {
         a.pads = {1, 1, 1, 1};
       }},
      {"1-D stride 2", {2, 3, 11}, {5, 3, 3}, [](ConvAttrs& a) {
         a.strides = {2};
         a.pads = {1, 1};
       }},
      {"3-D", {1, 3, 4, 5, 6}, {4, 3, 3, 3, 3}, [](ConvAttrs& a) { a.pads = {1, 1, 1, 1, 1, 1}; }},
  };
}

int64_t taps(const Shape& w) {
  int64_t k = 1;
  for (size_t i = 1; i < w.size(); ++i) k *= w[i];
  return k;
}

}  // namespace

TEST_CASE("dnnl quant: QLinearConv, every geometry and zero point", "[dnnl][quant]") {
  Context ctx;
  uint64_t seed = 11;
  for (const ConvCase& c : conv_cases())
    for (const Quant& q : quant_cases()) {
      DYNAMIC_SECTION(c.name << ", " << q.name()) {
        auto [w, wz] = weights(q, c.w, 0, seed++);
        std::vector<Tensor> s = scales(q, c.w[0], taps(c.w));
        std::vector<Tensor> consts = {s[0], scalar(q.x, q.xz), w, s[1], wz, s[2], scalar(q.y, q.yz)};
        if (q.bias) consts.push_back(int_tensor(DType::i32, {c.w[0]}, -3000, 3000, seed++));
        // The weights' zero point is per tensor or per channel; per tensor it is a scalar.
        Graph g = quant_graph(ctx, "QLinearConv", q.x, c.x, consts, make_attrs<ConvAttrs>(c.attrs));
        check_quant(g, int_tensor(q.x, c.x, lowest(q.x), lowest(q.x) + 255, seed++), "dnnl.qconv",
                    c.name.starts_with("ResNet"));
      }
    }
}

TEST_CASE("dnnl quant: ConvInteger, i32 sums", "[dnnl][quant]") {
  Context ctx;
  uint64_t seed = 101;
  for (const ConvCase& c : conv_cases())
    for (const Quant& q : quant_cases()) {
      DYNAMIC_SECTION(c.name << ", " << q.name()) {
        auto [w, wz] = weights(q, c.w, 0, seed++);
        Graph g = quant_graph(ctx, "ConvInteger", q.x, c.x, {w, scalar(q.x, q.xz), wz},
                              make_attrs<ConvAttrs>(c.attrs));
        check_quant(g, int_tensor(q.x, c.x, lowest(q.x), lowest(q.x) + 255, seed++), "dnnl.qconv");
      }
    }
}

TEST_CASE("dnnl quant: QLinearMatMul and MatMulInteger, batched, per-column", "[dnnl][quant]") {
  Context ctx;
  uint64_t seed = 201;
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{7, 9}, {9, 5}}, {{2, 3, 7, 33}, {33, 17}}, {{1, 8, 64}, {64, 96}}};
  for (const auto& [a, b] : shapes)
    for (const Quant& q : quant_cases()) {
      DYNAMIC_SECTION(shape_to_string(a) << " x " << shape_to_string(b) << ", " << q.name()) {
        auto [w, wz] = weights(q, b, 1, seed++);
        const Tensor x = int_tensor(q.x, a, lowest(q.x), lowest(q.x) + 255, seed++);
        std::vector<Tensor> s = scales(q, b[1], b[0]);
        check_quant(quant_graph(ctx, "QLinearMatMul", q.x, a,
                                {s[0], scalar(q.x, q.xz), w, s[1], wz, s[2], scalar(q.y, q.yz)}),
                    x, "dnnl.qmatmul", a.back() == 64);
        check_quant(quant_graph(ctx, "MatMulInteger", q.x, a, {w, scalar(q.x, q.xz), wz}), x,
                    "dnnl.qmatmul");
      }
    }
}

TEST_CASE("dnnl quant: the ONNX node tests' ConvInteger and QLinearMatMul", "[dnnl][quant]") {
  Context ctx;
  // test_convinteger_with_padding: x 1..9 (3x3), zero point 1, 2x2 weights of 1, pads 1.
  std::vector<int64_t> xv = {2, 3, 4, 5, 6, 7, 8, 9, 10};
  Graph conv = quant_graph(ctx, "ConvInteger", DType::u8, {1, 1, 3, 3},
                           {int_values(DType::u8, {1, 1, 2, 2}, {1, 1, 1, 1}), scalar(DType::u8, 1)},
                           make_attrs<ConvAttrs>([](ConvAttrs& a) { a.pads = {1, 1, 1, 1}; }));
  check_quant(conv, int_values(DType::u8, {1, 1, 3, 3}, xv), "dnnl.qconv");
  // test_qlinearmatmul_2D_uint8_float32's values.
  Graph mm = quant_graph(
      ctx, "QLinearMatMul", DType::u8, {2, 4},
      {f32_values({}, {0.0066f}), scalar(DType::u8, 113),
       int_values(DType::u8, {4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247}),
       f32_values({}, {0.00705f}), scalar(DType::u8, 114), f32_values({}, {0.0107f}),
       scalar(DType::u8, 118)});
  check_quant(mm, int_values(DType::u8, {2, 4}, {208, 236, 0, 238, 3, 214, 255, 29}),
              "dnnl.qmatmul");
}

TEST_CASE("dnnl quant: weights that do not fit i8 less their zero point are refused",
          "[dnnl][quant]") {
  Context ctx;
  // test_qlinearconv's weight: u8 0 with zero point 255 (0 - 255 is outside i8).
  Graph g = quant_graph(ctx, "QLinearConv", DType::u8, {1, 1, 7, 7},
                        {f32_values({}, {0.0037f}), scalar(DType::u8, 132),
                         int_values(DType::u8, {1, 1, 1, 1}, {0}), f32_values({}, {0.0017f}),
                         scalar(DType::u8, 255), f32_values({}, {0.0016f}),
                         scalar(DType::u8, 123)});
  const GroupAttempt r = try_group(dnnl_backend(), g);
  CHECK_FALSE(r.offered);
  if (rt_dnnl::int8_sums_exact())  // else refused for the CPU first (check_quant)
    CHECK(r.build.message() ==
          "dnnl: QLinearConv 'op': weight 0 less its zero point is -255, outside i8 (oneDNN's "
          "int8 weights)");
  // A matmul whose weights the graph computes is the reference's.
  Graph mm = single_op_graph(ctx, "MatMulInteger", {{DType::u8, {3, 4}}, {DType::i8, {4, 2}}});
  const GroupAttempt m = try_group(dnnl_backend(), mm);
  CHECK_FALSE(m.offered);
  if (rt_dnnl::int8_sums_exact())
    CHECK(m.build.message() == "dnnl: MatMulInteger 'op': weights are not a constant");
}
