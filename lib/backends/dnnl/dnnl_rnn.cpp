// LSTM, GRU and RNN on the dnnl backend: what oneDNN's recurrent primitives run (f32, the default
// activations, no clip, input_forget, peepholes or per-batch sequence lengths), and the
// compile-time rearrangement of constant weights and biases into oneDNN's gate order and layouts
// (dnnl_rnn_layout.h), so that the kernel reorders them once, when it is built.
#include <algorithm>
#include <tuple>

#include "backends/dnnl/dnnl_emitter.h"
#include "collage/ops/recurrent.h"
#include "dnnl_params_rnn.h"
#include "dnnl_rnn_layout.h"

namespace collage::dnnl_backend {
namespace {

struct RnnShape {
  rt_dnnl::RnnCell cell = rt_dnnl::RnnCell::lstm;
  rt_dnnl::RnnDirection direction = rt_dnnl::RnnDirection::left_to_right;
  int64_t steps = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 0;
  bool batch_first = false;
};

bool present(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] != kNoValue;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  for (size_t start = 0; start < list.size();) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

absl::StatusOr<RnnShape> rnn_shape(const Graph& g, const Node& n) {
  const auto& a = n.get<RecurrentAttrs>();
  const std::string& op = n.op_name();
  RnnShape s;
  std::vector<std::string> defaults;
  if (op == "LSTM") {
    s.cell = rt_dnnl::RnnCell::lstm;
    defaults = {"Sigmoid", "Tanh", "Tanh"};
  } else if (op == "GRU") {
    s.cell = a.linear_before_reset ? rt_dnnl::RnnCell::lbr_gru : rt_dnnl::RnnCell::gru;
    defaults = {"Sigmoid", "Tanh"};
  } else {
    s.cell = rt_dnnl::RnnCell::vanilla_tanh;
    defaults = {"Tanh"};
  }
  s.gates = rt_dnnl::rnn_gates(s.cell);
  if (a.direction == "forward") {
    s.direction = rt_dnnl::RnnDirection::left_to_right;
  } else if (a.direction == "reverse") {
    s.direction = rt_dnnl::RnnDirection::right_to_left;
  } else if (a.direction == "bidirectional") {
    s.direction = rt_dnnl::RnnDirection::bidirectional;
    s.dirs = 2;
  } else {
    return unsupported(n, str_cat("direction '", a.direction, "'"));
  }
  if (a.clip != 0.f) return unsupported(n, "clip (oneDNN's cells do not clip)");
  if (a.input_forget != 0) return unsupported(n, "input_forget");
  if (!a.activations.empty()) {
    std::vector<std::string> want;
    for (int64_t d = 0; d < s.dirs; ++d) want.insert(want.end(), defaults.begin(), defaults.end());
    if (split_names(a.activations) != want)
      return unsupported(
          n, str_cat("activations '", a.activations, "' (oneDNN runs only the defaults)"));
  }
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (present(n, i) && i != 4 && g.value(n.inputs[i]).type.dtype != DType::f32)
      return unsupported(n, str_cat("input ", i, " is not f32"));
  for (ValueId v : n.outputs) {
    const TensorType& t = g.value(v).type;
    if (t.dtype != DType::f32) return unsupported(n, "an output is not f32");
    if (t.numel() == 0) return unsupported(n, "an empty output");
  }
  const Shape& x = g.value(n.inputs[0]).type.shape;
  if (x.size() != 3 || shape_numel(x) == 0) return unsupported(n, "X must be 3-D and not empty");
  s.batch_first = a.layout != 0;
  s.steps = x[s.batch_first ? 1 : 0];
  s.batch = x[s.batch_first ? 0 : 1];
  s.input = x[2];
  // W, R and B are constants in real models (rearranged once here); others are rearranged on
  // every run.
  const Shape& w = g.value(n.inputs[1]).type.shape;
  const Shape& r = g.value(n.inputs[2]).type.shape;
  if (r.size() != 3) return unsupported(n, "R must be 3-D");
  s.hidden = r[2];
  if (w != Shape{s.dirs, s.gates * s.hidden, s.input} ||
      r != Shape{s.dirs, s.gates * s.hidden, s.hidden} ||
      (present(n, 3) && g.value(n.inputs[3]).type.shape != Shape{s.dirs, 2 * s.gates * s.hidden}))
    return unsupported(n, "W, R or B does not match X and the direction");
  if (present(n, 4)) {
    // Lengths that all equal the sequence length change nothing.
    const Tensor* lens = g.constant_of(n.inputs[4]);
    if (!lens) return unsupported(n, "sequence_lens is not a constant");
    for (int64_t i = 0; i < lens->numel(); ++i)
      if (lens->get_as_int64(i) != s.steps)
        return unsupported(n, "sequence_lens shorter than the sequence");
  }
  if (present(n, 7)) return unsupported(n, "peepholes (P)");
  return s;
}

// A constant W or R [D, G*H, K] (K: input or hidden size) as oneDNN's ldigo {1, D, K, G, H}.
Tensor ldigo(const Tensor& w, const RnnShape& s, int64_t k_size) {
  Tensor out(DType::f32, {1, s.dirs, k_size, s.gates, s.hidden});
  rt_dnnl::rnn_ldigo(s.cell, s.dirs, s.hidden, k_size, w.data<float>(), out.data<float>());
  return out;
}

// A constant B [D, 2*G*H] (null: zeros) as oneDNN's ldgo bias.
Tensor ldgo_bias(const Tensor* b, const RnnShape& s) {
  const int64_t gates = s.gates + (s.cell == rt_dnnl::RnnCell::lbr_gru ? 1 : 0);
  Tensor out(DType::f32, {1, s.dirs, gates, s.hidden});
  rt_dnnl::rnn_ldgo_bias(s.cell, s.dirs, s.hidden, b ? b->data<float>() : nullptr,
                         out.data<float>());
  return out;
}

// A constant initial state [D, N, H] (batch first: [N, D, H]) as ldnc {1, D, N, H}.
Tensor ldnc_state(const Tensor& t, const RnnShape& s) {
  Tensor out(DType::f32, {1, s.dirs, s.batch, s.hidden});
  for (int64_t d = 0; d < s.dirs; ++d)
    for (int64_t b = 0; b < s.batch; ++b)
      for (int64_t h = 0; h < s.hidden; ++h)
        out.data<float>()[(d * s.batch + b) * s.hidden + h] =
            t.data<float>()[(s.batch_first ? b * s.dirs + d : d * s.batch + b) * s.hidden + h];
  return out;
}

// oneDNN 2.6 runs GRU and vanilla RNN cells on its reference driver, which starts an OpenMP team
// for every step's GEMM: below about a million multiply-adds per step and direction the team
// costs more than it saves (bidirectional GRU, batch 1, input 128, hidden 256: 1.4 ms on one
// thread, 2.3 to 4.5 ms on two, on the 2-core development machine). Such kernels run on one
// thread; LSTMs (oneDNN's brgemm driver) keep the count they were built for, and a bidirectional
// one, sequence first, then runs its directions side by side, one thread each
// (runtime/modules/dnnl/dnnl_ops_rnn.cpp). A bidirectional GRU could too (0.9 ms at best for the
// size above, against 1.4 on one thread), but on the loaded 2-core machine it waited for the
// second core in most runs (median 4 to 8 ms against 1.6, bench/RESULTS.md): it stays on one.
int recurrent_threads(const RnnShape& s, int threads) {
  constexpr int64_t kMinStepWork = int64_t{1} << 20;
  const int64_t step_work = s.batch * s.gates * s.hidden * (s.input + s.hidden);
  return s.cell != rt_dnnl::RnnCell::lstm && step_work < kMinStepWork ? 1 : threads;
}

}  // namespace

absl::Status check_recurrent(const Graph& g, const Node& n) {
  return rnn_shape(g, n).status();
}

absl::StatusOr<EmittedKernel> emit_recurrent(Emitter& e, const GroupPlan& plan, int threads) {
  const Graph& g = e.graph();
  const Node& n = g.node(plan.anchor_node);
  auto shape = rnn_shape(g, n);
  if (!shape.ok()) return shape.status();
  const RnnShape& s = *shape;
  rt_dnnl::RnnParams p;
  p.cell = s.cell;
  p.direction = s.direction;
  p.batch_first = s.batch_first ? 1 : 0;
  DNNL_ASSIGN_OR_RETURN(p.src, e.value(n.inputs[0], dims_of(g.value(n.inputs[0]).type.shape)));
  // An LSTM given one initial state gets zeros for the other: oneDNN takes both or neither.
  const bool lstm = s.cell == rt_dnnl::RnnCell::lstm;
  const bool any_state = present(n, 5) || (lstm && present(n, 6));
  const Dims ldnc_dims = {1, s.dirs, s.batch, s.hidden};
  for (auto [index, operand] :
       {std::pair{size_t{5}, &p.src_iter}, std::pair{size_t{6}, &p.src_iter_c}}) {
    if (index == 6 && !lstm) continue;
    if (!present(n, index)) {
      if (any_state) {
        Tensor zeros(DType::f32, ldnc_dims);
        std::fill_n(zeros.data<float>(), zeros.numel(), 0.f);
        DNNL_ASSIGN_OR_RETURN(*operand, e.constant(zeros, ldnc_dims));
      }
      continue;
    }
    const ValueId v = n.inputs[index];
    if (const Tensor* t = g.constant_of(v))
      DNNL_ASSIGN_OR_RETURN(*operand, e.constant(ldnc_state(*t, s), ldnc_dims));
    else
      DNNL_ASSIGN_OR_RETURN(*operand, e.value(v, dims_of(g.value(v).type.shape)));
  }
  // Weights: constants rearranged now; inputs in ONNX's form, rearranged by the kernel.
  for (auto [index, operand, k_size] : {std::tuple{size_t{1}, &p.weights_layer, s.input},
                                        std::tuple{size_t{2}, &p.weights_iter, s.hidden}}) {
    const ValueId v = n.inputs[index];
    if (const Tensor* t = g.constant_of(v)) {
      const Tensor packed = ldigo(*t, s, k_size);
      DNNL_ASSIGN_OR_RETURN(*operand, e.constant(packed, packed.shape()));
    } else {
      DNNL_ASSIGN_OR_RETURN(*operand, e.value(v, dims_of(g.value(v).type.shape)));
    }
  }
  if (present(n, 3) && !g.constant_of(n.inputs[3])) {
    DNNL_ASSIGN_OR_RETURN(p.bias, e.value(n.inputs[3], dims_of(g.value(n.inputs[3]).type.shape)));
  } else {
    const Tensor bias = ldgo_bias(present(n, 3) ? g.constant_of(n.inputs[3]) : nullptr, s);
    DNNL_ASSIGN_OR_RETURN(p.bias, e.constant(bias, bias.shape()));
  }
  // The node's outputs Y, Y_h, Y_c that the group returns, each as its output argument.
  Operand* outs[] = {&p.dst_layer, &p.dst_iter, &p.dst_iter_c};
  const std::vector<ValueId>& group_outputs = g.outputs();
  for (size_t i = 0; i < n.outputs.size() && i < 3; ++i) {
    auto it = std::find(group_outputs.begin(), group_outputs.end(), n.outputs[i]);
    if (it == group_outputs.end()) continue;
    *outs[i] = Operand{SourceKind::arg,
                       static_cast<int32_t>(g.inputs().size() + (it - group_outputs.begin())),
                       dims_of(g.value(n.outputs[i]).type.shape), 0, 0};
  }
  return e.finish(rt_dnnl::OpKind::rnn, p, recurrent_threads(s, threads));
}

}  // namespace collage::dnnl_backend
