// RNN, GRU and LSTM (ONNX 7-22) in the reference executor, computed in double: forward, reverse
// and bidirectional, both layouts, per-batch sequence lengths, initial states, peepholes, clip
// and the ONNX activation functions.
#include <cmath>
#include <functional>

#include "collage/ops/recurrent.h"
#include "ops/elementwise_common.h"
#include "ops/op_sets.h"

namespace collage::ops {
namespace {

enum class Cell { rnn, gru, lstm };

int gates(Cell c) { return c == Cell::rnn ? 1 : c == Cell::gru ? 3 : 4; }
int functions(Cell c) { return c == Cell::rnn ? 1 : c == Cell::gru ? 2 : 3; }

using Activation = std::function<double(double)>;

// The activation functions of every direction, in order, with their alpha/beta.
absl::StatusOr<std::vector<Activation>> activations(const RecurrentAttrs& a, Cell cell, int dirs) {
  std::vector<std::string> names;
  for (size_t start = 0; start < a.activations.size();) {
    size_t comma = a.activations.find(',', start);
    if (comma == std::string::npos) comma = a.activations.size();
    names.push_back(a.activations.substr(start, comma - start));
    start = comma + 1;
  }
  const int per_dir = functions(cell);
  if (names.empty()) {
    const std::vector<std::string> def = cell == Cell::rnn   ? std::vector<std::string>{"Tanh"}
                                         : cell == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), def.begin(), def.end());
  }
  if (static_cast<int>(names.size()) != per_dir * dirs)
    return absl::InvalidArgumentError(str_cat("activations lists ", names.size(), " functions, ",
                                              "expected ", per_dir * dirs));
  size_t ia = 0, ib = 0;
  auto alpha = [&](double def) { return ia < a.activation_alpha.size() ? a.activation_alpha[ia++] : def; };
  auto beta = [&](double def) { return ib < a.activation_beta.size() ? a.activation_beta[ib++] : def; };
  std::vector<Activation> out;
  for (const std::string& n : names) {
    if (n == "Sigmoid") {
      out.push_back([](double x) { return 1 / (1 + std::exp(-x)); });
    } else if (n == "Tanh") {
      out.push_back([](double x) { return std::tanh(x); });
    } else if (n == "Relu") {
      out.push_back([](double x) { return std::max(0.0, x); });
    } else if (n == "Softsign") {
      out.push_back([](double x) { return x / (1 + std::fabs(x)); });
    } else if (n == "Softplus") {
      out.push_back([](double x) { return std::log1p(std::exp(x)); });
    } else if (n == "LeakyRelu") {
      const double al = alpha(0.01);
      out.push_back([al](double x) { return x < 0 ? al * x : x; });
    } else if (n == "ThresholdedRelu") {
      const double al = alpha(1.0);
      out.push_back([al](double x) { return x > al ? x : 0.0; });
    } else if (n == "Elu") {
      const double al = alpha(1.0);
      out.push_back([al](double x) { return x < 0 ? al * (std::exp(x) - 1) : x; });
    } else if (n == "HardSigmoid") {
      const double al = alpha(0.2), be = beta(0.5);
      out.push_back([al, be](double x) { return std::clamp(al * x + be, 0.0, 1.0); });
    } else if (n == "Affine") {
      const double al = alpha(1.0), be = beta(0.0);
      out.push_back([al, be](double x) { return al * x + be; });
    } else if (n == "ScaledTanh") {
      const double al = alpha(1.0), be = beta(1.0);
      out.push_back([al, be](double x) { return al * std::tanh(be * x); });
    } else {
      return absl::InvalidArgumentError(str_cat("unknown activation '", n, "'"));
    }
  }
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

absl::Status rnn_kernel(const KernelArgs& args, Cell cell) {
  const auto& a = args.get<RecurrentAttrs>();
  const auto& in = args.inputs;
  auto given = [&](size_t i) { return in.size() > i && !in[i].empty(); };
  auto dd = rnn_dims(a, cell, in[0].shape(), in[1].shape());
  if (!dd.ok()) return dd.status();
  const RnnDims d = *dd;
  auto acts = activations(a, cell, static_cast<int>(d.dirs));
  if (!acts.ok()) return acts.status();
  const int64_t S = d.seq, B = d.batch, I = d.input, H = d.hidden, D = d.dirs, G = gates(cell);
  const double clip = a.clip;
  auto clipped = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  auto x_at = [&](int64_t t, int64_t b, int64_t i) {
    return in[0].get_as_double(a.layout ? (b * S + t) * I + i : (t * B + b) * I + i);
  };
  auto state_at = [&](int64_t dir, int64_t b, int64_t h) {
    return a.layout ? (b * D + dir) * H + h : (dir * B + b) * H + h;
  };
  std::vector<double> y(static_cast<size_t>(S * D * B * H), 0.0), yh(D * B * H, 0.0),
      yc(D * B * H, 0.0);
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool reverse = a.direction == "reverse" || dir == 1;
    const Activation* f = &(*acts)[dir * functions(cell)];
    auto w = [&](int64_t row, int64_t i) { return in[1].get_as_double((dir * G * H + row) * I + i); };
    auto r = [&](int64_t row, int64_t h) { return in[2].get_as_double((dir * G * H + row) * H + h); };
    auto bias = [&](int64_t k) { return given(3) ? in[3].get_as_double(dir * 2 * G * H + k) : 0.0; };
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = given(4) ? in[4].get_as_int64(b) : S;
      std::vector<double> h(H, 0.0), c(H, 0.0), hn(H), pre(G * H);
      for (int64_t k = 0; k < H; ++k) {
        if (given(5)) h[k] = in[5].get_as_double(state_at(dir, b, k));
        if (cell == Cell::lstm && given(6)) c[k] = in[6].get_as_double(state_at(dir, b, k));
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        // pre[row] = X_t W_row + Wb_row (+ H R_row + Rb_row except GRU's candidate).
        for (int64_t row = 0; row < G * H; ++row) {
          double s = bias(row);
          for (int64_t i = 0; i < I; ++i) s += x_at(t, b, i) * w(row, i);
          pre[row] = s;
        }
        auto rec = [&](int64_t row, const std::vector<double>& hv) {
          double s = bias(G * H + row);
          for (int64_t k = 0; k < H; ++k) s += hv[k] * r(row, k);
          return s;
        };
        if (cell == Cell::rnn) {
          for (int64_t k = 0; k < H; ++k) hn[k] = f[0](clipped(pre[k] + rec(k, h)));
        } else if (cell == Cell::gru) {
          std::vector<double> z(H), rs(H), rh(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = f[0](clipped(pre[k] + rec(k, h)));
            rs[k] = f[0](clipped(pre[H + k] + rec(H + k, h)));
          }
          for (int64_t k = 0; k < H; ++k) rh[k] = rs[k] * h[k];
          for (int64_t k = 0; k < H; ++k) {
            const double cand = a.linear_before_reset ? pre[2 * H + k] + rs[k] * rec(2 * H + k, h)
                                                      : pre[2 * H + k] + rec(2 * H + k, rh);
            hn[k] = (1 - z[k]) * f[1](clipped(cand)) + z[k] * h[k];
          }
        } else {
          auto peep = [&](int64_t gate, int64_t k) {
            return given(7) ? in[7].get_as_double(dir * 3 * H + gate * H + k) : 0.0;
          };
          std::vector<double> cn(H);
          for (int64_t k = 0; k < H; ++k) {
            const double ig = f[0](clipped(pre[k] + rec(k, h) + peep(0, k) * c[k]));
            const double fg = f[0](clipped(pre[2 * H + k] + rec(2 * H + k, h) + peep(2, k) * c[k]));
            const double cand = f[1](clipped(pre[3 * H + k] + rec(3 * H + k, h)));
            cn[k] = fg * c[k] + ig * cand;
            const double og = f[0](clipped(pre[H + k] + rec(H + k, h) + peep(1, k) * cn[k]));
            hn[k] = og * f[2](cn[k]);
          }
          c = cn;
        }
        h = hn;
        for (int64_t k = 0; k < H; ++k)
          y[a.layout ? ((b * S + t) * D + dir) * H + k : ((t * D + dir) * B + b) * H + k] = h[k];
      }
      for (int64_t k = 0; k < H; ++k) {
        yh[state_at(dir, b, k)] = h[k];
        yc[state_at(dir, b, k)] = c[k];
      }
    }
  }
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
