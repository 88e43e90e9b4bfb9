// dnnl kernel of the deformable convolution: a host step (OpenMP over batch, channels and taps)
// gathers each tap's bilinear samples, times the mask, into columns, and one batched oneDNN
// matmul contracts every group's weights with its columns, adding the bias.
#include <cmath>

#include "dnnl_kernel.h"
#include "dnnl_params_deform.h"

namespace collage::rt_dnnl {
namespace {

using Dims = std::vector<int64_t>;

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

struct Geometry {
  int64_t n, c, h, w, m, kh, kw, oh, ow, groups, offset_groups;
  int64_t stride[2], dilation[2], pad[2];
};

// X's plane sampled at (y, x) with bilinear weights; taps outside the plane count as zero.
inline float bilinear(const float* plane, int64_t h, int64_t w, float y, float x) {
  if (!(y > -1.f && y < static_cast<float>(h) && x > -1.f && x < static_cast<float>(w))) return 0.f;
  const float y0 = std::floor(y), x0 = std::floor(x);
  const float dy = y - y0, dx = x - x0;
  const auto iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
  auto at = [&](int64_t r, int64_t c) {
    return r >= 0 && r < h && c >= 0 && c < w ? plane[r * w + c] : 0.f;
  };
  return (1 - dy) * ((1 - dx) * at(iy, ix) + dx * at(iy, ix + 1)) +
         dy * ((1 - dx) * at(iy + 1, ix) + dx * at(iy + 1, ix + 1));
}

// columns[n][c * K + k][p]: channel c's tap k at output point p, for every batch item.
void gather(const Geometry& g, const float* x, const float* offset, const float* mask,
            float* columns) {
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow, rows = g.c * K;
  const int64_t per_offset_group = g.c / g.offset_groups;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t c = row / K, k = row % K, og = c / per_offset_group;
      const int64_t ki = k / g.kw, kj = k % g.kw;
      const float* plane = x + (n * g.c + c) * g.h * g.w;
      const float* off_y = offset + ((n * g.offset_groups + og) * K * 2 + 2 * k) * P;
      const float* off_x = off_y + P;
      const float* m = mask ? mask + ((n * g.offset_groups + og) * K + k) * P : nullptr;
      float* col = columns + (n * rows + row) * P;
      for (int64_t i = 0; i < g.oh; ++i) {
        const float base_y = static_cast<float>(i * g.stride[0] - g.pad[0] + ki * g.dilation[0]);
        for (int64_t j = 0; j < g.ow; ++j) {
          const int64_t q = i * g.ow + j;
          const float base_x = static_cast<float>(j * g.stride[1] - g.pad[1] + kj * g.dilation[1]);
          const float v = bilinear(plane, g.h, g.w, base_y + off_y[q], base_x + off_x[q]);
          col[q] = m ? v * m[q] : v;
        }
      }
    }
}

}  // namespace

