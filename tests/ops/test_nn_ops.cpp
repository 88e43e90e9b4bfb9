// nn operators: shape-inference errors and output shapes, and reference kernels on small inputs
// whose results are worked out by hand (cases ONNX Runtime cannot check or that pin semantics).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "collage/ops/nn.h"
#include "collage/ops/normalization.h"
#include "collage/reference.h"
#include "common/test_util.h"

namespace collage {
namespace {

using testing::describe_mismatch;
using testing::max_relative_error;

const Context& ctx() {
  static const Context c;
  return c;
}

Tensor f32(Shape s, std::vector<float> v) {
  return Tensor::from_f32(std::move(s), v);
}
Tensor zeros(Shape s) {
  return Tensor(DType::f32, std::move(s));
}

// Evaluates one node named "n1" (shape inference, then the reference kernel).
absl::StatusOr<std::vector<Tensor>> run(std::string_view op, const std::vector<Tensor>& inputs,
                                        std::shared_ptr<const OpAttrs> attrs = nullptr,
                                        int num_outputs = -1) {
  const OpDef* def = ctx().ops().find(op);
  REQUIRE(def != nullptr);
  if (!attrs) attrs = std::shared_ptr<const OpAttrs>(def->make_attrs());
  return evaluate_op(*def, *attrs, inputs, "n1", num_outputs);
}

// The single output of `op`, which must succeed.
Tensor run1(std::string_view op, const std::vector<Tensor>& inputs,
            std::shared_ptr<const OpAttrs> attrs = nullptr) {
  auto r = run(op, inputs, std::move(attrs));
  INFO(r.status().message());
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->front();
}

// The InvalidArgument message of a failing `op`.
std::string error(std::string_view op, const std::vector<Tensor>& inputs,
                  std::shared_ptr<const OpAttrs> attrs = nullptr, int num_outputs = -1) {
  auto r = run(op, inputs, std::move(attrs), num_outputs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

void check_close(const Tensor& actual, const Tensor& expected, double tol = 1e-5) {
  INFO(describe_mismatch(actual, expected));
  CHECK(max_relative_error(actual, expected) <= tol);
}

template <typename F>
std::shared_ptr<const OpAttrs> conv(F&& f) {
  return make_attrs<ConvAttrs>(f);
}

TEST_CASE("nn operators are registered with their fusion kinds", "[ops][nn]") {
  const std::pair<const char*, FusionKind> expected[] = {
      {"Conv", FusionKind::out_elementwise_fusable},
      {"ConvTranspose", FusionKind::out_elementwise_fusable},
      {"MatMul", FusionKind::out_elementwise_fusable},
      {"Gemm", FusionKind::out_elementwise_fusable},
      {"MaxPool", FusionKind::opaque},
      {"AveragePool", FusionKind::opaque},
      {"GlobalAveragePool", FusionKind::opaque},
      {"BatchNormalization", FusionKind::broadcast},
      {"InstanceNormalization", FusionKind::opaque},
      {"LayerNormalization", FusionKind::opaque},
      {"Softmax", FusionKind::opaque},
      {"LogSoftmax", FusionKind::opaque}};
  for (const auto& [name, kind] : expected) {
    INFO(name);
    const OpDef* def = ctx().ops().find(name);
    REQUIRE(def != nullptr);
    CHECK(def->fusion == kind);
  }
}

TEST_CASE("nn attributes fill from ONNX attribute names", "[ops][nn]") {
  ConvAttrs a;
  AttrMap m = {{"auto_pad", std::string("SAME_LOWER")},
               {"strides", std::vector<int64_t>{2, 2}},
               {"group", int64_t{4}}};
  REQUIRE(fill_attrs(a, m).ok());
  CHECK(a.auto_pad == "SAME_LOWER");
  CHECK(a.strides == std::vector<int64_t>{2, 2});
  CHECK(a.group == 4);
  CHECK(a.pads.empty());
  GemmAttrs g;
  REQUIRE(fill_attrs(g, {{"alpha", int64_t{2}}, {"transB", int64_t{1}}}).ok());
  CHECK(g.alpha == 2.f);
  CHECK(g.transB == 1);
  LayerNormalizationAttrs ln;
  CHECK_FALSE(fill_attrs(ln, {{"axes", std::vector<int64_t>{1}}}).ok());
}

TEST_CASE("Conv shape inference errors are precise", "[ops][nn]") {
  CHECK(error("Conv", {zeros({1, 3, 5, 5}), zeros({2, 4, 3, 3})}) ==
        "Conv 'n1': input channels 3 do not match weight channels 4 x group 1");
  CHECK(error("Conv", {zeros({1, 4, 5, 5}), zeros({3, 2, 3, 3})}, conv([](auto& a) {
                a.group = 2;
              })) == "Conv 'n1': output channels 3 are not divisible by group 2");
  CHECK(error("Conv", {zeros({3, 5}), zeros({2, 3, 3})}) ==
        "Conv 'n1': input X has shape [3, 5], expected rank 3 to 5 (N x C x 1-3 spatial axes)");
  CHECK_THAT(error("Conv", {zeros({1, 3, 5, 5}), zeros({2, 3, 3})}),
             Catch::StartsWith("Conv 'n1': weight W has shape [2, 3, 3], expected rank 4"));
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 6, 3})}) ==
        "Conv 'n1': kernel 6 is larger than padded input 4 on spatial axis 0");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.dilations = {1, 2};
              })) ==
        "Conv 'n1': kernel 5 (dilated) is larger than padded input 4 on spatial axis 1");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.auto_pad = "SAME";
              })) == "Conv 'n1': auto_pad 'SAME' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.strides = {2};
              })) == "Conv 'n1': strides has 1 values, expected 2 (one per spatial axis)");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.pads = {1, 1, 1};
              })) ==
        "Conv 'n1': pads has 3 values, expected 4 (begin and end of each spatial axis)");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.pads = {0, -1, 0, 0};
              })) == "Conv 'n1': pads [0, -1, 0, 0] must be >= 0");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})}, conv([](auto& a) {
                a.kernel_shape = {3, 2};
              })) == "Conv 'n1': kernel_shape [3, 2] does not match weight spatial shape [3, 3]");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({2, 1, 3, 3}), zeros({3})}) ==
        "Conv 'n1': bias B has shape [3], expected [2]");
  CHECK(error("Conv", {Tensor(DType::i64, {1, 1, 4, 4}), zeros({2, 1, 3, 3})}) ==
        "Conv 'n1': input X must be f32, got i64");
  CHECK(error("Conv", {zeros({1, 1, 4, 4}), zeros({1, 1, 3, 3})},
              conv([](auto& a) { a.group = 0; })) == "Conv 'n1': group 0 must be >= 1");
}

