// RNN, GRU and LSTM (ONNX 7-22) in the reference executor: shapes and attributes checked here,
// the recurrence computed in double by runtime/algorithms/dyn_recurrent.h (which the dynamic
// module runs too).
#include "collage/ops/recurrent.h"
#include "dyn_recurrent.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

using Cell = rt_dynamic::RnnCell;

int gates(Cell c) { return rt_dynamic::rnn_gates(c); }

// The activation functions of every direction, in order, with their alpha/beta.
absl::StatusOr<std::vector<rt_dynamic::RnnFunction>> activations(const RecurrentAttrs& a, Cell cell,
                                                                  int dirs) {
  std::vector<rt_dynamic::RnnFunction> out;
  if (std::string e = rt_dynamic::rnn_parse_functions(a.activations, a.activation_alpha,
                                                      a.activation_beta, cell, dirs, out);
      !e.empty())
    return absl::InvalidArgumentError(e);
  return out;
}

struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
};

absl::StatusOr<RnnDims> rnn_dims(const RecurrentAttrs& a, Cell cell, const Shape& x,
                                 const Shape& w) {
  RnnDims d;
  if (a.direction != "forward" && a.direction != "reverse" && a.direction != "bidirectional")
    return absl::InvalidArgumentError(str_cat("direction '", a.direction, "' is unknown"));
  if (x.size() != 3 || w.size() != 3)
    return absl::InvalidArgumentError("X and W must be 3-D");
  d.dirs = a.direction == "bidirectional" ? 2 : 1;
  d.seq = a.layout ? x[1] : x[0];
  d.batch = a.layout ? x[0] : x[1];
  d.input = x[2];
  d.hidden = a.hidden_size > 0 ? a.hidden_size : w[1] / gates(cell);
  if (w != Shape{d.dirs, gates(cell) * d.hidden, d.input})
    return absl::InvalidArgumentError(str_cat("W has shape ", shape_to_string(w), ", expected [",
                                              d.dirs, ", ", gates(cell) * d.hidden, ", ",
                                              d.input, "]"));
  if (a.input_forget != 0) return absl::InvalidArgumentError("input_forget is not supported");
  return d;
}

absl::Status infer_rnn(InferContext& ctx, Cell cell) {
  if (absl::Status s = check_output_count(ctx, cell == Cell::lstm ? 3 : 2); !s.ok()) return s;
  for (int i : {0, 1, 2})
    if (absl::Status s = check_dtype(ctx, i, kFloatTypes); !s.ok()) return s;
  const auto& a = ctx.attrs<RecurrentAttrs>();
  auto d = rnn_dims(a, cell, ctx.input(0).shape, ctx.input(1).shape);
  if (!d.ok()) return ctx.error(str_cat(d.status().message()));
  const int64_t g = gates(cell), H = d->hidden, D = d->dirs, B = d->batch;
  auto expect = [&](int i, const Shape& want, const char* name) -> absl::Status {
    if (!ctx.has_input(i) || ctx.input(i).shape == want) return absl::OkStatus();
    return ctx.error(str_cat(name, " has shape ", shape_to_string(ctx.input(i).shape),
                             ", expected ", shape_to_string(want)));
  };
  if (absl::Status s = expect(2, {D, g * H, H}, "R"); !s.ok()) return s;
  if (absl::Status s = expect(3, {D, 2 * g * H}, "B"); !s.ok()) return s;
  if (absl::Status s = expect(4, {B}, "sequence_lens"); !s.ok()) return s;
  const Shape state = a.layout ? Shape{B, D, H} : Shape{D, B, H};
  if (absl::Status s = expect(5, state, "initial_h"); !s.ok()) return s;
  if (cell == Cell::lstm) {
    if (absl::Status s = expect(6, state, "initial_c"); !s.ok()) return s;
    if (absl::Status s = expect(7, {D, 3 * H}, "P"); !s.ok()) return s;
  }
  if (auto f = activations(a, cell, static_cast<int>(D)); !f.ok())
    return ctx.error(str_cat(f.status().message()));
  const DType t = ctx.input(0).dtype;
  ctx.set_output(0, {t, a.layout ? Shape{B, d->seq, D, H} : Shape{d->seq, D, B, H}});
  const int n = ctx.requested_outputs();
  for (int i = 1; i < n; ++i) ctx.set_output(i, {t, state});
  return absl::OkStatus();
}

// The operands as rnn_run reads them.
struct OperandReader {
  std::span<const Tensor> in;
  bool given(size_t i) const { return in.size() > i && !in[i].empty(); }
  double value(size_t i, int64_t k) const { return in[i].get_as_double(k); }
  int64_t length(int64_t b) const { return in[4].get_as_int64(b); }
};

absl::Status rnn_kernel(const KernelArgs& args, Cell cell) {
  const auto& a = args.get<RecurrentAttrs>();
  const auto& in = args.inputs;
  auto dd = rnn_dims(a, cell, in[0].shape(), in[1].shape());
  if (!dd.ok()) return dd.status();
  const RnnDims d = *dd;
  rt_dynamic::RnnSpec spec;
  spec.cell = cell;
  auto acts = activations(a, cell, static_cast<int>(d.dirs));
  if (!acts.ok()) return acts.status();
  spec.functions = *std::move(acts);
  spec.clip = a.clip;
  spec.reverse = a.direction == "reverse";
  spec.layout = a.layout;
  spec.linear_before_reset = a.linear_before_reset;
  spec.seq = d.seq;
  spec.batch = d.batch;
  spec.input = d.input;
  spec.hidden = d.hidden;
  spec.dirs = d.dirs;
  const OperandReader reader{in};
  if (reader.given(4))
    for (int64_t b = 0; b < d.batch; ++b)
      if (const int64_t len = reader.length(b); len < 0 || len > d.seq)
        return absl::InvalidArgumentError(str_cat("sequence_lens[", b, "] is ", len,
                                                  ", outside [0, ", d.seq, "]"));
  std::vector<double> y, yh, yc;
  rt_dynamic::rnn_run(spec, reader, y, yh, yc);
  const std::vector<double>* outs[] = {&y, &yh, &yc};
  for (size_t o = 0; o < args.outputs.size() && o < 3; ++o) {
    const std::vector<double>& v = *outs[o];
    absl::Status s = dispatch_codec<kFloatTypes>(args.outputs[o].dtype(), [&](auto codec) {
      using C = decltype(codec);
      auto* p = args.outputs[o].data<typename C::Storage>();
      for (size_t i = 0; i < v.size(); ++i) p[i] = C::store(static_cast<typename C::Compute>(v[i]));
    });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

OpDef recurrent_op(std::string name, Cell cell, int max_inputs) {
  return make_op<RecurrentAttrs>(
      std::move(name), FusionKind::opaque, 3, max_inputs,
      [cell](InferContext& ctx) { return infer_rnn(ctx, cell); },
      [cell](const KernelArgs& args) { return rnn_kernel(args, cell); });
}

}  // namespace

void register_recurrent_ops(OpRegistry& r) {
  add_builtin_op(r, recurrent_op("RNN", Cell::rnn, 6));
  add_builtin_op(r, recurrent_op("GRU", Cell::gru, 6));
  add_builtin_op(r, recurrent_op("LSTM", Cell::lstm, 8));
}

}  // namespace collage::ops
