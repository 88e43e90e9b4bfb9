// The 8-bit integer contractions' oneDNN attributes: operand types, output scales, the src and
// weights zero points, and the requantisation of an 8-bit dst exactly as the reference does it:
// for a convolution as post-ops (round half to even, then add the dst zero point; oneDNN's own
// dst zero point is added before rounding), for a matmul on the host in f64 after oneDNN's i32
// sums (the reference multiplies in f64, oneDNN's output scale in f32).
#include <algorithm>

#include "dnnl_kernel.h"
#include "dnnl_module.h"

namespace collage::rt_dnnl {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

}  // namespace

QuantTypes quant_types(const DnnlKernel& k, const Operand& src, const Operand& weights,
                       const Operand& bias, const Operand& dst) {
  QuantTypes t;
  t.src = k.source_dtype(src);
  t.weights = k.source_dtype(weights);
  t.dst = k.source_dtype(dst);
  require(t.src == COLLAGE_DTYPE_U8 || t.src == COLLAGE_DTYPE_I8,
          "an integer contraction's src must be u8 or i8");
  require(t.weights == COLLAGE_DTYPE_I8, "an integer contraction's weights must be i8");
  require(t.dst == COLLAGE_DTYPE_U8 || t.dst == COLLAGE_DTYPE_I8 || t.dst == COLLAGE_DTYPE_I32,
          "an integer contraction's dst must be u8, i8 or i32");
  if (bias.kind != SourceKind::none) {
    t.bias = k.source_dtype(bias);
    require(t.bias == COLLAGE_DTYPE_I32, "an integer contraction's bias must be i32");
  }
  return t;
}

PostOpPlan quant_post_ops(const QuantParams& q, int32_t dst_dtype) {
  PostOpPlan plan;
  if (dst_dtype == COLLAGE_DTYPE_I32) return plan;
  plan.ops.append_eltwise(1.f, dnnl::algorithm::eltwise_round, 0.f, 0.f);
  if (q.dst_zero_point != 0)
    plan.ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, 1.f,
                            static_cast<float>(q.dst_zero_point));
  return plan;
}

void set_quant_attr(dnnl::primitive_attr& attr, const QuantParams& q,
                    const std::vector<int64_t>& dst_dims, int channel_axis) {
  require(channel_axis >= 0 && static_cast<size_t>(channel_axis) < dst_dims.size(),
          "bad channel axis");
  require(q.src_zero_point >= -128 && q.src_zero_point <= 255, "src zero point out of range");
  require(q.dst_zero_point >= -128 && q.dst_zero_point <= 255, "dst zero point out of range");
  const size_t n = q.scales.size();
  require(n == 0 || n == 1 || static_cast<int64_t>(n) == dst_dims[channel_axis],
          "integer contraction scales: " + std::to_string(n) + " values for " +
              std::to_string(dst_dims[channel_axis]) + " output channels");
  if (n > 0) attr.set_output_scales(n == 1 ? 0 : 1 << channel_axis, q.scales);
  require(q.weights_zero_point >= -128 && q.weights_zero_point <= 127,
          "weights zero point out of range");
  if (q.src_zero_point != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {q.src_zero_point});
  if (q.weights_zero_point != 0)
    attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {q.weights_zero_point});
}

