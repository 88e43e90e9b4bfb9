// dnnl kernel of the deformable convolution: a host step plans every tap's bilinear sample once
// per offset group (four plane offsets and weights, the mask folded in), gathers each channel's
// samples into columns with it (OpenMP over batch, channels and taps), and one batched oneDNN
// matmul contracts every group's weights with its columns; the bias is added afterwards.
#include <cmath>
#include <cstdint>

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

// One tap's bilinear sample at one output point: four plane offsets and their weights (the mask
// folded in; zero for corners outside the plane, whose offset is then 0).
struct Sample {
  int32_t at[4];
  float weight[4];
};

// The taps' samples, shared by every channel of an offset group: table[(n * OG + og) * K + k][p].
void plan_samples(const Geometry& g, const float* offset, const float* mask, Sample* table) {
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < g.n * g.offset_groups * K; ++t) {
    const int64_t k = t % K, ki = k / g.kw, kj = k % g.kw;
    const float* off_y = offset + ((t / K) * K * 2 + 2 * k) * P;
    const float* off_x = off_y + P;
    const float* m = mask ? mask + t * P : nullptr;
    Sample* row = table + t * P;
    for (int64_t i = 0; i < g.oh; ++i) {
      const float base_y = static_cast<float>(i * g.stride[0] - g.pad[0] + ki * g.dilation[0]);
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t q = i * g.ow + j;
        const float y = base_y + off_y[q];
        const float x =
            static_cast<float>(j * g.stride[1] - g.pad[1] + kj * g.dilation[1]) + off_x[q];
        Sample& s = row[q];
        s = Sample{{0, 0, 0, 0}, {0.f, 0.f, 0.f, 0.f}};
        if (!(y > -1.f && y < static_cast<float>(g.h) && x > -1.f && x < static_cast<float>(g.w)))
          continue;
        const float y0 = std::floor(y), x0 = std::floor(x);
        const float dy = y - y0, dx = x - x0, scale = m ? m[q] : 1.f;
        const auto iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
        const float w[4] = {(1 - dy) * (1 - dx), (1 - dy) * dx, dy * (1 - dx), dy * dx};
        for (int c = 0; c < 4; ++c) {
          const int64_t r = iy + c / 2, col = ix + c % 2;
          if (r < 0 || r >= g.h || col < 0 || col >= g.w) continue;
          s.at[c] = static_cast<int32_t>(r * g.w + col);
          s.weight[c] = w[c] * scale;
        }
      }
    }
  }
}

// columns[n][c * K + k][p]: channel c's tap k at output point p, for every batch item.
void gather(const Geometry& g, const float* x, const Sample* table, float* columns) {
  const int64_t K = g.kh * g.kw, P = g.oh * g.ow, rows = g.c * K;
  const int64_t per_offset_group = g.c / g.offset_groups;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t row = 0; row < rows; ++row) {
      const int64_t c = row / K, k = row % K, og = c / per_offset_group;
      const float* plane = x + (n * g.c + c) * g.h * g.w;
      const Sample* samples = table + ((n * g.offset_groups + og) * K + k) * P;
      float* col = columns + (n * rows + row) * P;
      for (int64_t q = 0; q < P; ++q) {
        const Sample& s = samples[q];
        col[q] = s.weight[0] * plane[s.at[0]] + s.weight[1] * plane[s.at[1]] +
                 s.weight[2] * plane[s.at[2]] + s.weight[3] * plane[s.at[3]];
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
  // The sample table, as bytes (Sample is 32 bytes).
  const int64_t samples = g.n * g.offset_groups * K * P;
  require(g.h * g.w <= INT32_MAX, "deformable convolution input plane too large");
  const dnnl::memory::desc table_md =
      plain_md({samples * static_cast<int64_t>(sizeof(Sample))}, dnnl::memory::data_type::u8);
  std::vector<StepArg> gather_args = {{DNNL_ARG_SRC, x_md, k.bind_input(p.x, x_md)},
                                      {DNNL_ARG_SRC_1, off_md, k.bind_input(p.offset, off_md)},
                                      {DNNL_ARG_DST, cols_md, cols},
                                      {DNNL_ARG_WORKSPACE, table_md, k.scratch(table_md)}};
  if (p.mask.kind != SourceKind::none)
    gather_args.push_back({DNNL_ARG_SRC_2, mask_md, k.bind_input(p.mask, mask_md)});
  const bool has_mask = p.mask.kind != SourceKind::none;
  k.add_host_step("host:deform_gather", std::move(gather_args), [g, has_mask](const StepMemory& m) {
    auto data = [&](int arg) { return m.at(arg).get_data_handle(); };
    auto* table = static_cast<Sample*>(data(DNNL_ARG_WORKSPACE));
    plan_samples(g, static_cast<const float*>(data(DNNL_ARG_SRC_1)),
                 has_mask ? static_cast<const float*>(data(DNNL_ARG_SRC_2)) : nullptr, table);
    gather(g, static_cast<const float*>(data(DNNL_ARG_SRC)), table,
           static_cast<float*>(data(DNNL_ARG_DST)));
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
