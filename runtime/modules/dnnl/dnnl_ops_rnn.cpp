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
  // Sequence first with two directions, ONNX's [S, D, N, H] is not oneDNN's [S, N, D * H]: the
  // primitive writes plain tnc and a reorder swaps the two middle axes.
  const int64_t c = g.dirs * g.hidden;
  const bool y_direct = g.batch_first || g.dirs == 1;
  const Md y_produced = y_direct ? sequence_view(g, c)
                                 : plain_md({g.steps, g.batch, c}, dnnl::memory::data_type::f32);
  const Md y_view = y_direct
                        ? y_produced
                        : strided({g.steps, g.batch, g.dirs, g.hidden},
                                  {g.dirs * g.batch * g.hidden, g.hidden, g.batch * g.hidden, 1});
  const Md y_split = plain_md({g.steps, g.batch, g.dirs, g.hidden}, dnnl::memory::data_type::f32);
  const OutputBinding y = bind_result(k, p.dst_layer, y_produced, y_view, y_split);
  // An LSTM writes both states or neither: an absent one goes to scratch.
  const bool lstm = p.cell == RnnCell::lstm;
  const bool any_state =
      p.dst_iter.kind != SourceKind::none || p.dst_iter_c.kind != SourceKind::none;
  auto bind_state_result = [&](const Operand& op, bool wanted) {
    if (op.kind == SourceKind::none && !wanted) return OutputBinding{};
    return bind_result(k, op, ldnc, state_view(g), ldnc);
  };
  const OutputBinding hn = bind_state_result(p.dst_iter, lstm && any_state),
                      cn = bind_state_result(p.dst_iter_c, lstm && any_state);
  const Md dst_iter_md = hn.md, dst_iter_c_md = cn.md;
  const Md wl_md = plain_md(wl, dnnl::memory::data_type::f32),
           wi_md = plain_md(wi, dnnl::memory::data_type::f32),
           bias_md = plain_md(b, dnnl::memory::data_type::f32);
  const Md wl_any = DnnlKernel::any_md(wl_md), wi_any = DnnlKernel::any_md(wi_md);
  const auto prop = dnnl::prop_kind::forward_inference;
  const dnnl::primitive_attr attr = k.attr();
  dnnl::primitive_desc pd;
  dnnl::primitive prim;
  switch (p.cell) {
    case RnnCell::lstm: {
      dnnl::lstm_forward::desc d(prop, dir, src_md, src_iter_md, src_iter_c_md, wl_any, wi_any,
                                 bias_md, y_produced, dst_iter_md, dst_iter_c_md);
      dnnl::lstm_forward::primitive_desc lpd(d, attr, k.engine());
      prim = dnnl::lstm_forward(lpd);
      pd = lpd;
      break;
    }
    case RnnCell::gru: {
      dnnl::gru_forward::desc d(prop, dir, src_md, src_iter_md, wl_any, wi_any, bias_md, y_produced,
                                dst_iter_md);
      dnnl::gru_forward::primitive_desc gpd(d, attr, k.engine());
      prim = dnnl::gru_forward(gpd);
      pd = gpd;
      break;
    }
    case RnnCell::lbr_gru: {
      dnnl::lbr_gru_forward::desc d(prop, dir, src_md, src_iter_md, wl_any, wi_any, bias_md,
                                    y_produced, dst_iter_md);
      dnnl::lbr_gru_forward::primitive_desc gpd(d, attr, k.engine());
      prim = dnnl::lbr_gru_forward(gpd);
      pd = gpd;
      break;
    }
    case RnnCell::vanilla_tanh: {
      dnnl::vanilla_rnn_forward::desc d(prop, dnnl::algorithm::eltwise_tanh, dir, src_md,
                                        src_iter_md, wl_any, wi_any, bias_md, y_produced,
                                        dst_iter_md);
      dnnl::vanilla_rnn_forward::primitive_desc vpd(d, attr, k.engine());
      prim = dnnl::vanilla_rnn_forward(vpd);
      pd = vpd;
      break;
    }
  }
  auto md_of = [&](int arg) { return pd.query_md(dnnl::query::exec_arg_md, arg); };
  require(md_of(DNNL_ARG_SRC_LAYER) == src_md && md_of(DNNL_ARG_DST_LAYER) == y_produced,
          "oneDNN changed the recurrent layer layouts");
  std::vector<StepArg> args;
  args.push_back({DNNL_ARG_SRC_LAYER, src_md, {BufRef::Kind::arg, p.src.index, 0}});
  if (p.src_iter.kind != SourceKind::none) args.push_back({DNNL_ARG_SRC_ITER, src_iter_md, h0});
  if (p.src_iter_c.kind != SourceKind::none)
    args.push_back({DNNL_ARG_SRC_ITER_C, src_iter_c_md, c0});
  const Md wl_want = md_of(DNNL_ARG_WEIGHTS_LAYER), wi_want = md_of(DNNL_ARG_WEIGHTS_ITER),
           b_want = md_of(DNNL_ARG_BIAS);
  const RnnCell cell = p.cell;
  const int64_t dirs = g.dirs, hidden = g.hidden, input = g.input, gates = g.gates;
  args.push_back({DNNL_ARG_WEIGHTS_LAYER, wl_want,
                  bind_weights(k, p.weights_layer, wl_md, wl_want, {dirs, gates * hidden, input},
                               "weights_layer", [=](const float* in, float* out) {
                                 rnn_ldigo(cell, dirs, hidden, input, in, out);
                               })});
  args.push_back({DNNL_ARG_WEIGHTS_ITER, wi_want,
                  bind_weights(k, p.weights_iter, wi_md, wi_want, {dirs, gates * hidden, hidden},
                               "weights_iter", [=](const float* in, float* out) {
                                 rnn_ldigo(cell, dirs, hidden, hidden, in, out);
                               })});
  args.push_back({DNNL_ARG_BIAS, b_want,
                  bind_weights(k, p.bias, bias_md, b_want, {dirs, 2 * gates * hidden}, "bias",
                               [=](const float* in, float* out) {
                                 rnn_ldgo_bias(cell, dirs, hidden, in, out);
                               })});
  args.push_back({DNNL_ARG_DST_LAYER, y_produced, y.buf});
  if (!dst_iter_md.is_zero()) args.push_back({DNNL_ARG_DST_ITER, dst_iter_md, hn.buf});
  if (!dst_iter_c_md.is_zero()) args.push_back({DNNL_ARG_DST_ITER_C, dst_iter_c_md, cn.buf});
  k.add_step(pd, prim, std::move(args));
  for (const OutputBinding* out : {&y, &hn, &cn}) k.finish_output(*out);
}

}  // namespace collage::rt_dnnl