void add_requantized_matmul(DnnlKernel& k, const MatMulParams& p, const QuantParams& q) {
  const QuantTypes types = quant_types(k, p.a, p.b, p.bias, p.dst);
  require(types.dst != COLLAGE_DTYPE_I32 && p.bias.kind == SourceKind::none,
          "a requantised matmul has an 8-bit dst and no bias");
  const dnnl::memory::desc a_md = k.input_md(p.a, types.src),
                           b_md = k.input_md(p.b, types.weights),
                           dst_md = k.output_md(p.dst, types.dst);
  const size_t rank = p.dst.dims.size();
  require(rank >= 2 && p.a.dims.size() == rank && p.b.dims.size() == rank,
          "matmul operands and dst must have the same rank, at least 2");
  const int64_t n = p.dst.dims.back();
  require(q.scales.size() == 1 || static_cast<int64_t>(q.scales.size()) == n,
          "a requantised matmul needs one scale or one per column");
  QuantParams zero_points = q;
  zero_points.scales.clear();
  dnnl::primitive_attr attr = k.attr();
  set_quant_attr(attr, zero_points, p.dst.dims, static_cast<int>(rank) - 1);
  const dnnl::memory::desc acc_md = plain_md(p.dst.dims, dnnl::memory::data_type::s32);
  dnnl::matmul::desc d(a_md, DnnlKernel::any_md(b_md), acc_md);
  dnnl::matmul::primitive_desc pd(d, attr, k.engine());
  const BufRef acc = k.scratch(acc_md);
  k.add_step(pd, dnnl::matmul(pd),
             {{DNNL_ARG_SRC, pd.src_desc(), k.bind_input(p.a, pd.src_desc())},
              {DNNL_ARG_WEIGHTS, pd.weights_desc(), k.bind_input(p.b, pd.weights_desc())},
              {DNNL_ARG_DST, acc_md, acc}});
  int64_t count = 1;
  for (int64_t d : p.dst.dims) count *= d;
  const bool u8 = types.dst == COLLAGE_DTYPE_U8;
  k.add_host_step(
      "host:requantize",
      {{DNNL_ARG_SRC, acc_md, acc}, {DNNL_ARG_DST, dst_md, {BufRef::Kind::arg, p.dst.index, 0}}},
      [scales = q.scales, zp = static_cast<double>(q.dst_zero_point), u8, n,
       count](const StepMemory& m) {
        const auto* sums = static_cast<const int32_t*>(m.at(DNNL_ARG_SRC).get_data_handle());
        void* dst = m.at(DNNL_ARG_DST).get_data_handle();
        const double lo = u8 ? 0.0 : -128.0, hi = u8 ? 255.0 : 127.0;
        const bool one = scales.size() == 1;
        // Adding and subtracting 1.5 * 2^52 rounds a double of magnitude below 2^51 to the
        // nearest integer, halves to even, as nearbyint does in the default rounding mode, but
        // in a form the loop vectorises (the baseline x86-64 target has no rounding instruction);
        // clamping first keeps the magnitude small.
        constexpr double kRound = 6755399441055744.0;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < count; ++i) {
          const double scale = scales[one ? 0 : static_cast<size_t>(i % n)];
          const double x =
              std::clamp(static_cast<double>(sums[i]) * scale + zp, lo - 1.0, hi + 1.0);
          const double v = std::clamp((x + kRound) - kRound, lo, hi);
          if (u8)
            static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(v);
          else
            static_cast<int8_t*>(dst)[i] = static_cast<int8_t>(v);
        }
      });
}

bool int8_sums_exact(std::string* isa) {
  struct Known {
    dnnl::cpu_isa isa;
    const char* name;
    bool vnni;
  };
  static constexpr Known kKnown[] = {
      {dnnl::cpu_isa::avx2_vnni, "avx2_vnni", true},
      {dnnl::cpu_isa::avx512_core_vnni, "avx512_core_vnni", true},
      {dnnl::cpu_isa::avx512_core_bf16, "avx512_core_bf16", true},
      {dnnl::cpu_isa::avx512_core_amx, "avx512_core_amx", true},
      {dnnl::cpu_isa::avx512_core, "avx512_core", false},
      {dnnl::cpu_isa::avx2, "avx2", false},
  };
  const dnnl::cpu_isa effective = dnnl::get_effective_cpu_isa();
  for (const Known& k : kKnown)
    if (k.isa == effective) {
      if (isa) *isa = k.name;
      return k.vnni;
    }
  if (isa) *isa = "below avx2";
  return false;
}

}  // namespace collage::rt_dnnl
