// dnnl kernels of elementwise work: eltwise chains (one primitive per function, in place after
// the first) and broadcasting binary operations with post-ops, computed in the output's layout
// (plain or channel-blocked); and the algorithm mapping.
#include <string>
#include <tuple>
#include <utility>

#include "dnnl_kernel.h"

namespace collage::rt_dnnl {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

}  // namespace

dnnl::algorithm eltwise_algorithm(EltwiseAlg alg) {
  using A = dnnl::algorithm;
  switch (alg) {
    case EltwiseAlg::relu:
      return A::eltwise_relu;
    case EltwiseAlg::tanh:
      return A::eltwise_tanh;
    case EltwiseAlg::logistic:
      return A::eltwise_logistic;
    case EltwiseAlg::gelu_erf:
      return A::eltwise_gelu_erf;
    case EltwiseAlg::gelu_tanh:
      return A::eltwise_gelu_tanh;
    case EltwiseAlg::clip:
      return A::eltwise_clip;
    case EltwiseAlg::hardswish:
      return A::eltwise_hardswish;
    case EltwiseAlg::exp:
      return A::eltwise_exp;
    case EltwiseAlg::abs:
      return A::eltwise_abs;
    case EltwiseAlg::sqrt:
      return A::eltwise_sqrt;
    case EltwiseAlg::log:
      return A::eltwise_log;
    case EltwiseAlg::linear:
      return A::eltwise_linear;
    case EltwiseAlg::pow:
      return A::eltwise_pow;
  }
  throw ParamError("unknown eltwise algorithm " + std::to_string(static_cast<uint32_t>(alg)));
}

dnnl::algorithm binary_algorithm(BinaryAlg alg) {
  using A = dnnl::algorithm;
  switch (alg) {
    case BinaryAlg::add:
      return A::binary_add;
    case BinaryAlg::sub:
      return A::binary_sub;
    case BinaryAlg::mul:
      return A::binary_mul;
    case BinaryAlg::div:
      return A::binary_div;
  }
  throw ParamError("unknown binary algorithm " + std::to_string(static_cast<uint32_t>(alg)));
}

void build_eltwise(DnnlKernel& k, ParamReader& r) {
  EltwiseParams p;
  p.io(r);
  check_reader(r);
  require(!p.ops.empty(), "an eltwise kernel needs at least one function");
  require(p.src.dims == p.dst.dims, "eltwise src and dst must have the same dims");
  // Computed in dst's layout: a src in another (plain or channel-blocked) is reordered first.
  const dnnl::memory::desc dst_md = k.output_md(p.dst);
  k.input_md(p.src);
  const OutputBinding out = k.bind_output(p.dst, dst_md);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const EltwiseOp& op = p.ops[i];
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, eltwise_algorithm(op.alg),
                                  dst_md, op.alpha, op.beta);
    dnnl::eltwise_forward::primitive_desc pd(d, k.attr(), k.engine());
    const BufRef src = i == 0 ? k.bind_input(p.src, dst_md) : out.buf;
    k.add_step(pd, dnnl::eltwise_forward(pd),
               {{DNNL_ARG_SRC, dst_md, src}, {DNNL_ARG_DST, dst_md, out.buf}});
  }
  k.finish_output(out);
}

void build_binary(DnnlKernel& k, ParamReader& r) {
  BinaryParams p;
  p.io(r);
  check_reader(r);
  const dnnl::memory::desc dst_arg = k.output_md(p.dst);
  k.input_md(p.src0);
  const dnnl::memory::desc src1_own = k.input_md(p.src1);
  require(p.src0.dims == p.dst.dims, "binary src0 must have dst's dims");
  require(p.src1.dims.size() == p.dst.dims.size(), "binary src1 must have dst's rank");
  for (size_t d = 0; d < p.dst.dims.size(); ++d)
    require(p.src1.dims[d] == p.dst.dims[d] || p.src1.dims[d] == 1,
            "binary src1 must broadcast to dst");
  const PostOpPlan plan = k.plan_post_ops(p.post_ops, p.dst.dims, /*allow_sum=*/false);
  // The operands of dst's dims are read in the layout the primitive computes in (reordered first
  // when in another): dst's. A broadcast src1 stays as it is, but beside a channel-blocked dst
  // one of all its channels takes the same block (for a per-channel scale a copy): oneDNN 2.x
  // has no fast kernel for a blocked src0 with a plain src1.
  auto layout_for = [&](const dnnl::memory::desc& dst) {
    const int64_t block = dst == dst_arg ? p.dst.c_block : 0;
    const bool per_channel = block != 0 && p.src1.dims.size() >= 3 &&
                             p.src1.dims[1] == p.dst.dims[1] && p.src1.dims != p.dst.dims;
    return std::pair{dst, p.src1.dims == p.dst.dims ? dst
                          : per_channel ? blocked_md(p.src1.dims, src1_own.data_type(), block)
                                        : src1_own};
  };
  auto [dst_md, src1_md] = layout_for(dst_arg);
  dnnl::binary::primitive_desc pd(
      dnnl::binary::desc(binary_algorithm(p.alg), dst_md, src1_md, dst_md), k.attr(&plan),
      k.engine());
  if (p.dst.c_block != 0 && std::string(pd.impl_info_str()).rfind("ref", 0) == 0) {
    // No fast kernel for this block here (an AVX2 target's 8 on an AVX-512 machine): computed
    // plain, between reorders.
    std::tie(dst_md, src1_md) = layout_for(plain_md(p.dst.dims, dst_arg.data_type()));
    pd = dnnl::binary::primitive_desc(
        dnnl::binary::desc(binary_algorithm(p.alg), dst_md, src1_md, dst_md), k.attr(&plan),
        k.engine());
  }
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC_0, dst_md, k.bind_input(p.src0, dst_md)});
  args.push_back({DNNL_ARG_SRC_1, src1_md, k.bind_input(p.src1, src1_md)});
  const OutputBinding out = k.bind_output(p.dst, dst_md);
  args.push_back({DNNL_ARG_DST, dst_md, out.buf});
  k.bind_post_ops(plan, out, args);
  k.add_step(pd, dnnl::binary(pd), std::move(args));
  k.finish_output(out);
}

}  // namespace collage::rt_dnnl
