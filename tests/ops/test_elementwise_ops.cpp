// Reference kernels and shape inference of the elementwise and reduction operators, checked on
// single-node graphs against values computed independently (naive loops or numpy literals).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "collage/graph.h"
#include "collage/ops/elementwise.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "ops/op_util.h"

namespace collage {
namespace {

using testing::describe_mismatch;
using testing::max_relative_error;
using testing::random_f32;

const Context& ctx() {
  static const Context c;
  return c;
}

template <typename T>
Tensor make(DType dtype, Shape shape, std::vector<T> values) {
  Tensor t(dtype, std::move(shape));
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  REQUIRE(sizeof(T) == dtype_size(dtype));
  if (!values.empty()) std::memcpy(t.raw(), values.data(), t.bytes());
  return t;
}
Tensor f32(Shape s, std::vector<float> v) {
  return make(DType::f32, std::move(s), std::move(v));
}
Tensor i32(Shape s, std::vector<int32_t> v) {
  return make(DType::i32, std::move(s), std::move(v));
}
Tensor i64(Shape s, std::vector<int64_t> v) {
  return make(DType::i64, std::move(s), std::move(v));
}
Tensor i8(Shape s, std::vector<int8_t> v) {
  return make(DType::i8, std::move(s), std::move(v));
}
Tensor boolean(Shape s, std::vector<uint8_t> v) {
  return make(DType::boolean, std::move(s), std::move(v));
}

// Builds the graph `op(inputs...)` with every input a graph input, so shape inference and the
// executor both run, and returns the graph outputs.
absl::StatusOr<std::vector<Tensor>> run_op(std::string_view op, const std::vector<Tensor>& inputs,
                                           std::shared_ptr<const OpAttrs> attrs = nullptr,
                                           int num_outputs = 1) {
  GraphBuilder b(ctx());
  std::vector<ValueId> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(b.add_input("x" + std::to_string(i), inputs[i].type()));
  auto outs = b.add_node(op, ins, std::move(attrs), "n", num_outputs);
  if (!outs.ok()) return outs.status();
  for (ValueId v : *outs) b.add_output(v);
  auto g = b.finish();
  if (!g.ok()) return g.status();
  return run_reference(*g, inputs);
}

Tensor run1(std::string_view op, const std::vector<Tensor>& inputs,
            std::shared_ptr<const OpAttrs> attrs = nullptr) {
  auto r = run_op(op, inputs, std::move(attrs));
  INFO(op << ": " << r.status().ToString());
  REQUIRE(r.ok());
  return r->front();
}

// Shape inference of `op` on inputs of the given types; returns the error.
absl::Status infer_error(std::string_view op, const std::vector<TensorType>& types,
                         std::shared_ptr<const OpAttrs> attrs = nullptr, int num_outputs = 1) {
  GraphBuilder b(ctx());
  std::vector<ValueId> ins;
  for (const TensorType& t : types) ins.push_back(b.add_input("x", t));
  auto r = b.add_node(op, ins, std::move(attrs), "n3", num_outputs);
  return r.ok() ? absl::OkStatus() : r.status();
}

void check_close(const Tensor& actual, const Tensor& expected, double tol = 1e-6) {
  INFO(describe_mismatch(actual, expected));
  CHECK(max_relative_error(actual, expected) <= tol);
}

void check_error(const absl::Status& s, std::string_view part) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find(part) != std::string::npos);
}

// Flat index into `in` read by output element `flat` of `out` under numpy broadcasting,
// computed from coordinates (independent of the kernels' stride plans).
int64_t source_index(const Shape& in, const Shape& out, int64_t flat) {
  int64_t index = 0, stride = 1;
  for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) {
    const int64_t coord = flat % out[d];
    flat /= out[d];
    const int din = d - static_cast<int>(out.size() - in.size());
    if (din >= 0) {
      if (in[din] != 1) index += coord * stride;
      stride *= in[din];
    }
  }
  return index;
}

