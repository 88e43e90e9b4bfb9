// Elementwise programs on Eigen arrays: validation, dimension merging and the chunked evaluator.
#include "eigen_elementwise.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

namespace collage::rt_eigen {
namespace {

constexpr size_t kMaxOperands = 16;
constexpr size_t kMaxSteps = 64;
// Elements processed per pass of the program, so a chunk stays in L1 across its steps.
constexpr int64_t kChunk = 512;

using Array = Eigen::Array<float, Eigen::Dynamic, 1>;
using ArrayMap = Eigen::Map<Array>;
using ConstArrayMap = Eigen::Map<const Array>;

// The operand elements of one chunk: `n` consecutive elements with `stride` (0: broadcast).
struct View {
  const float* p = nullptr;
  int64_t stride = 0;
};

// Scratch buffers of one chunk (on the stack of the calling thread).
struct Scratch {
  alignas(64) float gathered[kChunk];
  alignas(64) float tmp[kChunk];
};

// The operand elements of a chunk as a contiguous array (gathered when strided). Not for
// broadcast (stride 0) operands.
const float* contiguous(const View& v, int64_t n, Scratch& s) {
  if (v.stride == 1) return v.p;
  for (int64_t i = 0; i < n; ++i) s.gathered[i] = v.p[i * v.stride];
  return s.gathered;
}

// Calls f(a, b) with the running value y and the operand as Eigen expressions (the operand as a
// scalar when broadcast), in the order the step asks for, and stores the result in y.
template <typename F>
void binary(ArrayMap& y, const View& v, bool operand_first, Scratch& s, F f) {
  if (v.stride == 0) {
    const float x = *v.p;
    if (operand_first)
      y = f(x, y);
    else
      y = f(y, x);
    return;
  }
  ConstArrayMap x(contiguous(v, y.size(), s), y.size());
  if (operand_first)
    y = f(x, y);
  else
    y = f(y, x);
}

void run_step(const EwStep& st, ArrayMap& y, const View* views, Scratch& s) {
  const View& v = st.operand >= 0 ? views[st.operand] : views[0];
  const bool first = st.operand_first;
  switch (st.op) {
    case EwOp::load:
      if (v.stride == 0) {
        y.setConstant(*v.p);
      } else {
        y = ConstArrayMap(contiguous(v, y.size(), s), y.size());
      }
      return;
    case EwOp::add:
      binary(y, v, first, s, [](const auto& a, const auto& b) { return a + b; });
      return;
    case EwOp::add_scaled:
      binary(y, v, false, s, [k = st.p0](const auto& a, const auto& b) { return a + k * b; });
      return;
    case EwOp::sub:
      binary(y, v, first, s, [](const auto& a, const auto& b) { return a - b; });
      return;
    case EwOp::mul:
      binary(y, v, first, s, [](const auto& a, const auto& b) { return a * b; });
      return;
    case EwOp::div:
      binary(y, v, first, s, [](const auto& a, const auto& b) { return a / b; });
      return;
    case EwOp::pow: {
      // std::pow keeps ONNX's integer-exponent cases (negative bases) exact.
      const int64_t n = y.size();
      for (int64_t i = 0; i < n; ++i) {
        const float x = v.p[i * v.stride];
        y[i] = first ? std::pow(x, y[i]) : std::pow(y[i], x);
      }
      return;
    }
    case EwOp::prelu:
      if (v.stride == 0) {
        y = (y < 0.f).select(*v.p * y, y);
      } else {
        y = (y < 0.f).select(ConstArrayMap(contiguous(v, y.size(), s), y.size()) * y, y);
      }
      return;
    case EwOp::relu:
      y = (y < 0.f).select(0.f, y);
      return;
    case EwOp::sigmoid: {
      // exp of -|x| only, as the reference does, so neither tail overflows or loses precision.
      ArrayMap e(s.tmp, y.size());
      e = (-y.abs()).exp();
      y = (y >= 0.f).select(1.f, e) / (1.f + e);
      return;
    }
    case EwOp::tanh:
      y = y.tanh();
      return;
    case EwOp::gelu_erf:
      // 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2), which does not cancel for negative x.
      y = y.unaryExpr([](float x) { return 0.5f * x * std::erfc(x * -0.70710678118654752f); });
      return;
    case EwOp::gelu_tanh: {
      // 1 + tanh(z) = 2 / (1 + exp(-2z)).
      constexpr float kSqrt2OverPi = 0.79788456080286536f;
      ArrayMap e(s.tmp, y.size());
      e = (-2.f * kSqrt2OverPi * (y + 0.044715f * y * y * y)).exp();
      y = y / (1.f + e);
      return;
    }
    case EwOp::exp:
      y = y.exp();
      return;
    case EwOp::log:
      y = y.log();
      return;
    case EwOp::sqrt:
      y = y.sqrt();
      return;
    case EwOp::reciprocal:
      y = 1.f / y;
      return;
    case EwOp::neg:
      y = -y;
      return;
    case EwOp::abs:
      y = y.abs();
      return;
    case EwOp::erf:
      y = y.unaryExpr([](float x) { return std::erf(x); });
      return;
    case EwOp::leaky_relu:
      y = (y < 0.f).select(st.p0 * y, y);
      return;
    case EwOp::hard_sigmoid:
      y = (st.p0 * y + st.p1).max(0.f).min(1.f);
      return;
    case EwOp::hard_swish:
      y = y * (y * (1.f / 6.f) + 0.5f).max(0.f).min(1.f);
      return;
    case EwOp::clip:
      // When min > max every element becomes max, as ONNX specifies.
      y = y.max(st.p0).min(st.p1);
      return;
    case EwOp::count_:
      return;
  }
}

bool may_take_operand_first(EwOp op) {
  return op == EwOp::add || op == EwOp::sub || op == EwOp::mul || op == EwOp::div ||
         op == EwOp::pow;
}

}  // namespace

std::string EwEngine::init(const EwProgram& program, const KernelSetup& setup, int64_t numel) {
  const std::vector<int64_t>& shape = program.shape;
  const size_t rank = shape.size();
  const int64_t shape_numel = checked_numel(shape);
  if (shape_numel < 0) return "elementwise program: negative or oversized shape";
  if (shape_numel != numel)
    return "elementwise program: shape has " + std::to_string(shape_numel) +
           " elements, the output " + std::to_string(numel);
  if (program.operands.size() > kMaxOperands)
    return "elementwise program: " + std::to_string(program.operands.size()) +
           " operands (at most " + std::to_string(kMaxOperands) + ")";
  if (program.steps.size() > kMaxSteps)
    return "elementwise program: " + std::to_string(program.steps.size()) + " steps (at most " +
           std::to_string(kMaxSteps) + ")";
  for (size_t j = 0; j < program.operands.size(); ++j) {
    const EwOperand& o = program.operands[j];
    const std::string what = "elementwise operand " + std::to_string(j);
    if (o.strides.size() != rank)
      return what + ": " + std::to_string(o.strides.size()) + " strides for rank " +
             std::to_string(rank);
    int64_t extent = numel > 0 ? 1 : 0;
    for (size_t d = 0; d < rank && numel > 0; ++d) {
      const int64_t reach = checked_mul(shape[d] - 1, o.strides[d]);
      if (reach < 0 || extent + reach > kMaxExtent) return what + ": bad stride";
      extent += reach;
    }
    if (std::string e = setup.check_operand(o.ref, extent, what.c_str()); !e.empty()) return e;
  }
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const EwStep& st = program.steps[i];
    const std::string what = "elementwise step " + std::to_string(i);
    if (ew_op_takes_operand(st.op)) {
      if (st.operand < 0 || static_cast<size_t>(st.operand) >= program.operands.size())
        return what + ": operand " + std::to_string(st.operand) + " does not exist";
      if (st.operand_first && !may_take_operand_first(st.op))
        return what + ": this operation cannot take its operand first";
    } else if (st.operand != -1 || st.operand_first) {
      return what + ": a unary operation has an operand";
    }
    if (st.op == EwOp::load && i != 0) return what + ": load may only be the first step";
  }
  steps_ = program.steps;
  constants_ = setup.constant_data();
  if (numel == 0) {
    steps_.clear();  // nothing to compute; strides were not checked
    return {};
  }

