// RNN, GRU and LSTM in the dynamic module, for the variants the oneDNN backend does not take
// (peepholes, clip, other activations, per-batch sequence lengths): the recurrence the reference
// kernel computes (runtime/algorithms/dyn_recurrent.h), in double, on f32 or f64 operands.
// Lists: [reverse, dirs], [layout], [linear_before_reset], [hidden_size], [clip's f64 bits],
// activation kinds, their alphas' and betas' f64 bits, and which of Y, Y_h, Y_c (0, 1, 2) each
// output of the kernel is.
#include <cstring>

#include "dyn_recurrent.h"
#include "dyn_value.h"

namespace collage::rt_dynamic {
namespace {

double f64_of(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

struct Reader {
  const std::vector<Value>& in;
  bool given(size_t i) const { return in.size() > i && in[i].data != nullptr; }
  double value(size_t i, int64_t k) const {
    return in[i].dtype == COLLAGE_DTYPE_F64 ? in[i].as<double>()[k] : in[i].as<float>()[k];
  }
  int64_t length(int64_t b) const { return int_at(in[4], b); }
};

void check_shape(const Reader& r, size_t i, const std::vector<int64_t>& want, const char* name,
                 int32_t dtype) {
  if (!r.given(i)) return;
  const Value& v = r.in[i];
  if (v.shape != want || (i != 4 && v.dtype != dtype))
    throw KernelError(std::string(name) + " is " + type_text(v.dtype, v.shape) + ", expected " +
                      type_text(i == 4 ? v.dtype : dtype, want));
}

void recurrent(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  RnnSpec s;
  s.cell = p.op == DynOp::rnn ? RnnCell::rnn : p.op == DynOp::gru ? RnnCell::gru : RnnCell::lstm;
  const std::vector<int64_t>& dir = p.list(0);
  if (dir.size() != 2 || dir[1] < 1 || dir[1] > 2) throw KernelError("bad direction parameters");
  s.reverse = dir[0] != 0;
  s.dirs = dir[1];
  s.layout = p.value(1, 0);
  s.linear_before_reset = p.value(2, 0);
  s.hidden = p.value(3, 0);
  s.clip = f64_of(p.value(4, 0));
  const std::vector<int64_t>& kinds = p.list(5);
  if (static_cast<int64_t>(kinds.size()) != rnn_functions(s.cell) * s.dirs ||
      p.list(6).size() != kinds.size() || p.list(7).size() != kinds.size())
    throw KernelError("bad activation parameters");
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < 0 || kinds[i] >= static_cast<int64_t>(RnnActivation::count_))
      throw KernelError("activation code " + std::to_string(kinds[i]));
    s.functions.push_back({static_cast<RnnActivation>(kinds[i]), f64_of(p.list(6)[i]),
                           f64_of(p.list(7)[i])});
  }
  const Reader r{in};
  const Value& x = in[0];
  if (x.dtype != COLLAGE_DTYPE_F32 && x.dtype != COLLAGE_DTYPE_F64)
    throw KernelError("X is " + type_text(x.dtype, x.shape) + ", expected f32 or f64");
  if (x.shape.size() != 3) throw KernelError("X is " + type_text(x.dtype, x.shape) + ", expected rank 3");
  s.seq = s.layout ? x.shape[1] : x.shape[0];
  s.batch = s.layout ? x.shape[0] : x.shape[1];
  s.input = x.shape[2];
  const int64_t G = rnn_gates(s.cell), H = s.hidden, D = s.dirs, B = s.batch;
  if (H < 1) throw KernelError("hidden_size " + std::to_string(H));
  check_shape(r, 1, {D, G * H, s.input}, "W", x.dtype);
  check_shape(r, 2, {D, G * H, H}, "R", x.dtype);
  check_shape(r, 3, {D, 2 * G * H}, "B", x.dtype);
  check_shape(r, 4, {B}, "sequence_lens", x.dtype);
  const std::vector<int64_t> state = s.layout ? std::vector<int64_t>{B, D, H}
                                              : std::vector<int64_t>{D, B, H};
  check_shape(r, 5, state, "initial_h", x.dtype);
  if (s.cell == RnnCell::lstm) {
    check_shape(r, 6, state, "initial_c", x.dtype);
    check_shape(r, 7, {D, 3 * H}, "P", x.dtype);
  }
  if (r.given(4))
    for (int64_t b = 0; b < B; ++b)
      if (const int64_t len = r.length(b); len < 0 || len > s.seq)
        throw KernelError("sequence_lens[" + std::to_string(b) + "] is " + std::to_string(len) +
                          ", outside [0, " + std::to_string(s.seq) + "]");
  std::vector<double> y, yh, yc;
  rnn_run(s, r, y, yh, yc);
  const std::vector<double>* values[] = {&y, &yh, &yc};
  const std::vector<int64_t> y_shape = s.layout ? std::vector<int64_t>{B, s.seq, D, H}
                                                : std::vector<int64_t>{s.seq, D, B, H};
  const std::vector<int64_t>& slots = p.list(8);
  if (slots.size() != out.count()) throw KernelError("bad output parameters");
  for (size_t o = 0; o < out.count(); ++o) {
    const int64_t slot = slots[o];
    if (slot < 0 || slot > (s.cell == RnnCell::lstm ? 2 : 1) || out.dtype(o) != x.dtype)
      throw KernelError("output " + std::to_string(o) + " is not Y, Y_h or Y_c of X's type");
    const std::vector<double>& v = *values[slot];
    uint8_t* dst = out.make(o, slot == 0 ? y_shape : state);
    for (size_t i = 0; i < v.size(); ++i) {
      if (x.dtype == COLLAGE_DTYPE_F64)
        reinterpret_cast<double*>(dst)[i] = v[i];
      else
        reinterpret_cast<float*>(dst)[i] = static_cast<float>(v[i]);
    }
  }
}

}  // namespace

bool run_recurrent_op(const DynParams& p, const std::vector<Value>& in, Outputs& out) {
  if (p.op != DynOp::rnn && p.op != DynOp::gru && p.op != DynOp::lstm) return false;
  recurrent(p, in, out);
  return true;
}

}  // namespace collage::rt_dynamic
