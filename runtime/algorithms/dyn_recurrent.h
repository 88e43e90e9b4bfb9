// RNN, GRU and LSTM (ONNX 7-22) computed in double, shared by the reference kernel
// (lib/ops/nn_recurrent.cpp) and the runtime's dynamic module: forward, reverse and
// bidirectional, both layouts, per-batch sequence lengths, initial states, peepholes, clip and
// the ONNX activation functions. Header-only, over the operands through a reader.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace collage::rt_dynamic {

enum class RnnCell : int64_t { rnn, gru, lstm };

inline int rnn_gates(RnnCell c) { return c == RnnCell::rnn ? 1 : c == RnnCell::gru ? 3 : 4; }
// Activation functions per direction.
inline int rnn_functions(RnnCell c) { return c == RnnCell::rnn ? 1 : c == RnnCell::gru ? 2 : 3; }

enum class RnnActivation : int64_t {
  sigmoid, tanh, relu, softsign, softplus, leaky_relu, thresholded_relu, elu, hard_sigmoid,
  affine, scaled_tanh, count_
};

// One activation function with its alpha and beta.
struct RnnFunction {
  RnnActivation kind = RnnActivation::tanh;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    switch (kind) {
      case RnnActivation::sigmoid: return 1 / (1 + std::exp(-x));
      case RnnActivation::tanh: return std::tanh(x);
      case RnnActivation::relu: return std::max(0.0, x);
      case RnnActivation::softsign: return x / (1 + std::fabs(x));
      case RnnActivation::softplus: return std::log1p(std::exp(x));
      case RnnActivation::leaky_relu: return x < 0 ? alpha * x : x;
      case RnnActivation::thresholded_relu: return x > alpha ? x : 0.0;
      case RnnActivation::elu: return x < 0 ? alpha * (std::exp(x) - 1) : x;
      case RnnActivation::hard_sigmoid: return std::clamp(alpha * x + beta, 0.0, 1.0);
      case RnnActivation::affine: return alpha * x + beta;
      default: return alpha * std::tanh(beta * x);  // scaled_tanh
    }
  }
};

// The functions of every direction, in order, from the comma-separated `names` (empty: the
// cell's defaults) with alphas and betas taken in order by the functions that use them. Empty
// string on success, else what is wrong.
inline std::string rnn_parse_functions(const std::string& names_csv,
                                       const std::vector<float>& alphas,
                                       const std::vector<float>& betas, RnnCell cell,
                                       int64_t dirs, std::vector<RnnFunction>& out) {
  std::vector<std::string> names;
  for (size_t start = 0; start < names_csv.size();) {
    size_t comma = names_csv.find(',', start);
    if (comma == std::string::npos) comma = names_csv.size();
    names.push_back(names_csv.substr(start, comma - start));
    start = comma + 1;
  }
  if (names.empty()) {
    const std::vector<std::string> def = cell == RnnCell::rnn   ? std::vector<std::string>{"Tanh"}
                                         : cell == RnnCell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), def.begin(), def.end());
  }
  if (static_cast<int64_t>(names.size()) != rnn_functions(cell) * dirs)
    return "activations lists " + std::to_string(names.size()) + " functions, expected " +
           std::to_string(rnn_functions(cell) * dirs);
  size_t ia = 0, ib = 0;
  auto alpha = [&](double def) { return ia < alphas.size() ? static_cast<double>(alphas[ia++]) : def; };
  auto beta = [&](double def) { return ib < betas.size() ? static_cast<double>(betas[ib++]) : def; };
  out.clear();
  for (const std::string& n : names) {
    RnnFunction f;
    if (n == "Sigmoid") {
      f.kind = RnnActivation::sigmoid;
    } else if (n == "Tanh") {
      f.kind = RnnActivation::tanh;
    } else if (n == "Relu") {
      f.kind = RnnActivation::relu;
    } else if (n == "Softsign") {
      f.kind = RnnActivation::softsign;
    } else if (n == "Softplus") {
      f.kind = RnnActivation::softplus;
    } else if (n == "LeakyRelu") {
      f = {RnnActivation::leaky_relu, alpha(0.01), 0};
    } else if (n == "ThresholdedRelu") {
      f = {RnnActivation::thresholded_relu, alpha(1.0), 0};
    } else if (n == "Elu") {
      f = {RnnActivation::elu, alpha(1.0), 0};
    } else if (n == "HardSigmoid") {
      const double al = alpha(0.2);
      f = {RnnActivation::hard_sigmoid, al, beta(0.5)};
    } else if (n == "Affine") {
      const double al = alpha(1.0);
      f = {RnnActivation::affine, al, beta(0.0)};
    } else if (n == "ScaledTanh") {
      const double al = alpha(1.0);
      f = {RnnActivation::scaled_tanh, al, beta(1.0)};
    } else {
      return "unknown activation '" + n + "'";
    }
    out.push_back(f);
  }
  return "";
}