  // Merge an outer dimension into the next inner one when every operand steps through both as
  // one: stride(outer) == stride(inner) * extent(inner). Size-1 dimensions are dropped.
  dims_.clear();
  operands_.assign(program.operands.size(), {});
  for (size_t j = 0; j < operands_.size(); ++j) operands_[j].ref = program.operands[j].ref;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    bool merge = !dims_.empty();
    for (size_t j = 0; j < operands_.size() && merge; ++j)
      merge = operands_[j].strides.back() == program.operands[j].strides[d] * shape[d];
    if (merge) {
      dims_.back() *= shape[d];
      for (size_t j = 0; j < operands_.size(); ++j)
        operands_[j].strides.back() = program.operands[j].strides[d];
    } else {
      dims_.push_back(shape[d]);
      for (size_t j = 0; j < operands_.size(); ++j)
        operands_[j].strides.push_back(program.operands[j].strides[d]);
    }
  }
  if (dims_.empty()) {
    dims_.push_back(1);
    for (Operand& o : operands_) o.strides.push_back(0);
  }
  return {};
}

void EwEngine::apply(float* out, void* const* args, int64_t begin, int64_t end) const {
  if (steps_.empty() || begin >= end) return;
  const OperandTable table(constants_);
  const size_t nops = operands_.size();
  const float* base[kMaxOperands];
  for (size_t j = 0; j < nops; ++j) base[j] = table.get(operands_[j].ref, args);
  const size_t outer_rank = dims_.size() - 1;
  const int64_t row_len = dims_.back();
  Scratch scratch;
  View views[kMaxOperands];
  for (int64_t f = begin; f < end;) {
    const int64_t row = f / row_len, col = f % row_len;
    const int64_t len = std::min(row_len - col, end - f);
    int64_t offset[kMaxOperands] = {};
    for (int64_t r = row, d = static_cast<int64_t>(outer_rank) - 1; d >= 0; --d) {
      const int64_t idx = r % dims_[d];
      r /= dims_[d];
      for (size_t j = 0; j < nops; ++j) offset[j] += idx * operands_[j].strides[d];
    }
    for (int64_t c = 0; c < len; c += kChunk) {
      const int64_t n = std::min(kChunk, len - c);
      for (size_t j = 0; j < nops; ++j) {
        const int64_t inner = operands_[j].strides[outer_rank];
        views[j] = {base[j] + offset[j] + (col + c) * inner, inner};
      }
      ArrayMap y(out + f + c, n);
      for (const EwStep& st : steps_) run_step(st, y, views, scratch);
    }
    f += len;
  }
}

}  // namespace collage::rt_eigen