TEST_CASE("Conv output shapes follow the padding mode", "[ops][nn]") {
  auto shape_of = [](Shape x, Shape w, std::shared_ptr<const OpAttrs> a) {
    return run1("Conv", {zeros(std::move(x)), zeros(std::move(w))}, std::move(a)).shape();
  };
  CHECK(shape_of({1, 3, 7, 9}, {4, 3, 3, 3}, nullptr) == Shape{1, 4, 5, 7});
  CHECK(shape_of({2, 3, 7, 9}, {4, 3, 3, 3}, conv([](auto& a) {
                   a.auto_pad = "SAME_UPPER";
                   a.strides = {2, 2};
                 })) == Shape{2, 4, 4, 5});
  CHECK(shape_of({1, 3, 7, 9}, {4, 3, 3, 3}, conv([](auto& a) { a.auto_pad = "VALID"; })) ==
        Shape{1, 4, 5, 7});
  CHECK(shape_of({1, 3, 7, 9}, {4, 3, 3, 3}, conv([](auto& a) {
                   a.pads = {1, 0, 2, 1};
                   a.strides = {2, 3};
                 })) == Shape{1, 4, 4, 3});
  CHECK(shape_of({1, 2, 10}, {3, 2, 3}, conv([](auto& a) { a.dilations = {4}; })) ==
        Shape{1, 3, 2});
  // A stride of 2^63 - 1 (a fuzzer finding: the reference im2col's ceil_div overflowed): one
  // window, run by the reference kernel.
  CHECK(shape_of({1, 2, 10}, {3, 2, 3}, conv([](auto& a) {
          a.strides = {std::numeric_limits<int64_t>::max()};
        })) == Shape{1, 3, 1});
}