TEST_CASE("binary arithmetic broadcasts like numpy", "[elementwise]") {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}},       {{3}, {2, 3}},
      {{2, 1}, {1, 3}}, {{}, {2, 3}},        {{2, 3}, {}},
      {{}, {}},         {{4, 1, 5}, {3, 1}}, {{2, 3, 1, 7}, {3, 5, 1}},
      {{1, 1}, {5}},    {{0, 3}, {3}},       {{1, 6, 1}, {2, 1, 1, 4}},
      {{7, 1}, {7, 9}}, {{1, 9}, {7, 1}},    {{3, 2, 2}, {3, 1, 2}}};
  for (const auto& [sa, sb] : pairs) {
    Tensor a = random_f32(sa, 1, -2.f, 2.f), b = random_f32(sb, 2, 0.5f, 2.f);
    for (std::string op : {"Add", "Sub", "Mul", "Div"}) {
      Tensor out = run1(op, {a, b});
      Shape so = *ops::broadcast_shapes(sa, sb);
      REQUIRE(out.shape() == so);
      Tensor want(DType::f32, so);
      for (int64_t i = 0; i < want.numel(); ++i) {
        const float x = a.data<float>()[source_index(sa, so, i)];
        const float y = b.data<float>()[source_index(sb, so, i)];
        want.data<float>()[i] = op == "Add"   ? x + y
                                : op == "Sub" ? x - y
                                : op == "Mul" ? x * y
                                              : x / y;
      }
      INFO(op << " " << shape_to_string(sa) << " with " << shape_to_string(sb));
      check_close(out, want, 0);
    }
  }
}

TEST_CASE("integer arithmetic truncates and wraps", "[elementwise]") {
  check_close(run1("Div", {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})}),
              i32({4}, {3, -3, -3, 3}), 0);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  check_close(run1("Div", {i64({2}, {lo, 9}), i64({}, {-1})}), i64({2}, {lo, -9}), 0);
  const int32_t hi = std::numeric_limits<int32_t>::max();
  check_close(run1("Add", {i32({2}, {hi, 5}), i32({1}, {1})}),
              i32({2}, {std::numeric_limits<int32_t>::min(), 6}), 0);
  check_close(run1("Mul", {i8({3}, {100, -3, 7}), i8({}, {3})}), i8({3}, {44, -9, 21}), 0);
  check_close(run1("Sub", {i64({2, 1}, {10, 20}), i64({3}, {1, 2, 3})}),
              i64({2, 3}, {9, 8, 7, 19, 18, 17}), 0);
  auto r = run_op("Div", {i64({3}, {1, 2, 3}), i64({3}, {1, 0, 1})});
  REQUIRE_FALSE(r.ok());
  check_error(r.status(), "Div 'n': integer division by zero");
}

TEST_CASE("Pow with float and integer exponents and negative bases", "[elementwise]") {
  Tensor base = f32({5}, {-2.f, -2.f, 1.5f, 4.f, -8.f});
  check_close(run1("Pow", {base, i64({5}, {3, 2, -1, 0, 2})}),
              f32({5}, {-8.f, 4.f, 0.666666687f, 1.f, 64.f}));
  check_close(run1("Pow", {base, i32({5}, {3, 2, -1, 0, 2})}),
              f32({5}, {-8.f, 4.f, 0.666666687f, 1.f, 64.f}));
  Tensor frac = run1("Pow", {base, f32({5}, {0.5f, 3.f, 2.f, 0.5f, 1.f / 3.f})});
  CHECK(std::isnan(frac.data<float>()[0]));
  CHECK(std::isnan(frac.data<float>()[4]));
  CHECK(frac.data<float>()[1] == -8.f);
  CHECK(frac.data<float>()[2] == 2.25f);
  CHECK(frac.data<float>()[3] == 2.f);
  // A one-element exponent of higher rank: the square fast path keeps the broadcast shape.
  Tensor sq = run1("Pow", {f32({3}, {-1.5f, 0.f, 3.f}), f32({1, 1}, {2.f})});
  check_close(sq, f32({1, 3}, {2.25f, 0.f, 9.f}), 0);
  check_close(run1("Pow", {f32({2}, {-2.f, 3.f}), f32({}, {3.f})}), f32({2}, {-8.f, 27.f}), 0);
  check_close(run1("Pow", {i64({6}, {3, -2, -2, 2, -1, 0}), i64({6}, {4, 3, 2, -1, -3, 0})}),
              i64({6}, {81, -8, 4, 0, -1, 1}), 0);
  check_close(run1("Pow", {i32({2}, {2, 9}), f32({2}, {0.5f, 0.5f})}), i32({2}, {1, 3}), 0);
}

