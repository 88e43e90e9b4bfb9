// nn reference kernels against direct loops written from the ONNX definitions: the blocked GEMM,
// im2col Conv and col2im ConvTranspose, over shapes and attribute mixes that cross the GEMM's
// block edges and combinations ONNX Runtime refuses (dilated SAME padding).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "collage/ops/nn.h"
#include "collage/reference.h"
#include "common/test_util.h"
#include "ops/gemm_ref.h"

namespace collage {
namespace {

using testing::describe_mismatch;
using testing::max_relative_error;

const Context& ctx() {
  static const Context c;
  return c;
}

// Values k/8 in [-1, 1]: every sum in these tests is exact in float32, whatever its order.
Tensor grid(const Shape& shape, uint64_t seed) {
  Tensor t(DType::f32, shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(-8, 8);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(d(rng)) / 8.f;
  return t;
}

void check_equal(const Tensor& actual, const Tensor& expected) {
  INFO(describe_mismatch(actual, expected));
  CHECK(max_relative_error(actual, expected) <= 1e-6);
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

int64_t offset(const Shape& idx, const Shape& shape) {
  int64_t o = 0;
  for (size_t d = 0; d < shape.size(); ++d) o = o * shape[d] + idx[d];
  return o;
}

TEST_CASE("gemm_f32 matches a naive product across block edges", "[ops][nn][gemm]") {
  struct Dims {
    int64_t m, n, k;
  };
  const Dims dims[] = {{1, 1, 1},     {3, 5, 7},     {4, 16, 9},   {5, 17, 300}, {33, 70, 257},
                       {130, 40, 20}, {1, 100, 513}, {3, 3100, 5}, {7, 1, 64}};
  uint64_t seed = 1;
  for (const Dims& d : dims) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (float beta : {0.f, 1.f, -2.f}) {
          INFO(d.m << "x" << d.n << "x" << d.k << " transA=" << ta << " transB=" << tb
                   << " beta=" << beta);
          const float alpha = 0.5f;
          const Tensor a = grid(ta ? Shape{d.k, d.m} : Shape{d.m, d.k}, seed++);
          const Tensor b = grid(tb ? Shape{d.n, d.k} : Shape{d.k, d.n}, seed++);
          const int64_t ldc = d.n + 3;  // C rows are padded: the GEMM must not touch the gap
          Tensor c = grid({d.m, ldc}, seed++);
          Tensor expected = c.clone();
          const float* ad = a.data<float>();
          const float* bd = b.data<float>();
          for (int64_t i = 0; i < d.m; ++i)
            for (int64_t j = 0; j < d.n; ++j) {
              double s = 0;
              for (int64_t p = 0; p < d.k; ++p)
                s += double(ta ? ad[p * d.m + i] : ad[i * d.k + p]) *
                     double(tb ? bd[j * d.k + p] : bd[p * d.n + j]);
              float& e = expected.data<float>()[i * ldc + j];
              e = static_cast<float>(alpha * s + (beta == 0.f ? 0.0 : beta * double(e)));
            }
          ops::gemm_f32(d.m, d.n, d.k, alpha, {ad, ta ? d.m : d.k, ta != 0},
                        {bd, tb ? d.k : d.n, tb != 0}, beta, c.data<float>(), ldc);
          check_equal(c, expected);
        }
      }
    }
  }
}

TEST_CASE("gemm_f32 with beta 0 ignores NaNs already in C", "[ops][nn][gemm]") {
  const float a[] = {1, 2}, b[] = {3, 4};
  float c[] = {NAN, NAN, NAN, NAN};
  ops::gemm_f32(2, 2, 1, 1.f, {a, 1, false}, {b, 2, false}, 0.f, c, 2);
  CHECK(c[0] == 3);
  CHECK(c[3] == 8);
}

// Attributes left out keep their ONNX defaults.
struct ConvSpec {
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides = {}, dilations = {}, pads = {}, output_padding = {},
                       output_shape = {};
  std::string auto_pad = "NOTSET";
};

// Per-axis stride, dilation, begin pad and output size, from the ONNX formulas.
struct Geometry {
  Shape stride, dilation, pad, out;
};

Geometry conv_geometry(const ConvSpec& c) {
  const size_t r = c.x.size() - 2;
  Geometry g{Shape(r, 1), Shape(r, 1), Shape(r, 0), Shape(r, 0)};
  for (size_t d = 0; d < r; ++d) {
    if (!c.strides.empty()) g.stride[d] = c.strides[d];
    if (!c.dilations.empty()) g.dilation[d] = c.dilations[d];
    const int64_t in = c.x[d + 2], ext = (c.w[d + 2] - 1) * g.dilation[d] + 1;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      g.out[d] = (in + g.stride[d] - 1) / g.stride[d];
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * g.stride[d] + ext - in);
      g.pad[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
    } else {
      const int64_t pb = c.pads.empty() ? 0 : c.pads[d], pe = c.pads.empty() ? 0 : c.pads[d + r];
      g.pad[d] = pb;
      g.out[d] = (in + pb + pe - ext) / g.stride[d] + 1;
    }
  }
  return g;
}