TEST_CASE("Conv computes 1-D and dilated SAME convolutions", "[ops][nn]") {
  // y[i] = x[i-1] - x[i+1] + 10, with one zero of padding on each side.
  Tensor y =
      run1("Conv", {f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 3}, {1, 0, -1}), f32({1}, {10})},
           conv([](auto& a) {
             a.pads = {1, 1};
           }));
  check_close(y, f32({1, 1, 5}, {8, 8, 8, 8, 14}));
  // Dilation 2 with SAME_UPPER (ONNX Runtime refuses this combination): extent 5, total pad 4.
  y = run1("Conv", {f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 3}, {1, 1, 1})}, conv([](auto& a) {
             a.dilations = {2};
             a.auto_pad = "SAME_UPPER";
           }));
  check_close(y, f32({1, 1, 5}, {4, 6, 9, 6, 8}));
  // SAME_LOWER puts the odd pad at the begin: extent 2, total pad 1.
  y = run1("Conv", {f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, 10})},
           conv([](auto& a) { a.auto_pad = "SAME_LOWER"; }));
  check_close(y, f32({1, 1, 3}, {10, 21, 32}));
}

TEST_CASE("ConvTranspose places taps, pads and output_shape like ONNX Runtime", "[ops][nn]") {
  const Tensor x = f32({1, 1, 3}, {1, 10, 100});
  const Tensor w = f32({1, 1, 3}, {1, 2, 3});
  auto ct = [&](auto&& f) {
    return run1("ConvTranspose", {x, w}, make_attrs<ConvTransposeAttrs>([&](auto& a) {
                  a.strides = {2};
                  f(a);
                }));
  };
  // Full output: out[2 i + k] += x[i] * w[k].
  check_close(ct([](auto&) {}), f32({1, 1, 7}, {1, 2, 13, 20, 130, 200, 300}));
  check_close(ct([](auto& a) { a.auto_pad = "SAME_UPPER"; }),
              f32({1, 1, 6}, {1, 2, 13, 20, 130, 200}));
  check_close(ct([](auto& a) { a.auto_pad = "SAME_LOWER"; }),
              f32({1, 1, 6}, {2, 13, 20, 130, 200, 300}));
  check_close(ct([](auto& a) { a.output_shape = {5}; }), f32({1, 1, 5}, {2, 13, 20, 130, 200}));
  check_close(ct([](auto& a) { a.output_shape = {8}; }),
              f32({1, 1, 8}, {1, 2, 13, 20, 130, 200, 300, 0}));
  check_close(ct([](auto& a) { a.output_padding = {1}; }),
              f32({1, 1, 8}, {1, 2, 13, 20, 130, 200, 300, 0}));
  check_close(ct([](auto& a) { a.pads = {1, 2}; }), f32({1, 1, 4}, {2, 13, 20, 130}));
}

TEST_CASE("ConvTranspose shape inference errors are precise", "[ops][nn]") {
  auto attrs = [](auto&& f) { return make_attrs<ConvTransposeAttrs>(f); };
  CHECK(error("ConvTranspose", {zeros({1, 3, 4, 4}), zeros({2, 2, 3, 3})}) ==
        "ConvTranspose 'n1': input channels 3 do not match weight input channels 2 "
        "(W is C x M/group x kernel)");
  CHECK(error("ConvTranspose", {zeros({1, 2, 4, 4}), zeros({2, 2, 3, 3})}, attrs([](auto& a) {
                a.strides = {2, 2};
                a.output_padding = {2, 0};
              })) ==
        "ConvTranspose 'n1': output_padding 2 on spatial axis 0 must be less than "
        "max(stride, dilation) = 2");
  CHECK(error("ConvTranspose", {zeros({1, 2, 4, 4}), zeros({2, 2, 3, 3})}, attrs([](auto& a) {
                a.strides = {2, 2};
                a.output_shape = {11, 9};
              })) ==
        "ConvTranspose 'n1': output_shape [11, 9] cannot be produced on spatial axis 0 "
        "(full output size 9, stride 2)");
  CHECK_THAT(error("ConvTranspose", {zeros({1, 2, 4, 4}), zeros({2, 2, 3, 3})}, attrs([](auto& a) {
                     a.output_shape = {1, 2, 6, 6};
                   })),
             Catch::Contains("output_shape [1, 2, 6, 6] must have 2 values"));
  CHECK_THAT(error("ConvTranspose", {zeros({1, 2, 2}), zeros({2, 1, 2})}, attrs([](auto& a) {
                     a.pads = {2, 1};
                   })),
             Catch::Contains("leave no output on spatial axis 0"));
  CHECK(error("ConvTranspose", {zeros({1, 3, 4}), zeros({3, 1, 2})}, attrs([](auto& a) {
                a.group = 2;
              })) == "ConvTranspose 'n1': input channels 3 are not divisible by group 2");
}