TEST_CASE("unary math matches numpy", "[elementwise]") {
  Tensor x = f32({7}, {-3.5f, -1.f, -0.25f, 0.f, 0.5f, 2.f, 7.25f});
  check_close(run1("Sigmoid", {x}), f32({7}, {0.0293122306f, 0.268941432f, 0.437823504f, 0.5f,
                                              0.622459352f, 0.880797088f, 0.999290347f}));
  check_close(run1("Tanh", {x}), f32({7}, {-0.998177886f, -0.761594176f, -0.244918659f, 0.f,
                                           0.462117165f, 0.964027584f, 0.999998987f}));
  check_close(run1("Erf", {x}), f32({7}, {-0.999999285f, -0.842700779f, -0.276326388f, 0.f,
                                          0.520499885f, 0.995322287f, 1.f}));
  check_close(run1("Exp", {x}), f32({7}, {0.0301973838f, 0.36787945f, 0.778800786f, 1.f,
                                          1.64872122f, 7.38905621f, 1408.10486f}));
  check_close(run1("Relu", {x}), f32({7}, {0.f, 0.f, 0.f, 0.f, 0.5f, 2.f, 7.25f}), 0);
  check_close(run1("Neg", {x}), f32({7}, {3.5f, 1.f, 0.25f, -0.f, -0.5f, -2.f, -7.25f}), 0);
  check_close(run1("Abs", {x}), f32({7}, {3.5f, 1.f, 0.25f, 0.f, 0.5f, 2.f, 7.25f}), 0);
  Tensor y = f32({5}, {0.25f, 1.f, 2.f, 9.f, 100.f});
  check_close(run1("Log", {y}),
              f32({5}, {-1.38629436f, 0.f, 0.693147182f, 2.19722462f, 4.60517025f}));
  check_close(run1("Sqrt", {y}), f32({5}, {0.5f, 1.f, 1.41421354f, 3.f, 10.f}));
  check_close(run1("Reciprocal", {y}), f32({5}, {4.f, 1.f, 0.5f, 0.111111112f, 0.00999999978f}));
  CHECK(std::isnan(run1("Sqrt", {f32({1}, {-1.f})}).data<float>()[0]));
  CHECK(std::isinf(run1("Log", {f32({1}, {0.f})}).data<float>()[0]));
  CHECK(std::isnan(run1("Relu", {f32({1}, {NAN})}).data<float>()[0]));
  // Large arguments saturate instead of overflowing.
  check_close(run1("Sigmoid", {f32({2}, {-200.f, 200.f})}), f32({2}, {0.f, 1.f}), 0);
  // Integer forms.
  const int32_t lo = std::numeric_limits<int32_t>::min();
  check_close(run1("Relu", {i32({3}, {-4, 0, 9})}), i32({3}, {0, 0, 9}), 0);
  check_close(run1("Neg", {i32({3}, {-4, lo, 9})}), i32({3}, {4, lo, -9}), 0);
  check_close(run1("Abs", {i64({3}, {-4, 0, 9})}), i64({3}, {4, 0, 9}), 0);
  check_close(run1("Abs", {i8({2}, {-128, -5})}), i8({2}, {-128, 5}), 0);
}