struct RnnSpec {
  RnnCell cell = RnnCell::lstm;
  std::vector<RnnFunction> functions;  // rnn_functions(cell) per direction
  double clip = 0;                     // > 0: pre-activations clipped to [-clip, clip]
  bool reverse = false;                // direction "reverse" (bidirectional: dirs == 2)
  int64_t layout = 0, linear_before_reset = 0;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
};

// Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h and Y_c
// [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]), resized here. `in` reads the operands
// (0 X, 1 W, 2 R, 3 B, 4 sequence_lens, 5 initial_h, 6 initial_c, 7 P): in.given(i),
// in.value(i, k) (element k as double) and in.length(b) (sequence_lens[b]); shapes as ONNX
// states them (the callers check them), lengths in [0, seq].
template <typename Reader>
void rnn_run(const RnnSpec& s, const Reader& in, std::vector<double>& y, std::vector<double>& yh,
             std::vector<double>& yc) {
  const int64_t S = s.seq, B = s.batch, I = s.input, H = s.hidden, D = s.dirs;
  const int64_t G = rnn_gates(s.cell);
  auto clipped = [&](double v) { return s.clip > 0 ? std::clamp(v, -s.clip, s.clip) : v; };
  auto x_at = [&](int64_t t, int64_t b, int64_t i) {
    return in.value(0, s.layout ? (b * S + t) * I + i : (t * B + b) * I + i);
  };
  auto state_at = [&](int64_t dir, int64_t b, int64_t h) {
    return s.layout ? (b * D + dir) * H + h : (dir * B + b) * H + h;
  };
  y.assign(static_cast<size_t>(S * D * B * H), 0.0);
  yh.assign(static_cast<size_t>(D * B * H), 0.0);
  yc.assign(static_cast<size_t>(D * B * H), 0.0);
  for (int64_t dir = 0; dir < D; ++dir) {
    const bool reverse = s.reverse || dir == 1;
    const RnnFunction* f = &s.functions[dir * rnn_functions(s.cell)];
    auto w = [&](int64_t row, int64_t i) { return in.value(1, (dir * G * H + row) * I + i); };
    auto r = [&](int64_t row, int64_t h) { return in.value(2, (dir * G * H + row) * H + h); };
    auto bias = [&](int64_t k) { return in.given(3) ? in.value(3, dir * 2 * G * H + k) : 0.0; };
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = in.given(4) ? in.length(b) : S;
      std::vector<double> h(H, 0.0), c(H, 0.0), hn(H), pre(G * H);
      for (int64_t k = 0; k < H; ++k) {
        if (in.given(5)) h[k] = in.value(5, state_at(dir, b, k));
        if (s.cell == RnnCell::lstm && in.given(6)) c[k] = in.value(6, state_at(dir, b, k));
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        // pre[row] = X_t W_row + Wb_row (+ H R_row + Rb_row except GRU's candidate).
        for (int64_t row = 0; row < G * H; ++row) {
          double sum = bias(row);
          for (int64_t i = 0; i < I; ++i) sum += x_at(t, b, i) * w(row, i);
          pre[row] = sum;
        }
        auto rec = [&](int64_t row, const std::vector<double>& hv) {
          double sum = bias(G * H + row);
          for (int64_t k = 0; k < H; ++k) sum += hv[k] * r(row, k);
          return sum;
        };
        if (s.cell == RnnCell::rnn) {
          for (int64_t k = 0; k < H; ++k) hn[k] = f[0](clipped(pre[k] + rec(k, h)));
        } else if (s.cell == RnnCell::gru) {
          std::vector<double> z(H), rs(H), rh(H);
          for (int64_t k = 0; k < H; ++k) {
            z[k] = f[0](clipped(pre[k] + rec(k, h)));
            rs[k] = f[0](clipped(pre[H + k] + rec(H + k, h)));
          }
          for (int64_t k = 0; k < H; ++k) rh[k] = rs[k] * h[k];
          for (int64_t k = 0; k < H; ++k) {
            const double cand = s.linear_before_reset ? pre[2 * H + k] + rs[k] * rec(2 * H + k, h)
                                                      : pre[2 * H + k] + rec(2 * H + k, rh);
            hn[k] = (1 - z[k]) * f[1](clipped(cand)) + z[k] * h[k];
          }
        } else {
          auto peep = [&](int64_t gate, int64_t k) {
            return in.given(7) ? in.value(7, dir * 3 * H + gate * H + k) : 0.0;
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
          y[s.layout ? ((b * S + t) * D + dir) * H + k : ((t * D + dir) * B + b) * H + k] = h[k];
      }
      for (int64_t k = 0; k < H; ++k) {
        yh[state_at(dir, b, k)] = h[k];
        yc[state_at(dir, b, k)] = c[k];
      }
    }
  }
}

}  // namespace collage::rt_dynamic
