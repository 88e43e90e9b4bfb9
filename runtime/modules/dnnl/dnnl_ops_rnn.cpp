// dnnl kernel of the recurrent layers: one oneDNN LSTM, GRU, linear-before-reset GRU or vanilla
// RNN primitive, unidirectional or bidirectional. ONNX's tensors are viewed in oneDNN's logical
// orders (tnc sequences, ldnc states) through strides; where a view is not a layout the primitive
// takes (a bidirectional output with the sequence axis first, batch-first states) the value goes
// through scratch and a reorder.
#include <functional>

#include "dnnl_kernel.h"
#include "dnnl_params_rnn.h"
#include "dnnl_rnn_layout.h"

namespace collage::rt_dnnl {
namespace {

using Md = dnnl::memory::desc;
using Dims = std::vector<int64_t>;

void require(bool ok, const std::string& what) {
  if (!ok) throw ParamError(what);
}

Md strided(const Dims& dims, const Dims& strides) {
  return Md(dims, dnnl::memory::data_type::f32, strides);
}

struct Geometry {
  int64_t steps = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 0;
  bool batch_first = false;
};

// The tnc {S, N, C} view of a sequence stored [S, N, C] or, batch first, [N, S, C].
Md sequence_view(const Geometry& g, int64_t c) {
  return g.batch_first ? strided({g.steps, g.batch, c}, {c, g.steps * c, 1})
                       : strided({g.steps, g.batch, c}, {g.batch * c, c, 1});
}

// The ldnc {1, D, N, H} view of a state stored [D, N, H] or, batch first, [N, D, H].
Md state_view(const Geometry& g) {
  const int64_t d = g.dirs, n = g.batch, h = g.hidden;
  return g.batch_first ? strided({1, d, n, h}, {d * n * h, h, d * h, 1})
                       : plain_md({1, d, n, h}, dnnl::memory::data_type::f32);
}

Dims state_dims(const Geometry& g) {
  return g.batch_first ? Dims{g.batch, g.dirs, g.hidden} : Dims{g.dirs, g.batch, g.hidden};
}

// An optional initial state in ldnc: an argument (read through its view, reordered into scratch
// when that is not ldnc) or a constant already in ldnc. `md` is left empty when absent.
BufRef bind_state(DnnlKernel& k, const Operand& op, const Geometry& g, Md& md) {
  if (op.kind == SourceKind::none) return {};
  md = plain_md({1, g.dirs, g.batch, g.hidden}, dnnl::memory::data_type::f32);
  if (op.kind == SourceKind::constant) {
    require(op.dims == md.dims(), "a constant recurrent state must have dims {1, D, N, H}");
    return k.bind_input(op, md);
  }
  require(op.dims == state_dims(g), "a recurrent state argument has the wrong dims");
  k.input_md(op);  // checks the argument
  const BufRef arg{BufRef::Kind::arg, op.index, 0};
  const Md view = state_view(g);
  if (view == md) return arg;
  const BufRef tmp = k.scratch(md);
  k.add_reorder(arg, view, tmp, md);
  return tmp;
}

// Where the primitive writes an output it produces in layout `produced` and that is stored as
// `view`: the argument itself when the two agree, else scratch that finish_output reorders into
// the argument (`produced_as_view`: the scratch seen with the view's dims); scratch alone when
// the output is absent.
OutputBinding bind_result(DnnlKernel& k, const Operand& op, const Md& produced, const Md& view,
                          const Md& produced_as_view) {
  OutputBinding out;
  out.md = produced;
  if (op.kind == SourceKind::none) {
    out.buf = k.scratch(produced);
    return out;
  }
  require(op.kind == SourceKind::arg, "a recurrent output must be an output argument");
  k.output_md(op);  // checks the argument
  out.arg = {BufRef::Kind::arg, op.index, 0};
  if (view == produced) {
    out.buf = out.arg;
    return out;
  }
  out.buf = k.scratch(produced);
  out.reorder = true;
  out.md = produced_as_view;
  out.arg_md = view;
  return out;
}

// A weight or bias operand in `want`, the primitive's layout. A constant is stored in oneDNN's
// plain layout `plain` (and reordered once when `want` differs); an argument is in ONNX's form
// (`onnx_dims`), rearranged on every run by a host step into scratch in `plain`, then reordered
// into `want` when that differs.
BufRef bind_weights(DnnlKernel& k, const Operand& op, const Md& plain, const Md& want,
                    const Dims& onnx_dims, const char* name,
                    std::function<void(const float*, float*)> rearrange) {
  if (op.kind == SourceKind::constant) {
    require(op.dims == plain.dims(), std::string("recurrent ") + name + " has the wrong dims");
    return k.bind_input(op, want);
  }
  require(op.kind == SourceKind::arg && op.dims == onnx_dims,
          std::string("recurrent ") + name + " has the wrong dims");
  const Md in = k.input_md(op);
  const BufRef rearranged = k.scratch(plain);
  k.add_host_step(
      std::string("host:rnn_") + name,
      {{DNNL_ARG_SRC, in, {BufRef::Kind::arg, op.index, 0}}, {DNNL_ARG_DST, plain, rearranged}},
      [rearrange](const StepMemory& m) {
        rearrange(static_cast<const float*>(m.at(DNNL_ARG_SRC).get_data_handle()),
                  static_cast<float*>(m.at(DNNL_ARG_DST).get_data_handle()));
      });
  if (plain == want) return rearranged;
  const BufRef packed = k.scratch(want);
  k.add_reorder(rearranged, plain, packed, want);
  return packed;
}

dnnl::rnn_direction direction_of(RnnDirection d) {
  switch (d) {
    case RnnDirection::left_to_right:
      return dnnl::rnn_direction::unidirectional_left2right;
    case RnnDirection::right_to_left:
      return dnnl::rnn_direction::unidirectional_right2left;
    case RnnDirection::bidirectional:
      return dnnl::rnn_direction::bidirectional_concat;
  }
  throw ParamError("unknown recurrent direction");
}

// The memory descriptors a recurrent primitive is created with (weights as `any`; an absent
// state is a zero descriptor).
struct RnnMds {
  Md src, src_iter, src_iter_c, weights_layer, weights_iter, bias, dst, dst_iter, dst_iter_c;
};

// The primitive descriptor of `cell` over `m` (no primitive: creating one generates its code).
dnnl::primitive_desc rnn_pd(RnnCell cell, dnnl::rnn_direction dir, const RnnMds& m,
                            const dnnl::primitive_attr& attr, const dnnl::engine& engine) {
  const auto prop = dnnl::prop_kind::forward_inference;
  switch (cell) {
    case RnnCell::lstm:
      return dnnl::lstm_forward::primitive_desc(
          dnnl::lstm_forward::desc(prop, dir, m.src, m.src_iter, m.src_iter_c, m.weights_layer,
                                   m.weights_iter, m.bias, m.dst, m.dst_iter, m.dst_iter_c),
          attr, engine);
    case RnnCell::gru:
      return dnnl::gru_forward::primitive_desc(
          dnnl::gru_forward::desc(prop, dir, m.src, m.src_iter, m.weights_layer, m.weights_iter,
                                  m.bias, m.dst, m.dst_iter),
          attr, engine);
    case RnnCell::lbr_gru:
      return dnnl::lbr_gru_forward::primitive_desc(
          dnnl::lbr_gru_forward::desc(prop, dir, m.src, m.src_iter, m.weights_layer,
                                      m.weights_iter, m.bias, m.dst, m.dst_iter),
          attr, engine);
    case RnnCell::vanilla_tanh:
      return dnnl::vanilla_rnn_forward::primitive_desc(
          dnnl::vanilla_rnn_forward::desc(prop, dnnl::algorithm::eltwise_tanh, dir, m.src,
                                          m.src_iter, m.weights_layer, m.weights_iter, m.bias,
                                          m.dst, m.dst_iter),
          attr, engine);
  }
  throw ParamError("unknown recurrent cell");
}

struct BoundMd {
  Md md;
  BufRef buf;
};

// The inputs of a bidirectional layer as bound for its own primitive: src, the initial states
// ({1, D, N, H}, zero descriptors when absent), the weights and bias in that primitive's layouts.
struct Bound {
  BoundMd src, src_iter, src_iter_c, weights_layer, weights_iter, bias;
};

// The byte offset of direction `d`'s part of `full` (dims {1, D, ...}) when `part` (dims
// {1, 1, ...}, a one-direction primitive's layout) lays that part out exactly as `full` does;
// -1 when it does not.
int64_t direction_part(const Md& full, const Md& part, int64_t d) {
  Dims offsets(static_cast<size_t>(full.data.ndims), 0);
  offsets[1] = d;
  Md sub;
  try {
    sub = full.submemory_desc(part.dims(), offsets);
  } catch (const dnnl::error&) {
    return -1;
  }
  const dnnl_memory_desc_t &a = sub.data, &b = part.data;
  if (a.format_kind != dnnl_blocked || b.format_kind != dnnl_blocked || a.ndims != b.ndims ||
      b.offset0 != 0 || a.extra.flags != 0 || b.extra.flags != 0)
    return -1;
  const dnnl_blocking_desc_t &ab = a.format_desc.blocking, &bb = b.format_desc.blocking;
  for (int i = 0; i < a.ndims; ++i)
    // The stride of an axis of extent 1 (the layer and direction axes) is never used.
    if (a.padded_dims[i] != b.padded_dims[i] || a.padded_offsets[i] != b.padded_offsets[i] ||
        (b.dims[i] != 1 && ab.strides[i] != bb.strides[i]))
      return -1;
  if (ab.inner_nblks != bb.inner_nblks) return -1;
  for (int i = 0; i < ab.inner_nblks; ++i)
    if (ab.inner_blks[i] != bb.inner_blks[i] || ab.inner_idxs[i] != bb.inner_idxs[i]) return -1;
  return a.offset0 * static_cast<int64_t>(sizeof(float));
}

BufRef at_offset(BufRef b, int64_t bytes) {
  b.offset += static_cast<size_t>(bytes);
  return b;
}

// A bidirectional layer as two one-direction primitives, one thread each, side by side: oneDNN
// 2.6 runs the directions of one bidirectional primitive one after the other, each step's GEMM
// split over the team (a barrier per step), which at batch 1 costs more than the second thread
// gains. Each direction reads its slice of the weights, bias and initial states in place and
// writes its states in place; its part of Y goes through scratch and a reorder (Y interleaves
// the directions). Returns false, having added nothing, when the kernel runs on one thread,
// the layer is batch first or unidirectional, or a direction's primitive wants its weights laid
// out otherwise than as a slice of the bidirectional layout (which the compiler stores).
bool build_directions_side_by_side(DnnlKernel& k, const RnnParams& p, const Geometry& g,
                                   const RnnMds& mds, const Bound& in) {
  if (g.dirs != 2 || g.batch_first || k.threads() < 2) return false;
  const int64_t n = g.batch, h = g.hidden;
  const Md state = plain_md({1, 1, n, h}, dnnl::memory::data_type::f32);
  const Md y_dir = plain_md({g.steps, n, h}, dnnl::memory::data_type::f32);
  RnnMds one = mds;
  auto one_direction = [](const Md& md) {
    Dims d = md.dims();
    d[1] = 1;
    return Md(d, md.data_type(), dnnl::memory::format_tag::any);
  };
  one.weights_layer = one_direction(mds.weights_layer);
  one.weights_iter = one_direction(mds.weights_iter);
  Dims bias_dims = mds.bias.dims();
  bias_dims[1] = 1;
  one.bias = plain_md(bias_dims, dnnl::memory::data_type::f32);
  for (Md* m : {&one.src_iter, &one.src_iter_c, &one.dst_iter, &one.dst_iter_c})
    if (!m->is_zero()) *m = state;
  one.dst = y_dir;
  std::vector<dnnl::primitive_desc> pds;
  std::vector<std::vector<StepArg>> args(2);
  std::vector<BufRef> y_parts;
  {
    // Each primitive runs on one thread of the team: created so.
    OmpThreadScope threads(1);
    for (int64_t d = 0; d < 2; ++d)
      pds.push_back(rnn_pd(p.cell,
                           d == 0 ? dnnl::rnn_direction::unidirectional_left2right
                                  : dnnl::rnn_direction::unidirectional_right2left,
                           one, k.attr(), k.engine()));
  }
  const int64_t state_bytes = n * h * static_cast<int64_t>(sizeof(float));
  for (int64_t d = 0; d < 2; ++d) {
    const dnnl::primitive_desc& pd = pds[static_cast<size_t>(d)];
    auto md_of = [&](int arg) { return pd.query_md(dnnl::query::exec_arg_md, arg); };
    if (md_of(DNNL_ARG_SRC_LAYER) != mds.src || md_of(DNNL_ARG_DST_LAYER) != y_dir) return false;
    std::vector<StepArg>& a = args[static_cast<size_t>(d)];
    a.push_back({DNNL_ARG_SRC_LAYER, mds.src, in.src.buf});
    if (!one.src_iter.is_zero())
      a.push_back({DNNL_ARG_SRC_ITER, state, at_offset(in.src_iter.buf, d * state_bytes)});
    if (!one.src_iter_c.is_zero())
      a.push_back({DNNL_ARG_SRC_ITER_C, state, at_offset(in.src_iter_c.buf, d * state_bytes)});
    for (auto [arg, full] : {std::pair{DNNL_ARG_WEIGHTS_LAYER, &in.weights_layer},
                             std::pair{DNNL_ARG_WEIGHTS_ITER, &in.weights_iter},
                             std::pair{DNNL_ARG_BIAS, &in.bias}}) {
      const Md want = md_of(arg);
      const int64_t offset = direction_part(full->md, want, d);
      if (offset < 0) return false;
      a.push_back({arg, want, at_offset(full->buf, offset)});
    }
  }
  // Committed: the outputs' bindings add scratch and steps.
  // An output state [D, N, H]: direction d's slice in place (an LSTM's absent one: scratch).
  auto state_out = [&](const Operand& op, int64_t d) {
    if (op.kind == SourceKind::none) return k.scratch(state);
    k.output_md(op);  // checks the argument
    return BufRef{BufRef::Kind::arg, op.index, static_cast<size_t>(d * state_bytes)};
  };
  for (int64_t d = 0; d < 2; ++d) {
    std::vector<StepArg>& a = args[static_cast<size_t>(d)];
    y_parts.push_back(k.scratch(y_dir));
    a.push_back({DNNL_ARG_DST_LAYER, y_dir, y_parts.back()});
    if (!one.dst_iter.is_zero()) a.push_back({DNNL_ARG_DST_ITER, state, state_out(p.dst_iter, d)});
    if (!one.dst_iter_c.is_zero())
      a.push_back({DNNL_ARG_DST_ITER_C, state, state_out(p.dst_iter_c, d)});
  }
  std::vector<dnnl::primitive> prims;
  for (const dnnl::primitive_desc& pd : pds) prims.emplace_back(pd);
  k.add_side_by_side_step(pds, std::move(prims), std::move(args));
  if (p.dst_layer.kind == SourceKind::none) return true;
  k.output_md(p.dst_layer);  // checks the argument
  // Direction d of Y [S, D, N, H]: {S, N, H} with strides {D * N * H, H, 1} from d * N * H.
  const Md y_part = strided({g.steps, n, h}, {2 * n * h, h, 1});
  for (int64_t d = 0; d < 2; ++d)
    k.add_reorder(y_parts[static_cast<size_t>(d)], y_dir,
                  {BufRef::Kind::arg, p.dst_layer.index, static_cast<size_t>(d * state_bytes)},
                  y_part);
  return true;
}

}  // namespace

void build_rnn(DnnlKernel& k, ParamReader& r) {
  RnnParams p;
  p.io(r);
  check_reader(r);
  Geometry g;
  g.gates = rnn_gates(p.cell);
  require(g.gates > 0, "unknown recurrent cell");
  const dnnl::rnn_direction dir = direction_of(p.direction);
  require(p.batch_first <= 1, "batch_first must be 0 or 1");
  g.batch_first = p.batch_first != 0;
  g.dirs = p.direction == RnnDirection::bidirectional ? 2 : 1;
  require(p.src.kind == SourceKind::arg && p.src.dims.size() == 3,
          "a recurrent src must be a 3-D argument");
  k.input_md(p.src);
  g.steps = p.src.dims[g.batch_first ? 1 : 0];
  g.batch = p.src.dims[g.batch_first ? 0 : 1];
  g.input = p.src.dims[2];
  // H from weights_iter: {1, D, H, G, H} as a constant, [D, G*H, H] as an argument.
  require(!p.weights_iter.dims.empty(), "recurrent weights_iter has no dims");
  g.hidden = p.weights_iter.dims.back();
  for (int64_t v : {g.steps, g.batch, g.input, g.hidden})
    require(v >= 1 && v <= (int64_t{1} << 30), "recurrent dims out of range");
  const Dims wl = {1, g.dirs, g.input, g.gates, g.hidden},
             wi = {1, g.dirs, g.hidden, g.gates, g.hidden},
             b = {1, g.dirs, g.gates + (p.cell == RnnCell::lbr_gru ? 1 : 0), g.hidden};
  require(p.cell == RnnCell::lstm ||
              (p.src_iter_c.kind == SourceKind::none && p.dst_iter_c.kind == SourceKind::none),
          "only an LSTM has a cell state");
  const Dims y_dims = g.batch_first ? Dims{g.batch, g.steps, g.dirs, g.hidden}
                                    : Dims{g.steps, g.dirs, g.batch, g.hidden};
  require(p.dst_layer.kind == SourceKind::none || p.dst_layer.dims == y_dims,
          "recurrent dst_layer has the wrong dims");
  for (const Operand* o : {&p.dst_iter, &p.dst_iter_c})
    require(o->kind == SourceKind::none || o->dims == state_dims(g),
            "a recurrent output state has the wrong dims");

  Md src_iter_md, src_iter_c_md;
  const BufRef h0 = bind_state(k, p.src_iter, g, src_iter_md);
  const BufRef c0 = bind_state(k, p.src_iter_c, g, src_iter_c_md);
  const Md src_md = sequence_view(g, g.input);
  const Md ldnc = plain_md({1, g.dirs, g.batch, g.hidden}, dnnl::memory::data_type::f32);
  const Md wl_md = plain_md(wl, dnnl::memory::data_type::f32),
           wi_md = plain_md(wi, dnnl::memory::data_type::f32),
           bias_md = plain_md(b, dnnl::memory::data_type::f32);
  const bool lstm = p.cell == RnnCell::lstm;
  // An LSTM writes both states or neither: an absent one goes to scratch.
  const bool any_state =
      p.dst_iter.kind != SourceKind::none || p.dst_iter_c.kind != SourceKind::none;
  const bool hn_written = p.dst_iter.kind != SourceKind::none || (lstm && any_state),
             cn_written = p.dst_iter_c.kind != SourceKind::none || (lstm && any_state);
  // Sequence first with two directions, ONNX's [S, D, N, H] is not oneDNN's [S, N, D * H]: the
  // primitive writes plain tnc and a reorder swaps the two middle axes.
  const int64_t c = g.dirs * g.hidden;
  const bool y_direct = g.batch_first || g.dirs == 1;
  const Md y_produced = y_direct ? sequence_view(g, c)
                                 : plain_md({g.steps, g.batch, c}, dnnl::memory::data_type::f32);
  RnnMds mds{src_md,
             src_iter_md,
             src_iter_c_md,
             DnnlKernel::any_md(wl_md),
             DnnlKernel::any_md(wi_md),
             bias_md,
             y_produced,
             hn_written ? ldnc : Md(),
             cn_written ? ldnc : Md()};
  const dnnl::primitive_desc pd = rnn_pd(p.cell, dir, mds, k.attr(), k.engine());
  auto md_of = [&](int arg) { return pd.query_md(dnnl::query::exec_arg_md, arg); };
  require(md_of(DNNL_ARG_SRC_LAYER) == src_md && md_of(DNNL_ARG_DST_LAYER) == y_produced,
          "oneDNN changed the recurrent layer layouts");
  const Md wl_want = md_of(DNNL_ARG_WEIGHTS_LAYER), wi_want = md_of(DNNL_ARG_WEIGHTS_ITER),
           b_want = md_of(DNNL_ARG_BIAS);
  const RnnCell cell = p.cell;
  const int64_t dirs = g.dirs, hidden = g.hidden, input = g.input, gates = g.gates;
  const BufRef wl_buf = bind_weights(k, p.weights_layer, wl_md, wl_want,
                                     {dirs, gates * hidden, input}, "weights_layer",
                                     [=](const float* in, float* out) {
                                       rnn_ldigo(cell, dirs, hidden, input, in, out);
                                     });
  const BufRef wi_buf = bind_weights(k, p.weights_iter, wi_md, wi_want,
                                     {dirs, gates * hidden, hidden}, "weights_iter",
                                     [=](const float* in, float* out) {
                                       rnn_ldigo(cell, dirs, hidden, hidden, in, out);
                                     });
  const BufRef b_buf = bind_weights(k, p.bias, bias_md, b_want, {dirs, 2 * gates * hidden}, "bias",
                                    [=](const float* in, float* out) {
                                      rnn_ldgo_bias(cell, dirs, hidden, in, out);
                                    });
  const Bound bound{{src_md, {BufRef::Kind::arg, p.src.index, 0}},
                    {src_iter_md, h0},
                    {src_iter_c_md, c0},
                    {wl_want, wl_buf},
                    {wi_want, wi_buf},
                    {b_want, b_buf}};
  if (build_directions_side_by_side(k, p, g, mds, bound)) return;

  const Md y_view = y_direct
                        ? y_produced
                        : strided({g.steps, g.batch, g.dirs, g.hidden},
                                  {g.dirs * g.batch * g.hidden, g.hidden, g.batch * g.hidden, 1});
  const Md y_split = plain_md({g.steps, g.batch, g.dirs, g.hidden}, dnnl::memory::data_type::f32);
  const OutputBinding y = bind_result(k, p.dst_layer, y_produced, y_view, y_split);
  auto bind_state_result = [&](const Operand& op, bool written) {
    if (!written) return OutputBinding{};
    return bind_result(k, op, ldnc, state_view(g), ldnc);
  };
  const OutputBinding hn = bind_state_result(p.dst_iter, hn_written),
                      cn = bind_state_result(p.dst_iter_c, cn_written);
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC_LAYER, src_md, bound.src.buf});
  if (p.src_iter.kind != SourceKind::none) args.push_back({DNNL_ARG_SRC_ITER, src_iter_md, h0});
  if (p.src_iter_c.kind != SourceKind::none)
    args.push_back({DNNL_ARG_SRC_ITER_C, src_iter_c_md, c0});
  args.push_back({DNNL_ARG_WEIGHTS_LAYER, wl_want, wl_buf});
  args.push_back({DNNL_ARG_WEIGHTS_ITER, wi_want, wi_buf});
  args.push_back({DNNL_ARG_BIAS, b_want, b_buf});
  args.push_back({DNNL_ARG_DST_LAYER, y_produced, y.buf});
  if (hn_written) args.push_back({DNNL_ARG_DST_ITER, hn.md, hn.buf});
  if (cn_written) args.push_back({DNNL_ARG_DST_ITER_C, cn.md, cn.buf});
  k.add_step(pd, dnnl::primitive(pd), std::move(args));
  for (const OutputBinding* out : {&y, &hn, &cn}) k.finish_output(*out);
}

}  // namespace collage::rt_dnnl