TEST_CASE("activations with attributes", "[elementwise]") {
  Tensor x = f32({7}, {-3.5f, -1.f, -0.25f, 0.f, 0.5f, 2.f, 7.25f});
  check_close(run1("Gelu", {x}),
              f32({7}, {-0.000814201776f, -0.158655256f, -0.100323416f, 0.f, 0.345731229f,
                        1.95449972f, 7.25f}),
              1e-5);
  check_close(run1("Gelu", {x}, make_attrs<GeluAttrs>([](auto& a) { a.approximate = "tanh"; })),
              f32({7}, {-0.000616197649f, -0.158808008f, -0.100324646f, 0.f, 0.345714003f,
                        1.95459771f, 7.25f}),
              1e-5);
  check_close(run1("HardSigmoid", {x}),
              f32({7}, {0.f, 0.300000012f, 0.449999988f, 0.5f, 0.600000024f, 0.899999976f, 1.f}));
  check_close(run1("HardSwish", {x}), f32({7}, {-0.f, -0.333333343f, -0.114583336f, 0.f,
                                                0.291666657f, 1.66666663f, 7.25f}));
  check_close(run1("LeakyRelu", {x}), f32({7}, {-0.035f, -0.01f, -0.0025f, 0.f, 0.5f, 2.f, 7.25f}));
  check_close(run1("LeakyRelu", {x}, make_attrs<LeakyReluAttrs>([](auto& a) { a.alpha = 0.5f; })),
              f32({7}, {-1.75f, -0.5f, -0.125f, 0.f, 0.5f, 2.f, 7.25f}));
  // PRelu: per-channel slope [2,1] against X [2,2,2].
  check_close(run1("PRelu", {f32({2, 2, 2}, {-1, 2, -3, 4, -5, 6, -7, 8}), f32({2, 1}, {0.5f, 2})}),
              f32({2, 2, 2}, {-0.5f, 2, -6, 4, -2.5f, 6, -14, 8}), 0);
  check_close(run1("PRelu", {i64({3}, {-3, 0, 5}), i64({}, {2})}), i64({3}, {-6, 0, 5}), 0);

  auto clip = [](float lo, float hi) {
    return make_attrs<ClipAttrs>([&](auto& a) {
      a.min = lo;
      a.max = hi;
    });
  };
  const float inf = std::numeric_limits<float>::infinity();
  check_close(run1("Clip", {x}, clip(-1.f, 1.f)), f32({7}, {-1, -1, -0.25f, 0, 0.5f, 1, 1}), 0);
  check_close(run1("Clip", {x}, clip(0.f, inf)), f32({7}, {0, 0, 0, 0, 0.5f, 2, 7.25f}), 0);
  check_close(run1("Clip", {x}, clip(-inf, 0.f)), f32({7}, {-3.5f, -1, -0.25f, 0, 0, 0, 0}), 0);
  check_close(run1("Clip", {x}, clip(2.f, 1.f)), f32({7}, {1, 1, 1, 1, 1, 1, 1}), 0);
  check_close(run1("Clip", {x}), x, 0);
  check_close(run1("Clip", {i64({5}, {-9, -2, 0, 3, 9})}, clip(-2.5f, 3.f)),
              i64({5}, {-2, -2, 0, 3, 3}), 0);
  check_close(run1("Clip", {i8({3}, {-100, 5, 100})}, clip(-1e6f, 50.f)), i8({3}, {-100, 5, 50}),
              0);
}

TEST_CASE("comparisons and Where", "[elementwise]") {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({3}, {2, 2, 7});
  check_close(run1("Equal", {a, b}), boolean({2, 3}, {0, 1, 0, 0, 0, 0}), 0);
  check_close(run1("Less", {a, b}), boolean({2, 3}, {1, 0, 1, 0, 0, 1}), 0);
  check_close(run1("Greater", {b, a}), boolean({2, 3}, {1, 0, 1, 0, 0, 1}), 0);
  check_close(run1("Greater", {i64({2, 1}, {1, 5}), i64({}, {3})}), boolean({2, 1}, {0, 1}), 0);
  check_close(run1("Equal", {boolean({2}, {0, 1}), boolean({2, 1}, {1, 0})}),
              boolean({2, 2}, {0, 1, 1, 0}), 0);
  CHECK(run1("Equal", {f32({1}, {NAN}), f32({1}, {NAN})}).data<uint8_t>()[0] == 0);

  Tensor cond = boolean({2, 1, 3}, {1, 0, 1, 0, 1, 0});
  Tensor x = f32({4, 1}, {10, 20, 30, 40});
  Tensor y = f32({}, {-1});
  Tensor out = run1("Where", {cond, x, y});
  REQUIRE(out.shape() == Shape{2, 4, 3});
  Tensor want(DType::f32, {2, 4, 3});
  for (int64_t i = 0; i < want.numel(); ++i) {
    want.data<float>()[i] = cond.data<uint8_t>()[source_index(cond.shape(), want.shape(), i)]
                                ? x.data<float>()[source_index(x.shape(), want.shape(), i)]
                                : -1.f;
  }
  check_close(out, want, 0);
  check_close(run1("Where", {boolean({3}, {1, 0, 1}), i64({3}, {1, 2, 3}), i64({1}, {-7})}),
              i64({3}, {1, -7, 3}), 0);
}

