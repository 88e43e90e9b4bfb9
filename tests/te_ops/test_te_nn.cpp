// Conformance of the pooling, BatchNormalization and ConvTranspose TE computes against the
// reference kernels: pads, strides, dilations, ceil_mode, count_include_pad, groups,
// output_padding and auto_pad.
#include <catch2/catch.hpp>

#include "collage/ops/nn.h"
#include "collage/ops/pooling.h"
#include "common/backend_check.h"
#include "common/test_util.h"
#include "native_backend.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("te_ops: MaxPool, AveragePool and LpPool with pads, strides, dilations and ceil_mode",
          "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, pads = {}, dilations = {};
    int64_t ceil_mode = 0;
    std::string auto_pad = "NOTSET";
  };
  const std::vector<Case> cases = {
      {{2, 3, 17, 19}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {{1, 4, 17, 19}, {3, 3}, {2, 2}, {1, 0, 1, 2}, {}, 1},
      {{1, 2, 15, 13}, {2, 3}, {1, 2}, {}, {2, 2}},
      {{1, 2, 15, 13}, {3, 3}, {2, 1}, {2, 1, 1, 2}, {2, 3}, 1},  // dilated, padded, ceil_mode
      {{2, 3, 23}, {4}, {3}, {2, 1}, {}, 1},
      {{1, 2, 11, 10}, {3, 3}, {2, 2}, {}, {}, 0, "SAME_UPPER"},
      {{1, 3, 64, 64}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}}};
  for (const Case& c : cases) {
    INFO("MaxPool on " << shape_to_string(c.x));
    auto attrs = make_attrs<MaxPoolAttrs>([&](auto& a) {
      a.kernel_shape = c.kernel;
      a.strides = c.strides;
      a.pads = c.pads;
      a.dilations = c.dilations;
      a.ceil_mode = c.ceil_mode;
      a.auto_pad = c.auto_pad;
    });
    check_group(native_backend(), single_op_graph(ctx, "MaxPool", {{DType::f32, c.x}}, attrs));
    for (int64_t include : {0, 1}) {
      auto avg = make_attrs<AveragePoolAttrs>([&](auto& a) {
        a.kernel_shape = c.kernel;
        a.strides = c.strides;
        a.pads = c.pads;
        a.dilations = c.dilations;
        a.ceil_mode = c.ceil_mode;
        a.auto_pad = c.auto_pad;
        a.count_include_pad = include;
      });
      INFO("AveragePool count_include_pad " << include);
      check_group(native_backend(), single_op_graph(ctx, "AveragePool", {{DType::f32, c.x}}, avg));
    }
    for (int64_t p : {1, 2, 3}) {
      auto lp = make_attrs<LpPoolAttrs>([&](auto& a) {
        a.kernel_shape = c.kernel;
        a.strides = c.strides;
        a.pads = c.pads;
        a.dilations = c.dilations;
        a.ceil_mode = c.ceil_mode;
        a.auto_pad = c.auto_pad;
        a.p = p;
      });
      INFO("LpPool p " << p);
      // 1e-4: pow in f32 against the reference's double.
      check_group(native_backend(), single_op_graph(ctx, "LpPool", {{DType::f32, c.x}}, lp),
                  {1e-4});
    }
  }
  check_group(native_backend(),
              single_op_graph(ctx, "GlobalAveragePool", {{DType::f32, {2, 5, 7, 9}}}), {1e-5});
  check_group(native_backend(),
              single_op_graph(ctx, "GlobalAveragePool", {{DType::f32, {1, 67, 11}}}), {1e-5});
}

TEST_CASE("te_ops: MaxPool on 8-bit integers, padded windows reading the type's lowest value",
          "[te_ops]") {
  Context ctx;
  auto attrs = make_attrs<MaxPoolAttrs>([](auto& a) {
    a.kernel_shape = {3, 3};
    a.strides = {2, 2};
    a.pads = {1, 1, 1, 1};
  });
  for (DType t : {DType::u8, DType::i8}) {
    INFO(dtype_name(t));
    check_group(native_backend(), single_op_graph(ctx, "MaxPool", {{t, {2, 3, 9, 8}}}, attrs));
  }
}

