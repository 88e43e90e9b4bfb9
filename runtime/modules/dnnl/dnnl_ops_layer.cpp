// dnnl kernels of the remaining layers: pooling, softmax / log-softmax, layer normalisation and
// concatenation, all on plain row-major activations.
#include "dnnl_kernel.h"

namespace collage::rt_dnnl {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

dnnl::memory::dims window_list(const std::vector<int64_t>& v, size_t n, const char* name,
                               int64_t min) {
  require(v.size() == n, std::string(name) + " must have one value per spatial axis");
  for (int64_t x : v)
    require(x >= min && x <= (int64_t{1} << 30), std::string(name) + " value out of range");
  return v;
}

}  // namespace

void build_pool(DnnlKernel& k, ParamReader& r) {
  PoolParams p;
  p.io(r);
  check_reader(r);
  const dnnl::memory::desc src_md = k.input_md(p.src), dst_md = k.output_md(p.dst);
  const size_t rank = p.src.dims.size();
  require(rank >= 3 && rank <= 5 && p.dst.dims.size() == rank,
          "pooling src and dst must have rank 3 to 5");
  const size_t sp = rank - 2;
  dnnl::algorithm alg;
  switch (p.alg) {
    case PoolAlg::max:
      alg = dnnl::algorithm::pooling_max;
      break;
    case PoolAlg::avg_include_pad:
      alg = dnnl::algorithm::pooling_avg_include_padding;
      break;
    case PoolAlg::avg_exclude_pad:
      alg = dnnl::algorithm::pooling_avg_exclude_padding;
      break;
    default:
      throw ParamError("unknown pooling algorithm");
  }
  dnnl::memory::dims dilation = window_list(p.dilations, sp, "dilations", 1);
  for (auto& d : dilation) d -= 1;
  // A dst in another layout than src's (plain or channel-blocked) is written in the layout the
  // primitive picks for src and reordered.
  dnnl::pooling_v2_forward::desc d(
      dnnl::prop_kind::forward_inference, alg, src_md,
      p.src.c_block == p.dst.c_block ? dst_md : DnnlKernel::any_md(dst_md),
      window_list(p.strides, sp, "strides", 1), window_list(p.kernel, sp, "kernel", 1), dilation,
      window_list(p.pad_begin, sp, "pad_begin", 0), window_list(p.pad_end, sp, "pad_end", 0));
  dnnl::pooling_v2_forward::primitive_desc pd(d, k.attr(), k.engine());
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC, src_md, k.bind_input(p.src, src_md)});
  const OutputBinding out = k.bind_output(p.dst, pd.dst_desc());
  args.push_back({DNNL_ARG_DST, pd.dst_desc(), out.buf});
  const dnnl::memory::desc ws = pd.workspace_desc();
  if (ws.get_size() > 0) args.push_back({DNNL_ARG_WORKSPACE, ws, k.scratch(ws)});
  k.add_step(pd, dnnl::pooling_v2_forward(pd), std::move(args));
  k.finish_output(out);
}

void build_softmax(DnnlKernel& k, ParamReader& r) {
  SoftmaxParams p;
  p.io(r);
  check_reader(r);
  const dnnl::memory::desc src_md = k.input_md(p.src), dst_md = k.output_md(p.dst);
  require(p.src.dims == p.dst.dims, "softmax src and dst must have the same dims");
  require(p.axis >= 0 && static_cast<size_t>(p.axis) < p.src.dims.size(),
          "softmax axis out of range");
  require(p.log <= 1, "softmax log flag must be 0 or 1");
  dnnl::softmax_v2_forward::desc d(
      dnnl::prop_kind::forward_inference,
      p.log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate, src_md, dst_md,
      p.axis);
  dnnl::softmax_v2_forward::primitive_desc pd(d, k.attr(), k.engine());
  const OutputBinding out = k.bind_output(p.dst, dst_md);
  k.add_step(
      pd, dnnl::softmax_v2_forward(pd),
      {{DNNL_ARG_SRC, src_md, k.bind_input(p.src, src_md)}, {DNNL_ARG_DST, dst_md, out.buf}});
  k.finish_output(out);
}