TEST_CASE("Cast follows ONNX semantics with defined edge cases", "[elementwise]") {
  auto cast_to = [](std::string to) { return make_attrs<CastAttrs>([&](auto& a) { a.to = to; }); };
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = f32({8}, {2.7f, -2.7f, 0.f, -0.f, NAN, inf, -inf, 3e9f});
  check_close(run1("Cast", {x}, cast_to("i32")),
              i32({8}, {2, -2, 0, 0, 0, std::numeric_limits<int32_t>::max(),
                        std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}),
              0);
  check_close(run1("Cast", {x}, cast_to("i64")),
              i64({8}, {2, -2, 0, 0, 0, std::numeric_limits<int64_t>::max(),
                        std::numeric_limits<int64_t>::min(), 3000000000}),
              0);
  check_close(run1("Cast", {x}, cast_to("i8")), i8({8}, {2, -2, 0, 0, 0, 127, -128, 127}), 0);
  check_close(run1("Cast", {x}, cast_to("bool")), boolean({8}, {1, 1, 0, 0, 1, 1, 1, 1}), 0);
  check_close(run1("Cast", {boolean({2}, {1, 0})}, cast_to("f32")), f32({2}, {1, 0}), 0);
  check_close(run1("Cast", {i64({3}, {300, -129, 5})}, cast_to("i8")), i8({3}, {44, 127, 5}), 0);
  check_close(run1("Cast", {i32({3}, {0, -3, 2})}, cast_to("bool")), boolean({3}, {0, 1, 1}), 0);
  check_close(run1("Cast", {i64({2}, {16777217, -5})}, cast_to("f32")),
              f32({2}, {16777216.f, -5.f}), 0);
  // 16-bit floats: round to nearest even, and back exactly.
  Tensor h = run1("Cast", {f32({4}, {1.f, 0.1f, -65504.f, 1e6f})}, cast_to("f16"));
  REQUIRE(h.dtype() == DType::f16);
  CHECK(h.data<uint16_t>()[0] == 0x3c00);
  CHECK(h.data<uint16_t>()[1] == 0x2e66);
  CHECK(h.data<uint16_t>()[2] == 0xfbff);
  CHECK(h.data<uint16_t>()[3] == 0x7c00);
  check_close(run1("Cast", {h}, cast_to("f32")), f32({4}, {1.f, 0.099975586f, -65504.f, inf}), 0);
  Tensor bf = run1("Cast", {f32({2}, {1.f, 3.14159265f})}, cast_to("bf16"));
  CHECK(bf.data<uint16_t>()[0] == 0x3f80);
  CHECK(bf.data<uint16_t>()[1] == 0x4049);
  check_close(run1("Cast", {bf}, cast_to("i32")), i32({2}, {1, 3}), 0);
  check_close(run1("Cast", {run1("Cast", {bf}, cast_to("f16"))}, cast_to("f32")),
              f32({2}, {1.f, 3.140625f}), 0);
  // Every pair of dtypes round-trips small integers.
  Tensor small = f32({4}, {0, 1, 5, 100});
  for (const char* from : {"f32", "f16", "bf16", "i8", "i32", "i64"}) {
    for (const char* to : {"f32", "f16", "bf16", "i8", "i32", "i64"}) {
      Tensor t = run1("Cast", {run1("Cast", {small}, cast_to(from))}, cast_to(to));
      INFO(from << " -> " << to);
      check_close(run1("Cast", {t}, cast_to("f32")), small, 0);
    }
  }
}