TEST_CASE("pool shapes, ceil_mode and padding counts", "[ops][nn]") {
  const Tensor x = f32({1, 1, 7}, {1, 5, 2, 8, 3, 7, 4});
  auto mp = [&](auto&& f) {
    return run1("MaxPool", {x}, make_attrs<MaxPoolAttrs>([&](auto& a) {
                  a.kernel_shape = {2};
                  a.strides = {2};
                  f(a);
                }));
  };
  check_close(mp([](auto&) {}), f32({1, 1, 3}, {5, 8, 7}));
  check_close(mp([](auto& a) { a.ceil_mode = 1; }), f32({1, 1, 4}, {5, 8, 7, 4}));
  // With pads 1/1 the ceil_mode window that would start in the end padding is dropped.
  check_close(mp([](auto& a) {
                a.ceil_mode = 1;
                a.pads = {1, 1};
              }),
              f32({1, 1, 4}, {1, 5, 8, 7}));
  check_close(mp([](auto& a) {
                a.dilations = {3};
                a.strides = {1};
              }),
              f32({1, 1, 4}, {8, 5, 7, 8}));

  auto ap = [&](int include) {
    return run1("AveragePool", {f32({1, 1, 3}, {3, 6, 9})},
                make_attrs<AveragePoolAttrs>([&](auto& a) {
                  a.kernel_shape = {3};
                  a.pads = {1, 1};
                  a.count_include_pad = include;
                }));
  };
  check_close(ap(0), f32({1, 1, 3}, {4.5f, 6, 7.5f}));
  check_close(ap(1), f32({1, 1, 3}, {3, 6, 5}));
  check_close(run1("GlobalAveragePool", {f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -1, -1, 5})}),
              f32({1, 2, 1, 1}, {2.5f, 0.5f}));
}

TEST_CASE("pool shape inference errors are precise", "[ops][nn]") {
  auto mp = [](auto&& f) { return make_attrs<MaxPoolAttrs>(f); };
  CHECK(error("MaxPool", {zeros({1, 1, 4, 4})}) ==
        "MaxPool 'n1': kernel_shape [] must have 2 values, one per spatial axis of X "
        "[1, 1, 4, 4]");
  CHECK(error("MaxPool", {zeros({1, 1, 4, 4})}, mp([](auto& a) {
                a.kernel_shape = {2, 2};
                a.pads = {2, 0, 0, 0};
              })) == "MaxPool 'n1': pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]");
  CHECK(error("MaxPool", {zeros({1, 1, 4, 4})}, mp([](auto& a) {
                a.kernel_shape = {2, 2};
              }),
              3) == "MaxPool 'n1': 3 outputs requested; the operator has 2");
  CHECK(error("AveragePool", {zeros({1, 1, 4, 4})},
              make_attrs<AveragePoolAttrs>([](auto& a) { a.kernel_shape = {2, 2}; }), 2) ==
        "AveragePool 'n1': 2 outputs requested; the operator has 1");
  CHECK(error("MaxPool", {zeros({1, 1, 4, 4})}, mp([](auto& a) {
                a.kernel_shape = {5, 2};
              })) == "MaxPool 'n1': kernel 5 is larger than padded input 4 on spatial axis 0");
  CHECK(error("GlobalAveragePool", {zeros({2, 3})}) ==
        "GlobalAveragePool 'n1': input X has shape [2, 3], expected rank >= 3 (N x C x spatial "
        "axes)");
}