Geometry conv_transpose_geometry(const ConvSpec& c) {
  const size_t r = c.x.size() - 2;
  Geometry g{Shape(r, 1), Shape(r, 1), Shape(r, 0), Shape(r, 0)};
  for (size_t d = 0; d < r; ++d) {
    if (!c.strides.empty()) g.stride[d] = c.strides[d];
    if (!c.dilations.empty()) g.dilation[d] = c.dilations[d];
    const int64_t op = c.output_padding.empty() ? 0 : c.output_padding[d];
    const int64_t full = g.stride[d] * (c.x[d + 2] - 1) + op + (c.w[d + 2] - 1) * g.dilation[d] + 1;
    if (!c.output_shape.empty() || c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      g.out[d] = c.output_shape.empty() ? c.x[d + 2] * g.stride[d] : c.output_shape[d];
      const int64_t total = std::max<int64_t>(0, full - g.out[d]);
      g.pad[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      const int64_t pb = c.pads.empty() ? 0 : c.pads[d], pe = c.pads.empty() ? 0 : c.pads[d + r];
      g.pad[d] = pb;
      g.out[d] = full - pb - pe;
    }
  }
  return g;
}

// Calls f(x_index, w_index, y_index) for every (input, kernel tap, output) triple of a
// convolution: Conv sums over them, ConvTranspose scatters along them.
template <typename F>
void for_each_tap(const Shape& y_shape, const Shape& x_shape, const Shape& w_shape, int64_t group,
                  const Geometry& g, bool transpose, F&& f) {
  const size_t r = x_shape.size() - 2;
  const Shape kernel(w_shape.begin() + 2, w_shape.end());
  const int64_t cg = x_shape[1] / group, mg = y_shape[1] / group;
  const Shape& outer = transpose ? x_shape : y_shape;  // the side indexed by the window start
  for (int64_t flat = 0; flat < shape_numel(outer); ++flat) {
    const Shape o = unravel(flat, outer);
    const int64_t gi = o[1] / (transpose ? cg : mg);
    for (int64_t inner = 0; inner < (transpose ? mg : cg); ++inner) {
      for (int64_t kk = 0; kk < shape_numel(kernel); ++kk) {
        const Shape k = unravel(kk, kernel);
        Shape other = o;  // the input index for Conv, the output index for ConvTranspose
        other[1] = gi * (transpose ? mg : cg) + inner;
        const Shape& other_shape = transpose ? y_shape : x_shape;
        bool inside = true;
        for (size_t d = 0; d < r; ++d) {
          other[d + 2] = o[d + 2] * g.stride[d] - g.pad[d] + k[d] * g.dilation[d];
          inside = inside && other[d + 2] >= 0 && other[d + 2] < other_shape[d + 2];
        }
        if (!inside) continue;
        Shape widx = {o[1], inner};  // W is M x C/group x kernel, or C x M/group x kernel
        widx.insert(widx.end(), k.begin(), k.end());
        const int64_t wi = offset(widx, w_shape);
        if (transpose) {
          f(offset(o, x_shape), wi, offset(other, y_shape));
        } else {
          f(offset(other, x_shape), wi, offset(o, y_shape));
        }
      }
    }
  }
}

Tensor naive(const ConvSpec& c, const Tensor& x, const Tensor& w, const Tensor& b, bool transpose) {
  const Geometry g = transpose ? conv_transpose_geometry(c) : conv_geometry(c);
  const int64_t filters = transpose ? c.w[1] * c.group : c.w[0];
  Shape y_shape = {c.x[0], filters};
  y_shape.insert(y_shape.end(), g.out.begin(), g.out.end());
  Tensor y(DType::f32, y_shape);
  const int64_t plane = shape_numel(g.out);
  for (int64_t i = 0; i < y.numel(); ++i)
    y.data<float>()[i] = b.data<float>()[(i / plane) % filters];
  for_each_tap(y_shape, c.x, c.w, c.group, g, transpose, [&](int64_t xi, int64_t wi, int64_t yi) {
    y.data<float>()[yi] += x.data<float>()[xi] * w.data<float>()[wi];
  });
  return y;
}

void check_conv(const ConvSpec& c, bool transpose, uint64_t seed) {
  const Tensor x = grid(c.x, seed), w = grid(c.w, seed + 1);
  const Tensor b = grid({transpose ? c.w[1] * c.group : c.w[0]}, seed + 2);
  std::shared_ptr<const OpAttrs> attrs;
  if (transpose) {
    attrs = make_attrs<ConvTransposeAttrs>([&](auto& a) {
      a.group = c.group, a.strides = c.strides, a.dilations = c.dilations, a.pads = c.pads;
      a.auto_pad = c.auto_pad, a.output_padding = c.output_padding;
      a.output_shape = c.output_shape;
    });
  } else {
    attrs = make_attrs<ConvAttrs>([&](auto& a) {
      a.group = c.group, a.strides = c.strides, a.dilations = c.dilations, a.pads = c.pads;
      a.auto_pad = c.auto_pad;
    });
  }
  const OpDef* op = ctx().ops().find(transpose ? "ConvTranspose" : "Conv");
  auto r = evaluate_op(*op, *attrs, {x, w, b}, "conv");
  INFO(r.status().message());
  REQUIRE(r.ok());
  check_equal(r->front(), naive(c, x, w, b, transpose));
}

TEST_CASE("Conv matches direct convolution", "[ops][nn]") {
  const ConvSpec specs[] = {
      {.x = {1, 3, 7, 9}, .w = {4, 3, 3, 3}},
      {.x = {2, 4, 8, 7}, .w = {6, 2, 3, 2}, .group = 2, .strides = {2, 1}, .pads = {1, 0, 0, 2}},
      // Dilated SAME padding with an odd total pad on every axis.
      {.x = {1, 3, 8, 9},
       .w = {2, 3, 3, 2},
       .strides = {2, 1},
       .dilations = {2, 3},
       .auto_pad = "SAME_UPPER"},
      {.x = {1, 2, 8, 7}, .w = {3, 2, 4, 2}, .dilations = {1, 3}, .auto_pad = "SAME_LOWER"},
      {.x = {1, 6, 10},
       .w = {6, 1, 5},
       .group = 6,
       .strides = {3},
       .dilations = {2},
       .pads = {4, 3}},
      {.x = {1, 2, 5, 6, 7},
       .w = {4, 1, 3, 2, 3},
       .group = 2,
       .strides = {1, 2, 2},
       .dilations = {1, 1, 2},
       .pads = {1, 0, 1, 1, 1, 0}},
      {.x = {1, 8, 6, 6}, .w = {4, 8, 1, 1}},
      {.x = {1, 64, 9, 9}, .w = {70, 64, 3, 3}, .pads = {1, 1, 1, 1}},
      {.x = {2, 3, 4, 4}, .w = {5, 3, 4, 4}, .auto_pad = "VALID"},
      {.x = {1, 1, 3, 3}, .w = {1, 1, 5, 5}, .pads = {2, 2, 2, 2}},
  };
  uint64_t seed = 100;
  for (const ConvSpec& c : specs) {
    INFO("X " << shape_to_string(c.x) << " W " << shape_to_string(c.w) << " " << c.auto_pad);
    check_conv(c, /*transpose=*/false, seed += 3);
  }
}

TEST_CASE("ConvTranspose matches direct scattering", "[ops][nn]") {
  const ConvSpec specs[] = {
      {.x = {1, 3, 5, 6},
       .w = {3, 2, 3, 3},
       .strides = {2, 2},
       .pads = {1, 0, 2, 1},
       .output_padding = {1, 0}},
      {.x = {1, 4, 4, 5}, .w = {4, 3, 3, 2}, .group = 2, .strides = {1, 3}, .dilations = {2, 1}},
      {.x = {2, 2, 3, 4}, .w = {2, 3, 4, 4}, .strides = {2, 2}, .auto_pad = "SAME_UPPER"},
      {.x = {1, 2, 4, 3}, .w = {2, 2, 3, 2}, .strides = {3, 2}, .auto_pad = "SAME_LOWER"},
      {.x = {1, 2, 4, 4}, .w = {2, 2, 3, 3}, .strides = {2, 2}, .output_shape = {9, 8}},
      {.x = {1, 3, 7}, .w = {3, 2, 4}, .strides = {3}, .dilations = {2}, .pads = {2, 1}},
      {.x = {1, 2, 3, 3, 2}, .w = {2, 2, 2, 3, 2}, .strides = {2, 1, 2}},
      {.x = {1, 40, 6, 5}, .w = {40, 30, 3, 3}, .strides = {2, 2}},
  };
  uint64_t seed = 200;
  for (const ConvSpec& c : specs) {
    INFO("X " << shape_to_string(c.x) << " W " << shape_to_string(c.w) << " " << c.auto_pad);
    check_conv(c, /*transpose=*/true, seed += 3);
  }
}

}  // namespace
}  // namespace collage