TEST_CASE("16-bit float arithmetic computes in float", "[elementwise]") {
  auto cast_to = [](std::string to) { return make_attrs<CastAttrs>([&](auto& a) { a.to = to; }); };
  for (const char* dt : {"f16", "bf16"}) {
    Tensor a = run1("Cast", {f32({2, 2}, {1.5f, -2.f, 0.25f, 8.f})}, cast_to(dt));
    Tensor b = run1("Cast", {f32({2}, {0.5f, 4.f})}, cast_to(dt));
    Tensor sum = run1("Cast", {run1("Add", {a, b})}, cast_to("f32"));
    check_close(sum, f32({2, 2}, {2.f, 2.f, 0.75f, 12.f}), 0);
    Tensor relu = run1("Cast", {run1("Relu", {a})}, cast_to("f32"));
    check_close(relu, f32({2, 2}, {1.5f, 0.f, 0.25f, 8.f}), 0);
    Tensor m = run1("Cast", {run1("ReduceMean", {a})}, cast_to("f32"));
    check_close(m, f32({1, 1}, {1.9375f}), 0);
  }
}

TEST_CASE("Identity and inference-mode Dropout copy their input", "[elementwise]") {
  Tensor x = random_f32({3, 5}, 7);
  check_close(run1("Identity", {x}), x, 0);
  check_close(run1("Identity", {i64({2}, {4, -4})}), i64({2}, {4, -4}), 0);
  auto r = run_op("Dropout", {x}, nullptr, 2);
  REQUIRE(r.ok());
  check_close((*r)[0], x, 0);
  Tensor all_true(DType::boolean, {3, 5});
  std::memset(all_true.raw(), 1, all_true.bytes());
  check_close((*r)[1], all_true, 0);
  check_close(run1("Dropout", {x}, make_attrs<DropoutAttrs>([](auto& a) { a.ratio = 0.9f; })), x,
              0);
}

// Naive reduction: every output element visits the whole input.
Tensor naive_reduce(const std::string& op, const Tensor& x, std::vector<bool> mask, bool keepdims) {
  Shape out_keep = x.shape(), out;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) out_keep[d] = 1;
    if (!mask[d] || keepdims) out.push_back(out_keep[d]);
  }
  Tensor y(DType::f32, out);
  std::vector<double> acc(y.numel(), op == "ReduceMax" ? -INFINITY : 0.0);
  std::vector<int64_t> count(y.numel(), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    // Output index: the input coordinate with reduced axes zeroed.
    int64_t rest = i, o = 0, stride = 1;
    for (int d = static_cast<int>(mask.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % x.shape()[d];
      rest /= x.shape()[d];
      if (!mask[d]) o += c * stride;
      stride *= out_keep[d];
    }
    const double v = x.data<float>()[i];
    acc[o] = op == "ReduceMax" ? std::max(acc[o], v) : acc[o] + v;
    ++count[o];
  }
  for (int64_t o = 0; o < y.numel(); ++o)
    y.data<float>()[o] = static_cast<float>(op == "ReduceMean" ? acc[o] / count[o] : acc[o]);
  return y;
}