TEST_CASE("normalisations compute and check their inputs", "[ops][nn]") {
  // BatchNormalization: y = scale * (x - mean) / sqrt(var + eps) + B.
  auto bn_attrs = make_attrs<BatchNormalizationAttrs>([](auto& a) { a.epsilon = 1.f; });
  check_close(run1("BatchNormalization",
                   {f32({1, 2, 1}, {1, 2}), f32({2}, {2, 1}), f32({2}, {0, 1}), f32({2}, {1, 0}),
                    f32({2}, {3, 0})},
                   bn_attrs),
              f32({1, 2, 1}, {0, 3}));
  const std::vector<Tensor> bn_in = {zeros({1, 2, 3}), zeros({2}), zeros({2}), zeros({2}),
                                     zeros({2})};
  CHECK(error("BatchNormalization", bn_in, make_attrs<BatchNormalizationAttrs>([](auto& a) {
                a.training_mode = 1;
              })) == "BatchNormalization 'n1': training_mode=1 is not supported (inference only)");
  CHECK_THAT(error("BatchNormalization", bn_in, nullptr, 3),
             Catch::Contains("3 outputs requested"));
  CHECK(error("BatchNormalization",
              {zeros({1, 2, 3}), zeros({3}), zeros({2}), zeros({2}), zeros({2})}) ==
        "BatchNormalization 'n1': input scale has shape [3], expected [2] (the channels of X "
        "[1, 2, 3])");

  const float s = 1.f / std::sqrt(1.25f);
  check_close(
      run1("InstanceNormalization", {f32({1, 1, 4}, {1, 2, 3, 4}), f32({1}, {1}), f32({1}, {0})},
           make_attrs<InstanceNormalizationAttrs>([](auto& a) { a.epsilon = 0; })),
      f32({1, 1, 4}, {-1.5f * s, -0.5f * s, 0.5f * s, 1.5f * s}));

  const float r = std::sqrt(1.5f);
  auto ln_attrs = make_attrs<LayerNormalizationAttrs>([](auto& a) { a.epsilon = 0; });
  check_close(run1("LayerNormalization",
                   {f32({1, 3}, {1, 2, 3}), f32({3}, {2, 2, 2}), f32({3}, {1, 1, 1})}, ln_attrs),
              f32({1, 3}, {1 - 2 * r, 1, 1 + 2 * r}));
  // Scale broadcasts to the normalized shape [2, 3]; B is absent.
  check_close(run1("LayerNormalization", {f32({2, 3}, {1, 2, 3, 3, 2, 1}), f32({1}, {2})},
                   make_attrs<LayerNormalizationAttrs>([](auto& a) {
                     a.axis = 0;
                     a.epsilon = 0;
                   })),
              f32({2, 3}, {-2 * r, 0, 2 * r, 2 * r, 0, -2 * r}));
  CHECK(error("LayerNormalization", {zeros({2, 3}), zeros({3})},
              make_attrs<LayerNormalizationAttrs>([](auto& a) { a.axis = 2; })) ==
        "LayerNormalization 'n1': axis 2 is out of range for X of shape [2, 3]");
  CHECK(error("LayerNormalization", {zeros({2, 3}), zeros({2})}) ==
        "LayerNormalization 'n1': input Scale has shape [2], which does not broadcast to the "
        "normalized shape [3] (axis -1)");
}