void build_deform_conv(DnnlKernel& k, ParamReader& r) {
  DeformConvParams p;
  p.io(r);
  check_reader(r);
  for (const auto* v : {&p.kernel, &p.strides, &p.dilations, &p.pad_begin})
    require(v->size() == 2, "a deformable convolution has two spatial axes");
  require(p.x.dims.size() == 4 && p.dst.dims.size() == 4,
          "deformable convolution x and dst must be 4-D");
  Geometry g{p.x.dims[0],
             p.x.dims[1],
             p.x.dims[2],
             p.x.dims[3],
             p.dst.dims[1],
             p.kernel[0],
             p.kernel[1],
             p.dst.dims[2],
             p.dst.dims[3],
             p.groups,
             p.offset_groups,
             {p.strides[0], p.strides[1]},
             {p.dilations[0], p.dilations[1]},
             {p.pad_begin[0], p.pad_begin[1]}};
  for (int64_t v : {g.kh, g.kw, g.stride[0], g.stride[1], g.dilation[0], g.dilation[1]})
    require(v >= 1 && v <= (int64_t{1} << 20), "deformable convolution window out of range");
  require(g.groups >= 1 && g.c % g.groups == 0 && g.m % g.groups == 0 && g.offset_groups >= 1 &&
              g.c % g.offset_groups == 0 && p.dst.dims[0] == g.n,
          "deformable convolution groups do not divide the channels");
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow, cpg = g.c / g.groups, mpg = g.m / g.groups;
  require(p.offset.dims == Dims{g.n, 2 * g.offset_groups * K, g.oh, g.ow},
          "deformable convolution offset has the wrong dims");
  require(
      p.mask.kind == SourceKind::none || p.mask.dims == Dims{g.n, g.offset_groups * K, g.oh, g.ow},
      "deformable convolution mask has the wrong dims");
  require(p.weights.dims == Dims{1, g.groups, mpg, cpg * K},
          "deformable convolution weights must be {1, G, M / G, C / G * kh * kw}");
  require(p.bias.kind == SourceKind::none || p.bias.dims == Dims{1, g.groups, mpg, 1},
          "deformable convolution bias must be {1, G, M / G, 1}");
  const dnnl::memory::desc x_md = k.input_md(p.x), off_md = k.input_md(p.offset);
  const dnnl::memory::desc mask_md =
      p.mask.kind == SourceKind::none ? dnnl::memory::desc() : k.input_md(p.mask);
  const dnnl::memory::desc cols_md =
      plain_md({g.n, g.groups, cpg * K, P}, dnnl::memory::data_type::f32);
  const BufRef cols = k.scratch(cols_md);
  std::vector<StepArg> gather_args = {{DNNL_ARG_SRC, x_md, k.bind_input(p.x, x_md)},
                                      {DNNL_ARG_SRC_1, off_md, k.bind_input(p.offset, off_md)},
                                      {DNNL_ARG_DST, cols_md, cols}};
  if (p.mask.kind != SourceKind::none)
    gather_args.push_back({DNNL_ARG_SRC_2, mask_md, k.bind_input(p.mask, mask_md)});
  const bool has_mask = p.mask.kind != SourceKind::none;
  k.add_host_step("host:deform_gather", std::move(gather_args), [g, has_mask](const StepMemory& m) {
    auto data = [&](int arg) { return static_cast<float*>(m.at(arg).get_data_handle()); };
    gather(g, data(DNNL_ARG_SRC), data(DNNL_ARG_SRC_1), has_mask ? data(DNNL_ARG_SRC_2) : nullptr,
           data(DNNL_ARG_DST));
  });

  // dst[n][g] (M/G x P) = weights[g] (M/G x C/G*K) x columns[n][g] (C/G*K x P).
  const dnnl::memory::desc w_md = k.input_md(p.weights);
  const dnnl::memory::desc dst_md = plain_md({g.n, g.groups, mpg, P}, dnnl::memory::data_type::f32);
  require(k.output_md(p.dst).get_size() == dst_md.get_size(),
          "deformable convolution dst has the wrong size");
  dnnl::matmul::desc d(w_md, cols_md, dst_md);
  dnnl::matmul::primitive_desc pd(d, k.attr(), k.engine());
  const BufRef dst{BufRef::Kind::arg, p.dst.index, 0};
  k.add_step(pd, dnnl::matmul(pd),
             {{DNNL_ARG_SRC, w_md, k.bind_input(p.weights, w_md)},
              {DNNL_ARG_WEIGHTS, cols_md, cols},
              {DNNL_ARG_DST, dst_md, dst}});
  if (p.bias.kind == SourceKind::none) return;
  // oneDNN's gemm-based matmul takes a bias along dst's last axis only (one along the rows
  // falls back to its slow reference matmul): the bias is added on the host.
  const dnnl::memory::desc bias_md = k.input_md(p.bias);
  const int64_t rows = g.n * g.m, m = g.m;
  k.add_host_step(
      "host:deform_bias",
      {{DNNL_ARG_BIAS, bias_md, k.bind_input(p.bias, bias_md)}, {DNNL_ARG_DST, dst_md, dst}},
      [rows, m, P](const StepMemory& mem) {
        const auto* b = static_cast<const float*>(mem.at(DNNL_ARG_BIAS).get_data_handle());
        auto* y = static_cast<float*>(mem.at(DNNL_ARG_DST).get_data_handle());
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t q = 0; q < P; ++q) y[r * P + q] += b[r % m];
      });
}

}  // namespace collage::rt_dnnl