TEST_CASE("reductions over any axes", "[reduction]") {
  struct Spec {
    Shape shape;
    std::vector<int64_t> axes;
  };
  const std::vector<Spec> specs = {
      {{2, 3, 4}, {1}},      {{2, 3, 4}, {-1}}, {{2, 3, 4}, {0, 2}},    {{2, 3, 4}, {}},
      {{2, 3, 4}, {-3, -2}}, {{5, 1, 7}, {1}},  {{3, 4, 5, 6}, {1, 3}}, {{3, 4, 5, 6}, {0, 2}},
      {{1, 128, 77}, {-1}},  {{9}, {0}},        {{4, 6}, {0}}};
  for (const Spec& s : specs) {
    Tensor x = random_f32(s.shape, 11, -3.f, 3.f);
    std::vector<bool> mask(s.shape.size(), s.axes.empty());
    for (int64_t a : s.axes) mask[a < 0 ? a + static_cast<int64_t>(s.shape.size()) : a] = true;
    for (std::string op : {"ReduceSum", "ReduceMean", "ReduceMax"}) {
      for (int64_t keep : {0, 1}) {
        auto attrs = make_attrs<ReduceAttrs>([&](auto& a) {
          a.axes = s.axes;
          a.keepdims = keep;
        });
        INFO(op << " " << shape_to_string(s.shape) << " axes " << s.axes.size() << " keep "
                << keep);
        check_close(run1(op, {x}, attrs), naive_reduce(op, x, mask, keep), 1e-6);
      }
    }
  }
}

TEST_CASE("reduction edge cases", "[reduction]") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto noop = make_attrs<ReduceAttrs>([](auto& a) { a.noop_with_empty_axes = 1; });
  check_close(run1("ReduceSum", {x}, noop), x, 0);
  check_close(run1("ReduceMax", {x}, noop), x, 0);
  // Empty axes without noop reduces everything.
  check_close(run1("ReduceSum", {x}), f32({1, 1}, {21}), 0);
  check_close(run1("ReduceMean", {x}, make_attrs<ReduceAttrs>([](auto& a) { a.keepdims = 0; })),
              f32({}, {3.5f}), 0);
  // Rank 0.
  check_close(run1("ReduceMax", {f32({}, {4.f})}), f32({}, {4.f}), 0);
  // Zero-size reduced axis: sum 0, mean NaN, max -inf.
  Tensor empty(DType::f32, {2, 0});
  auto axis1 = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {1}; });
  check_close(run1("ReduceSum", {empty}, axis1), f32({2, 1}, {0, 0}), 0);
  CHECK(std::isnan(run1("ReduceMean", {empty}, axis1).data<float>()[0]));
  CHECK(run1("ReduceMax", {empty}, axis1).data<float>()[1] == -INFINITY);
  // NaN propagates through max.
  CHECK(std::isnan(run1("ReduceMax", {f32({3}, {1, NAN, 2})}).data<float>()[0]));
  // Integers.
  check_close(run1("ReduceSum", {i64({2, 2}, {1, 2, 3, 4})}, axis1), i64({2, 1}, {3, 7}), 0);
  check_close(run1("ReduceMean", {i32({2, 2}, {1, 2, 3, 6})}, axis1), i32({2, 1}, {1, 4}), 0);
  check_close(run1("ReduceMax", {i8({2, 2}, {-1, -7, 3, 9})}, axis1), i8({2, 1}, {-1, 9}), 0);
  // An integer result from a NaN or infinite double is defined (NaN 0, else saturated): a
  // square that wraps negative has a NaN root, as a negative sum has a NaN logarithm.
  check_close(run1("ReduceL2", {i64({1}, {3037000500})}), i64({1}, {0}), 0);
  check_close(run1("ReduceLogSum", {i32({2}, {-2, -3})}), i32({1}, {0}), 0);
  check_close(run1("ReduceLogSum", {i32({1}, {0})}),
              i32({1}, {std::numeric_limits<int32_t>::min()}), 0);
  check_close(run1("ReduceLogSumExp", {i32({1}, {1000})}),
              i32({1}, {std::numeric_limits<int32_t>::max()}), 0);
  // A sum of 2^20 values stays accurate (float accumulation would drift by ~1e-4).
  Tensor big(DType::f32, {1 << 20});
  for (int64_t i = 0; i < big.numel(); ++i) big.data<float>()[i] = (i % 3 == 0) ? 0.1f : 0.3f;
  double exact = 0;
  for (int64_t i = 0; i < big.numel(); ++i) exact += big.data<float>()[i];
  check_close(run1("ReduceSum", {big}), f32({1}, {static_cast<float>(exact)}), 1e-7);
}