// 16-bit LayerNormalization, RMSNormalization and GroupNormalization follow ONNX's function bodies
// (stash_type 1): statistics and the normalised value in float, the normalised value cast back to
// the input's type, then Mul by the scale and Add of the bias, each rounded to the type. The
// expected values are that body evaluated in numpy (GroupNormalization's: onnx.reference on the
// opset-21 function); computing in float and rounding once (ONNX Runtime's CPU kernels) gives the
// values in the comments, a step or more off in the marked elements.
TEST_CASE("16-bit normalisations round as ONNX's function bodies do", "[ops][nn]") {
  auto f16 = [](Shape s, std::vector<float> v) {
    return Tensor::from_f32(std::move(s), v).cast(DType::f16);
  };
  auto check_bits = [](const Tensor& actual, const Tensor& expected) {
    INFO(describe_mismatch(actual.cast(DType::f32), expected.cast(DType::f32), 0));
    CHECK(actual.identical(expected));
  };
  // Rounded once: -0.5576171875, 0.78564453125*, 0.92041015625*, -0.0279998779296875*.
  check_bits(run1("LayerNormalization",
                  {f16({1, 4}, {-0.25f, 0, -1, -1.75f}), f16({4}, {-0.25f, 0.375f, -0.125f, 0.875f}),
                   f16({4}, {-0.375f, 0.375f, 0.875f, 1.25f})}),
             f16({1, 4}, {-0.5576171875f, 0.7861328125f, 0.9208984375f, -0.0283203125f}));
  // Rounded once: 1.9599609375*, -0.66796875*, 0.1336669921875, 0.779296875.
  check_bits(run1("RMSNormalization",
                  {f16({1, 4}, {-2, -1.5f, 0.25f, 1.25f}), f16({4}, {-1.375f, 0.625f, 0.75f, 0.875f})}),
             f16({1, 4}, {1.9609375f, -0.66845703125f, 0.1336669921875f, 0.779296875f}));
  // Rounded once: 0.369384765625, -0.1737060546875*, 2.4375, 0.156982421875*.
  check_bits(run1("GroupNormalization",
                  {f16({1, 2, 2}, {-0.5f, 0.75f, -1.5f, 1.5f}), f16({2}, {-0.5f, -0.875f}),
                   f16({2}, {0.125f, 1.25f})},
                  make_attrs<GroupNormalizationAttrs>([](auto& a) { a.num_groups = 1; })),
             f16({1, 2, 2}, {0.369384765625f, -0.173828125f, 2.4375f, 0.1572265625f}));
  // LayerNormalization's Mean and InvStdDev are float (the stash type) whatever X is.
  auto r = run("LayerNormalization", {f16({2, 2}, {1, 3, 2, 2}), f16({2}, {1, 1})}, nullptr, 3);
  REQUIRE(r.ok());
  CHECK((*r)[1].dtype() == DType::f32);
  CHECK((*r)[1].data<float>()[0] == 2.f);
  CHECK(error("LayerNormalization", {f16({2, 2}, {1, 3, 2, 2}), zeros({2})}) ==
        "LayerNormalization 'n1': input Scale is f32, X is f16");
  CHECK(error("LayerNormalization", {f16({2, 2}, {1, 3, 2, 2}), f16({2}, {1, 1})},
              make_attrs<LayerNormalizationAttrs>([](auto& a) { a.stash_type = 10; })) ==
        "LayerNormalization 'n1': stash_type 10 is not supported (1: statistics computed in "
        "float)");
}

TEST_CASE("Softmax and LogSoftmax use one axis", "[ops][nn]") {
  const Tensor x = f32({2, 2}, {0, std::log(3.f), 1, 1});
  check_close(run1("Softmax", {x}), f32({2, 2}, {0.25f, 0.75f, 0.5f, 0.5f}));
  check_close(run1("LogSoftmax", {x}),
              f32({2, 2}, {std::log(0.25f), std::log(0.75f), std::log(0.5f), std::log(0.5f)}));
  // Axis 0 (also as -2) normalises the columns.
  for (int64_t axis : {0, -2}) {
    auto a = make_attrs<SoftmaxAttrs>([&](auto& s) { s.axis = axis; });
    Tensor y = run1("Softmax", {f32({2, 2}, {0, 0, std::log(3.f), 0})}, a);
    check_close(y, f32({2, 2}, {0.25f, 0.5f, 0.75f, 0.5f}));
  }
  // Large inputs do not overflow.
  check_close(run1("Softmax", {f32({2}, {1000, 1000})}), f32({2}, {0.5f, 0.5f}));
  CHECK(error("Softmax", {zeros({2, 3})}, make_attrs<SoftmaxAttrs>([](auto& a) { a.axis = -3; })) ==
        "Softmax 'n1': axis -3 is out of range for input of shape [2, 3]");
}

