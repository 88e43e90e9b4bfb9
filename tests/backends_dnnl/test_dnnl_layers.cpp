// dnnl conformance: MaxPool, AveragePool, GlobalAveragePool (1-D/2-D/3-D, pads, strides,
// dilations, ceil_mode, count_include_pad), Softmax / LogSoftmax and LayerNormalization.
#include <catch2/catch.hpp>

#include "collage/ops.h"
#include "common/backend_check.h"
#include "post_op_cases.h"

using namespace collage;
using namespace collage::testing;

TEST_CASE("dnnl pool: MaxPool geometries", "[dnnl][pool]") {
  struct Case {
    std::string name;
    Shape x;
    std::function<void(MaxPoolAttrs&)> f;
  };
  const std::vector<Case> cases = {
      {"2x2 stride 2, 7x9 (floor)",
       {1, 3, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {2, 2};
         a.strides = {2, 2};
       }},
      {"2x2 stride 2 ceil_mode",
       {1, 3, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {2, 2};
         a.strides = {2, 2};
         a.ceil_mode = 1;
       }},
      {"3x3 stride 2 pad 1 (ResNet)",
       {2, 8, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3, 3};
         a.strides = {2, 2};
         a.pads = {1, 1, 1, 1};
       }},
      {"3x3 stride 1 pad 1 (Inception)",
       {1, 5, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3, 3};
         a.pads = {1, 1, 1, 1};
       }},
      {"dilation 2",
       {1, 3, 9, 11},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3, 3};
         a.dilations = {2, 2};
       }},
      {"SAME_UPPER stride 2",
       {1, 3, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3, 3};
         a.strides = {2, 2};
         a.auto_pad = "SAME_UPPER";
       }},
      {"uneven pads, ceil_mode",
       {1, 3, 7, 9},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3, 2};
         a.strides = {2, 3};
         a.pads = {1, 0, 0, 1};
         a.ceil_mode = 1;
       }},
      {"1-D",
       {2, 3, 11},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {3};
         a.strides = {2};
       }},
      {"3-D",
       {1, 2, 5, 6, 7},
       [](MaxPoolAttrs& a) {
         a.kernel_shape = {2, 2, 2};
       }},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      TestGraph t;
      Graph g = t.finish(t.op("MaxPool", {t.input(c.x)}, make_attrs<MaxPoolAttrs>(c.f)));
      CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g)).origin == "dnnl.pool");
    }
  }
}

TEST_CASE("dnnl pool: AveragePool and GlobalAveragePool", "[dnnl][pool]") {
  for (int include_pad : {0, 1}) {
    for (int ceil : {0, 1}) {
      for (const Shape& x :
           {Shape{1, 3, 7, 9}, Shape{1, 3, 8, 8}, Shape{2, 3, 11}, Shape{1, 2, 5, 6, 7}}) {
        DYNAMIC_SECTION("include_pad " << include_pad << " ceil " << ceil << " "
                                       << shape_to_string(x)) {
          const size_t sp = x.size() - 2;
          TestGraph t;
          auto attrs = make_attrs<AveragePoolAttrs>([&](AveragePoolAttrs& a) {
            a.kernel_shape.assign(sp, 3);
            a.strides.assign(sp, 2);
            a.pads.assign(2 * sp, 1);
            a.count_include_pad = include_pad;
            a.ceil_mode = ceil;
          });
          Graph g = t.finish(t.op("AveragePool", {t.input(x)}, attrs));
          GroupAttempt r = try_group(dnnl_backend(), g);
          if (r.offered) {
            check_group(dnnl_backend(), g, dnnl_check(t, g));
          } else {
            // oneDNN would divide windows that hang past the end pad by the full kernel size.
            CHECK(include_pad == 1);
            CHECK(ceil == 1);
            CHECK_FALSE(r.build.ok());
          }
        }
      }
    }
  }
  for (const Shape& x :
       {Shape{1, 3, 7, 9}, Shape{2, 5, 11}, Shape{1, 2, 3, 4, 5}, Shape{1, 64, 7, 7}}) {
    DYNAMIC_SECTION("GlobalAveragePool " << shape_to_string(x)) {
      TestGraph t;
      Graph g = t.finish(t.op("GlobalAveragePool", {t.input(x)}));
      check_group(dnnl_backend(), g, dnnl_check(t, g));
    }
  }
}

TEST_CASE("dnnl softmax: every axis, Softmax and LogSoftmax", "[dnnl][softmax]") {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const Shape& x : {Shape{7}, Shape{3, 9}, Shape{2, 3, 7, 9}}) {
      for (int64_t axis = -static_cast<int64_t>(x.size()); axis < static_cast<int64_t>(x.size());
           ++axis) {
        DYNAMIC_SECTION(op << " " << shape_to_string(x) << " axis " << axis) {
          TestGraph t;
          ValueId in = t.input(x, DType::f32, -4.f, 4.f);
          Graph g = t.finish(
              t.op(op, {in}, make_attrs<SoftmaxAttrs>([&](SoftmaxAttrs& a) { a.axis = axis; })));
          CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g)).origin == "dnnl.softmax");
        }
      }
    }
  }
}

TEST_CASE("dnnl layer norm: axes, broadcast scale, with and without bias", "[dnnl][layer_norm]") {
  struct Case {
    Shape x;
    int64_t axis;
    Shape scale;
    bool bias;
  };
  const std::vector<Case> cases = {
      {{2, 7, 9}, -1, {9}, true},   {{2, 7, 9}, -1, {9}, false},  {{2, 7, 9}, -2, {7, 9}, true},
      {{2, 7, 9}, 1, {1, 9}, true}, {{1, 8, 64}, -1, {64}, true}, {{5, 33}, -1, {33}, true},
      {{9}, 0, {9}, true},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(shape_to_string(c.x) << " axis " << c.axis << " scale "
                                         << shape_to_string(c.scale) << (c.bias ? " bias" : "")) {
      TestGraph t;
      std::vector<ValueId> in = {t.input(c.x, DType::f32, -2.f, 3.f), t.constant(c.scale)};
      if (c.bias) in.push_back(t.constant(c.scale));
      auto attrs = make_attrs<LayerNormalizationAttrs>([&](auto& a) { a.axis = c.axis; });
      Graph g = t.finish(t.op("LayerNormalization", in, attrs));
      CHECK(check_group(dnnl_backend(), g, dnnl_check(t, g)).origin == "dnnl.layer_norm");
    }
  }
}