TEST_CASE("shape inference errors name the node and the shapes", "[elementwise]") {
  const TensorType f23{DType::f32, {2, 3}}, f43{DType::f32, {4, 3}}, i23{DType::i64, {2, 3}};
  check_error(infer_error("Add", {f23, f43}), "Add 'n3': shapes 2x3 and 4x3 do not broadcast");
  check_error(infer_error("Mul", {f23, i23}),
              "Mul 'n3': inputs 0 and 1 have different dtypes f32 and i64");
  check_error(infer_error("Sigmoid", {i23}),
              "Sigmoid 'n3': input 0 has dtype i64, expected one of f32, f16, bf16");
  check_error(
      infer_error("Less", {TensorType{DType::boolean, {2}}, TensorType{DType::boolean, {2}}}),
      "Less 'n3': input 0 has dtype bool");
  check_error(infer_error("Where", {f23, f23, f23}),
              "Where 'n3': condition (input 0) has dtype f32, expected bool");
  check_error(infer_error("Where", {TensorType{DType::boolean, {2}}, f23, f43}),
              "Where 'n3': shapes 2, 2x3 and 4x3 do not broadcast");
  check_error(infer_error("PRelu", {f23, TensorType{DType::f32, {2, 1, 1}}}),
              "PRelu 'n3': slope shape 2x1x1 does not broadcast to input shape 2x3");
  check_error(infer_error("Cast", {f23}, make_attrs<CastAttrs>([](auto& a) { a.to = "f128"; })),
              "Cast 'n3': attribute 'to' is \"f128\", which is no dtype");
  check_error(
      infer_error("Gelu", {f23}, make_attrs<GeluAttrs>([](auto& a) { a.approximate = "fast"; })),
      "Gelu 'n3': attribute 'approximate' is \"fast\", expected \"none\" or \"tanh\"");
  check_error(infer_error("Dropout", {f23}, make_attrs<DropoutAttrs>([](auto& a) { a.ratio = 1; })),
              "Dropout 'n3': ratio 1 is outside [0, 1)");
  check_error(infer_error("Add", {f23, f23}, nullptr, 2),
              "Add 'n3': 2 outputs requested, the operator has 1 output");
  check_error(
      infer_error("ReduceSum", {f23}, make_attrs<ReduceAttrs>([](auto& a) { a.axes = {2}; })),
      "ReduceSum 'n3': axis 2 is out of range for input rank 2");
  check_error(infer_error("ReduceMax", {f23}, make_attrs<ReduceAttrs>([](auto& a) {
                            a.axes = {1, -1};
                          })),
              "ReduceMax 'n3': axis -1 appears twice in axes [1, -1]");
  check_error(infer_error("ReduceMean", {TensorType{DType::boolean, {2}}}),
              "ReduceMean 'n3': input 0 has dtype bool");
  check_error(infer_error("Pow", {TensorType{DType::i8, {2}}, f23}),
              "Pow 'n3': input 0 has dtype i8");
}

TEST_CASE("operator definitions declare fusion kinds and commutativity", "[elementwise]") {
  auto op = [](std::string_view name) {
    const OpDef* d = ctx().ops().find(name);
    REQUIRE(d != nullptr);
    return d;
  };
  for (const char* n :
       {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs",
        "LeakyRelu", "HardSigmoid", "HardSwish", "Gelu", "Clip", "Cast", "Identity", "Dropout"})
    CHECK(op(n)->fusion == FusionKind::elementwise);
  for (const char* n :
       {"Add", "Sub", "Mul", "Div", "Pow", "PRelu", "Where", "Equal", "Less", "Greater"})
    CHECK(op(n)->fusion == FusionKind::broadcast);
  for (const char* n : {"ReduceSum", "ReduceMean", "ReduceMax"})
    CHECK(op(n)->fusion == FusionKind::reduction);
  CHECK(op("Add")->commutative);
  CHECK(op("Mul")->commutative);
  CHECK_FALSE(op("Sub")->commutative);
  CHECK_FALSE(op("Div")->commutative);
}

}  // namespace
}  // namespace collage