TEST_CASE("te_ops: MaxPool's Indices in row- and column-major order", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x;
    std::vector<int64_t> kernel, strides, pads, dilations;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 9, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
                                         {{1, 2, 11, 7}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}},
                                         {{2, 2, 13}, {4}, {3}, {1, 2}, {}},
                                         {{1, 2, 4, 5, 6}, {2, 2, 3}, {1, 2, 2}, {}, {}}})
    for (int64_t order : {0, 1}) {
      INFO("MaxPool on " << shape_to_string(c.x) << " storage_order " << order);
      auto attrs = make_attrs<MaxPoolAttrs>([&](auto& a) {
        a.kernel_shape = c.kernel;
        a.strides = c.strides;
        a.pads = c.pads;
        a.dilations = c.dilations;
        a.storage_order = order;
      });
      // Values 0 to 4 tie often: the first tap holding the maximum must be reported.
      const Tensor x = random_tensor({DType::i32, c.x}, 7, 0.f, 0.f).cast(DType::f32);
      check_group(native_backend(),
                  single_op_graph(ctx, "MaxPool", {{DType::f32, c.x}}, attrs, {}, 2),
                  GroupCheck{.inputs = {x}});
    }
}

TEST_CASE("te_ops: BatchNormalization in inference", "[te_ops]") {
  Context ctx;
  Tensor var = random_f32({6}, 9, 0.5f, 2.f);
  check_group(native_backend(),
              single_op_graph(ctx, "BatchNormalization",
                              {{DType::f32, {2, 6, 7, 9}},
                               {DType::f32, {6}},
                               {DType::f32, {6}},
                               {DType::f32, {6}},
                               {DType::f32, {6}}},
                              nullptr, {Tensor(), Tensor(), Tensor(), Tensor(), var}),
              {1e-5});
}

TEST_CASE("te_ops: BatchNormalization in training mode with running statistics", "[te_ops]") {
  Context ctx;
  auto attrs = make_attrs<BatchNormalizationAttrs>([](auto& a) {
    a.epsilon = 1e-3f;
    a.momentum = 0.8f;
  });
  for (const Shape& x : std::vector<Shape>{{2, 3, 5, 7}, {4, 6}, {3, 2, 9}})
    for (int outputs : {1, 3}) {
      INFO("on " << shape_to_string(x) << " with " << outputs << " outputs");
      const Shape c = {x[1]};
      check_group(native_backend(),
                  single_op_graph(ctx, "BatchNormalizationTraining",
                                  {{DType::f32, x}, {DType::f32, c}, {DType::f32, c},
                                   {DType::f32, c}, {DType::f32, c}},
                                  attrs, {}, outputs),
                  {1e-4});
    }
}

TEST_CASE("te_ops: ConvTranspose with strides, pads, groups and output_padding", "[te_ops]") {
  Context ctx;
  struct Case {
    Shape x, w;
    std::vector<int64_t> strides, pads = {}, output_padding = {}, dilations = {};
    int64_t group = 1;
    bool bias = true;
    std::string auto_pad = "NOTSET";
  };
  const std::vector<Case> cases = {
      {{1, 4, 5, 5}, {4, 3, 4, 4}, {2, 2}, {1, 1, 1, 1}},
      {{2, 4, 5, 6}, {4, 2, 3, 3}, {2, 2}, {0, 1, 1, 0}, {1, 1}, {}, 2},
      {{1, 3, 7}, {3, 5, 3}, {3}, {}, {}, {2}, 1, false},
      {{1, 2, 4, 4}, {2, 3, 3, 3}, {2, 2}, {}, {}, {}, 1, true, "SAME_UPPER"},
      // Inputs smaller than the kernel (DCGAN's first layer): the reduction walks the inputs.
      {{2, 5, 1, 1}, {5, 6, 4, 4}, {1, 1}},
      {{1, 4, 2, 3}, {4, 1, 5, 5}, {1, 2}, {1, 0, 2, 1}, {}, {}, 2}};
  for (const Case& c : cases) {
    INFO("ConvTranspose " << shape_to_string(c.x) << " * " << shape_to_string(c.w));
    auto attrs = make_attrs<ConvTransposeAttrs>([&](auto& a) {
      a.strides = c.strides;
      a.pads = c.pads;
      a.output_padding = c.output_padding;
      a.dilations = c.dilations;
      a.group = c.group;
      a.auto_pad = c.auto_pad;
    });
    std::vector<TensorType> in = {{DType::f32, c.x}, {DType::f32, c.w}};
    if (c.bias) in.push_back({DType::f32, {c.w[1] * c.group}});
    check_group(native_backend(), single_op_graph(ctx, "ConvTranspose", in, attrs), {1e-4});
    // Constant weights: the anchor schedule (packed weights, channels as vector lanes).
    check_group(native_backend(),
                single_op_graph(ctx, "ConvTranspose", in, attrs, {Tensor(), random_f32(c.w, 5)}),
                {1e-4});
  }
}
