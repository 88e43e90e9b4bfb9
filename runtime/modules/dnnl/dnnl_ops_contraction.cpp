// dnnl kernels of the contractions: convolution, deconvolution (ConvTranspose) and matmul, each
// with bias and post-ops, and their 8-bit integer forms (dnnl_ops_quant.cpp has the attributes).
// Weights are constants; the primitive picks their layout (format any). Plain activations are
// reordered in and out when it picks a blocked one; channel-blocked ones are passed as they are.
#include <algorithm>

#include "dnnl_kernel.h"
#include "dnnl_module.h"

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

// An artifact compiled on a machine with VNNI and loaded on one without it: refused, since
// oneDNN's 8-bit kernels would saturate there (int8_sums_exact).
void require_exact_int8_sums() {
  std::string isa;
  require(int8_sums_exact(&isa),
          "8-bit integer contractions need VNNI on this CPU (oneDNN's ISA here: " + isa +
              "): without it oneDNN sums pairs of u8 x s8 products in 16 bits, which saturate");
}

}  // namespace

void build_conv(DnnlKernel& k, ParamReader& r, bool deconv) {
  ConvParams p;
  p.io(r);
  check_reader(r);
  add_conv(k, p, deconv, nullptr);
}

void build_qconv(DnnlKernel& k, ParamReader& r) {
  QConvParams p;
  p.io(r);
  check_reader(r);
  require_exact_int8_sums();
  require(p.conv.post_ops.empty() && p.quant.weights_zero_point == 0,
          "an integer convolution takes no post-ops and no weights zero point");
  add_conv(k, p.conv, false, &p.quant);
}

void add_conv(DnnlKernel& k, const ConvParams& p, bool deconv, const QuantParams* quant) {
  const QuantTypes types = quant ? quant_types(k, p.src, p.weights, p.bias, p.dst) : QuantTypes{};
  const dnnl::memory::desc src_md = k.input_md(p.src, types.src),
                           dst_md = k.output_md(p.dst, types.dst);
  require(p.weights.kind == SourceKind::constant, "convolution weights must be a constant");
  const dnnl::memory::desc w_md = k.input_md(p.weights, types.weights);
  const size_t rank = p.src.dims.size();
  require(rank >= 3 && rank <= 5 && p.dst.dims.size() == rank,
          "convolution src and dst must have rank 3 to 5");
  const size_t sp = rank - 2;
  require(p.groups >= 1 && p.weights.dims.size() == (p.groups > 1 ? rank + 1 : rank) &&
              (p.groups == 1 || p.weights.dims[0] == p.groups),
          "convolution weight dims do not match the group count");
  const dnnl::memory::dims strides = window_list(p.strides, sp, "strides", 1);
  dnnl::memory::dims dilates = window_list(p.dilations, sp, "dilations", 1);
  for (auto& d : dilates) d -= 1;  // oneDNN counts dilation from 0
  const dnnl::memory::dims pad_l = window_list(p.pad_begin, sp, "pad_begin", 0);
  const dnnl::memory::dims pad_r = window_list(p.pad_end, sp, "pad_end", -(int64_t{1} << 30));
  dnnl::memory::desc bias_md;
  if (p.bias.kind != SourceKind::none) {
    bias_md = k.input_md(p.bias, types.bias);
    require(p.bias.dims == std::vector<int64_t>{p.dst.dims[1]},
            "convolution bias must have one value per output channel");
  }
  const PostOpPlan plan = quant ? quant_post_ops(*quant, types.dst)
                                : k.plan_post_ops(p.post_ops, p.dst.dims, /*allow_sum=*/true);
  dnnl::primitive_attr attr = k.attr(&plan);
  if (quant) set_quant_attr(attr, *quant, p.dst.dims, 1);
  // A channel-blocked src or dst is read or written in place in its layout (oneDNN's blocked
  // kernels take nChw16c and nChw8c); other activations are reordered into what oneDNN picks,
  // except that beside a blocked side a plain one whose channels fill whole blocks takes the same
  // block (created with `any` there, oneDNN 2.x picks NHWC for it and its reference kernel).
  auto side_md = [](const Operand& op, const dnnl::memory::desc& md, const Operand& other) {
    if (op.c_block == 0 && other.c_block != 0 && op.dims[1] % other.c_block == 0)
      return blocked_md(op.dims, md.data_type(), other.c_block);
    return DnnlKernel::create_md(op, md);
  };
  const auto src_any = side_md(p.src, src_md, p.dst), w_any = DnnlKernel::any_md(w_md),
             dst_any = side_md(p.dst, dst_md, p.src);
  const auto prop = dnnl::prop_kind::forward_inference;

  dnnl::primitive_desc pd;
  dnnl::primitive prim;
  if (deconv) {
    dnnl::deconvolution_forward::desc d(prop, dnnl::algorithm::deconvolution_direct, src_any, w_any,
                                        bias_md, dst_any, strides, dilates, pad_l, pad_r);
    dnnl::deconvolution_forward::primitive_desc dpd(d, attr, k.engine());
    prim = dnnl::deconvolution_forward(dpd);
    pd = dpd;
  } else {
    dnnl::convolution_forward::desc d(prop, dnnl::algorithm::convolution_direct, src_any, w_any,
                                      bias_md, dst_any, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc cpd(d, attr, k.engine());
    prim = dnnl::convolution_forward(cpd);
    pd = cpd;
  }
  const dnnl::memory::desc src_want = pd.src_desc(), w_want = pd.weights_desc(),
                           dst_want = pd.dst_desc();
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC, src_want, k.bind_input(p.src, src_want)});
  args.push_back({DNNL_ARG_WEIGHTS, w_want, k.bind_input(p.weights, w_want)});
  if (p.bias.kind != SourceKind::none) {
    const dnnl::memory::desc b_want = pd.weights_desc(1);
    args.push_back({DNNL_ARG_BIAS, b_want, k.bind_input(p.bias, b_want)});
  }
  const OutputBinding out = k.bind_output(p.dst, dst_want);
  args.push_back({DNNL_ARG_DST, dst_want, out.buf});
  k.bind_post_ops(plan, out, args);
  k.add_step(pd, prim, std::move(args));
  k.finish_output(out);
}