TEST_CASE("MatMul follows numpy for 1-D operands and batches", "[ops][nn]") {
  check_close(run1("MatMul", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}), f32({}, {32}));
  const Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  check_close(run1("MatMul", {a, f32({3}, {1, 0, -1})}), f32({2}, {-2, -2}));
  check_close(run1("MatMul", {f32({2}, {1, -1}), a}), f32({3}, {-3, -3, -3}));
  CHECK(run1("MatMul", {zeros({2, 1, 3, 4}), zeros({5, 4, 6})}).shape() == Shape{2, 5, 3, 6});
  CHECK(run1("MatMul", {zeros({4}), zeros({2, 4, 5})}).shape() == Shape{2, 5});
  CHECK(run1("MatMul", {zeros({0, 3}), zeros({3, 2})}).shape() == Shape{0, 2});
  check_close(run1("MatMul", {zeros({2, 0}), zeros({0, 3})}), zeros({2, 3}));

  CHECK(error("MatMul", {zeros({2, 3}), zeros({4, 5})}) ==
        "MatMul 'n1': inner dimensions do not match: A [2, 3] has 3 columns, B [4, 5] has 4 rows");
  CHECK(error("MatMul", {zeros({2, 2, 3}), zeros({3, 3, 5})}) ==
        "MatMul 'n1': batch dimensions of A [2, 2, 3] and B [3, 3, 5] do not broadcast");
  CHECK(error("MatMul", {zeros({}), zeros({3})}) ==
        "MatMul 'n1': operands must have rank >= 1, got A [] and B [3]");
}

TEST_CASE("Gemm transposes, scales and broadcasts C", "[ops][nn]") {
  const Tensor a = f32({2, 2}, {1, 2, 3, 4});
  const Tensor b = f32({2, 2}, {5, 6, 7, 8});
  auto g = [](int ta, int tb, float alpha, float beta) {
    return make_attrs<GemmAttrs>([=](auto& x) {
      x.transA = ta;
      x.transB = tb;
      x.alpha = alpha;
      x.beta = beta;
    });
  };
  // A*B = [19 22; 43 50], A'*B = [26 30; 38 44], A*B' = [17 23; 39 53], A'*B' = [23 31; 34 46].
  const Tensor c_row = f32({2}, {1, -1});
  check_close(run1("Gemm", {a, b, c_row}, g(0, 0, 1, 1)), f32({2, 2}, {20, 21, 44, 49}));
  check_close(run1("Gemm", {a, b, c_row}, g(1, 0, 2, 0.5f)),
              f32({2, 2}, {52.5f, 59.5f, 76.5f, 87.5f}));
  check_close(run1("Gemm", {a, b, f32({2, 1}, {1, -1})}, g(0, 1, 1, 1)),
              f32({2, 2}, {18, 24, 38, 52}));
  check_close(run1("Gemm", {a, b, f32({}, {10})}, g(1, 1, -1, 1)),
              f32({2, 2}, {-13, -21, -24, -36}));
  check_close(run1("Gemm", {a, b}, g(0, 0, 1, 1)), f32({2, 2}, {19, 22, 43, 50}));
  // beta = 0 ignores C entirely, NaNs included.
  check_close(run1("Gemm", {a, b, f32({2, 2}, {NAN, NAN, NAN, NAN})}, g(0, 0, 1, 0)),
              f32({2, 2}, {19, 22, 43, 50}));

  CHECK(error("Gemm", {zeros({2, 3}), zeros({2, 3})}, g(0, 0, 1, 1)) ==
        "Gemm 'n1': inner dimensions do not match: A [2, 3] (transA=0) has 3 columns, B [2, 3] "
        "(transB=0) has 2 rows");
  CHECK(error("Gemm", {zeros({2, 3}), zeros({3, 4}), zeros({3})}) ==
        "Gemm 'n1': input C has shape [3], which does not broadcast to the output [2, 4]");
  CHECK(error("Gemm", {zeros({2, 3, 1}), zeros({3, 4})}) ==
        "Gemm 'n1': A [2, 3, 1] and B [3, 4] must both have rank 2");
}

}  // namespace
}  // namespace collage