void build_layer_norm(DnnlKernel& k, ParamReader& r) {
  LayerNormParams p;
  p.io(r);
  check_reader(r);
  const dnnl::memory::desc src_md = k.input_md(p.src);
  require(p.src.dims == p.dst.dims && p.src.dims.size() >= 2,
          "layer norm src and dst must have the same dims, rank >= 2");
  const std::vector<int64_t> channels = {p.src.dims.back()};
  require(p.scale.kind != SourceKind::none && p.scale.dims == channels,
          "layer norm scale must have one value per normalised element");
  const dnnl::memory::desc scale_md = k.input_md(p.scale);
  dnnl::normalization_flags flags = dnnl::normalization_flags::use_scale;
  dnnl::memory::desc shift_md;
  if (p.shift.kind != SourceKind::none) {
    require(p.shift.dims == channels, "layer norm shift must match the scale");
    shift_md = k.input_md(p.shift);
    flags = flags | dnnl::normalization_flags::use_shift;
  }
  require(p.epsilon >= 0.f, "layer norm epsilon must be >= 0");
  dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, src_md, p.epsilon,
                                            flags);
  dnnl::layer_normalization_forward::primitive_desc pd(d, k.attr(), k.engine());
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC, src_md, k.bind_input(p.src, src_md)});
  args.push_back({DNNL_ARG_SCALE, scale_md, k.bind_input(p.scale, scale_md)});
  if (p.shift.kind != SourceKind::none)
    args.push_back({DNNL_ARG_SHIFT, shift_md, k.bind_input(p.shift, shift_md)});
  // Statistics are computed on the fly; oneDNN still wants somewhere to put them.
  for (int stat : {DNNL_ARG_MEAN, DNNL_ARG_VARIANCE}) {
    const dnnl::memory::desc md = pd.query_md(dnnl::query::exec_arg_md, stat);
    if (md.get_size() > 0) args.push_back({stat, md, k.scratch(md)});
  }
  const OutputBinding out = k.bind_output(p.dst, pd.dst_desc());
  args.push_back({DNNL_ARG_DST, pd.dst_desc(), out.buf});
  k.add_step(pd, dnnl::layer_normalization_forward(pd), std::move(args));
  k.finish_output(out);
}

void build_concat(DnnlKernel& k, ParamReader& r) {
  ConcatParams p;
  p.io(r);
  check_reader(r);
  require(!p.srcs.empty(), "concat needs at least one input");
  require(p.dst.kind == SourceKind::arg, "concat dst must be an argument");
  const int32_t dtype = p.dtype;
  dnnl_type(dtype);  // one oneDNN has
  const size_t rank = p.dst.dims.size();
  require(p.axis >= 0 && static_cast<size_t>(p.axis) < rank, "concat axis out of range");
  std::vector<dnnl::memory::desc> src_mds;
  for (const Operand& s : p.srcs) {
    require(s.dims.size() == rank, "concat inputs must have dst's rank");
    src_mds.push_back(k.input_md(s, dtype));
  }
  const dnnl::memory::desc dst_md = k.output_md(p.dst, dtype);
  dnnl::concat::primitive_desc pd(dst_md, p.axis, src_mds, k.engine(), k.attr());
  std::vector<StepArg> args;
  for (size_t i = 0; i < p.srcs.size(); ++i)
    args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), src_mds[i],
                    k.bind_input(p.srcs[i], src_mds[i])});
  const OutputBinding out = k.bind_output(p.dst, dst_md);
  args.push_back({DNNL_ARG_DST, dst_md, out.buf});
  k.add_step(pd, dnnl::concat(pd), std::move(args));
  k.finish_output(out);
}

}  // namespace collage::rt_dnnl