namespace {

// A matmul primitive and the post-op plan its attributes were made from.
struct MatMulPrimitive {
  dnnl::matmul::primitive_desc pd;
  PostOpPlan plan;
};

// The primitive oneDNN picks for matmul `p` (integer when `quant` is given), before any binding.
MatMulPrimitive matmul_primitive(const DnnlKernel& k, const MatMulParams& p,
                                 const QuantParams* quant) {
  const QuantTypes types = quant ? quant_types(k, p.a, p.b, p.bias, p.dst) : QuantTypes{};
  const dnnl::memory::desc a_md = k.input_md(p.a, types.src), b_md = k.input_md(p.b, types.weights),
                           dst_md = k.output_md(p.dst, types.dst);
  const size_t rank = p.dst.dims.size();
  require(rank >= 2 && p.a.dims.size() == rank && p.b.dims.size() == rank,
          "matmul operands and dst must have the same rank, at least 2");
  dnnl::memory::desc bias_md;
  if (p.bias.kind != SourceKind::none) {
    bias_md = k.input_md(p.bias, types.bias);
    require(p.bias.dims.size() == rank, "matmul bias must have dst's rank");
  }
  // Constant weights are packed in the layout the primitive prefers.
  const dnnl::memory::desc b_create =
      p.b.kind == SourceKind::constant ? DnnlKernel::any_md(b_md) : b_md;
  PostOpPlan plan = quant ? quant_post_ops(*quant, types.dst)
                          : k.plan_post_ops(p.post_ops, p.dst.dims, /*allow_sum=*/true);
  dnnl::primitive_attr attr = k.attr(&plan);
  if (quant) set_quant_attr(attr, *quant, p.dst.dims, static_cast<int>(rank) - 1);
  dnnl::matmul::desc d(a_md, b_create, bias_md, dst_md);
  return {dnnl::matmul::primitive_desc(d, attr, k.engine()), std::move(plan)};
}

// Binds `p`'s operands to the primitive `m` and adds it as the kernel's next step.
void bind_matmul(DnnlKernel& k, const MatMulParams& p, const MatMulPrimitive& m) {
  const dnnl::matmul::primitive_desc& pd = m.pd;
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC, pd.src_desc(), k.bind_input(p.a, pd.src_desc())});
  args.push_back({DNNL_ARG_WEIGHTS, pd.weights_desc(), k.bind_input(p.b, pd.weights_desc())});
  if (p.bias.kind != SourceKind::none)
    args.push_back({DNNL_ARG_BIAS, pd.bias_desc(), k.bind_input(p.bias, pd.bias_desc())});
  const OutputBinding out = k.bind_output(p.dst, pd.dst_desc());
  args.push_back({DNNL_ARG_DST, pd.dst_desc(), out.buf});
  k.bind_post_ops(m.plan, out, args);
  k.add_step(pd, dnnl::matmul(pd), std::move(args));
  k.finish_output(out);
}

// Forms of `p` that compute the same sums, in the order to try. Without AVX-512, oneDNN 2.6's
// only fast f32 matmul (gemm:jit) fuses a sum post-op only as the first one, and any other list
// with a sum runs on its reference matmul, a scalar loop per output element: a transformer's
// projection with its bias and residual adds (binary add, then sum) took seconds per run on
// BERT-base. So a leading add that broadcasts along all but the columns becomes the matmul's bias
// (bit for bit the same), and a sum after nothing but adds moves to the front (the same terms,
// summed in another order).
std::vector<MatMulParams> matmul_forms(const MatMulParams& p) {
  std::vector<MatMulParams> forms{p};
  MatMulParams form = p;
  const size_t rank = p.dst.dims.size();
  if (form.bias.kind == SourceKind::none && !form.post_ops.empty() &&
      form.post_ops[0].kind == PostOpKind::binary && form.post_ops[0].binary == BinaryAlg::add) {
    const Operand& add = form.post_ops[0].operand;
    bool per_column = add.dims.size() == rank && add.dims[rank - 1] == p.dst.dims[rank - 1];
    for (size_t d = 0; per_column && d + 1 < rank; ++d) per_column = add.dims[d] == 1;
    if (per_column) {
      form.bias = add;
      form.post_ops.erase(form.post_ops.begin());
      forms.push_back(form);
    }
  }
  for (size_t i = 1; i < form.post_ops.size(); ++i) {
    const PostOp& op = form.post_ops[i - 1];
    if (op.kind != PostOpKind::binary || op.binary != BinaryAlg::add) break;
    if (form.post_ops[i].kind == PostOpKind::sum) {
      std::rotate(form.post_ops.begin(), form.post_ops.begin() + static_cast<ptrdiff_t>(i),
                  form.post_ops.begin() + static_cast<ptrdiff_t>(i) + 1);
      forms.push_back(form);
      break;
    }
  }
  return forms;
}

}  // namespace

void build_matmul(DnnlKernel& k, ParamReader& r) {
  MatMulParams p;
  p.io(r);
  check_reader(r);
  const std::vector<MatMulParams> forms = matmul_forms(p);
  for (const MatMulParams& form : forms) {
    MatMulPrimitive m = matmul_primitive(k, form, nullptr);
    if (&form == &forms.back() || std::string(m.pd.impl_info_str()).rfind("ref", 0) != 0) {
      bind_matmul(k, form, m);
      return;
    }
  }
}

void build_qmatmul(DnnlKernel& k, ParamReader& r) {
  QMatMulParams p;
  p.io(r);
  check_reader(r);
  require_exact_int8_sums();
  require(p.matmul.post_ops.empty() && p.matmul.bias.kind == SourceKind::none,
          "an integer matmul takes no bias or post-ops");
  require(p.matmul.b.kind == SourceKind::constant, "an integer matmul's b must be a constant");
  if (k.source_dtype(p.matmul.dst) == COLLAGE_DTYPE_I32)
    add_matmul(k, p.matmul, &p.quant);
  else
    add_requantized_matmul(k, p.matmul, p.quant);
}

void add_matmul(DnnlKernel& k, const MatMulParams& p, const QuantParams* quant) {
  bind_matmul(k, p, matmul_primitive(k, p, quant));
}

}  // namespace collage::rt_dnnl
