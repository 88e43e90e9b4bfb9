// DynParams: operator names and the binary form (dyn_params.h).
#include "dyn_params.h"

#include <array>
#include <cstring>

#include "dyn_bytes.h"

namespace collage::rt_dynamic {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(DynOp::count_)> kNames = {
    "NonZero", "NonMaxSuppression", "Unique", "Gather", "Slice", "Squeeze", "Unsqueeze",
    "Reshape", "Transpose", "Concat", "Cast", "Identity", "Add", "Sub", "Mul", "Div", "Greater",
    "Less", "Equal", "Relu", "Sigmoid", "Exp", "Neg", "Abs", "Sqrt", "ReduceSum", "ReduceMean",
    "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare",
    "ReduceLogSum", "ReduceLogSumExp", "Expand", "Tile", "ConstantOfShape", "Range", "Pad",
    "Split", "Resize", "TopK", "Log", "Cos", "Sin", "SVMPairwiseCoupling", "HannWindow",
    "HammingWindow", "BlackmanWindow", "MelWeightMatrix", "CenterCropPad", "Col2Im", "AffineGrid",
    "Shape", "Dropout", "CumSum", "CumProd", "ScatterND", "ScatterElements",
    "Pow", "MaxUnpool", "TfIdfVectorizer", "RNN", "GRU", "LSTM", "MatMul", "If", "Loop", "Scan",
    "Tanh", "Not", "And", "Or", "ArgMax", "Gemm", "GatherElements"};

}  // namespace

std::string_view dyn_op_name(DynOp op) {
  return op < DynOp::count_ ? kNames[static_cast<size_t>(op)] : "?";
}

DynOp dyn_op_of(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<DynOp>(i);
  return DynOp::count_;
}

const std::vector<int64_t>& DynParams::list(size_t i) const {
  static const std::vector<int64_t> kEmpty;
  return i < lists.size() ? lists[i] : kEmpty;
}

int64_t DynParams::value(size_t i, int64_t fallback) const {
  return list(i).empty() ? fallback : list(i).front();
}

std::vector<uint8_t> encode_params(const DynParams& p) {
  std::vector<uint8_t> out;
  put_u32(out, kParamsMagic);
  put_u32(out, kParamsVersion);
  out.push_back(static_cast<uint8_t>(p.op));
  auto put_list = [&](const std::vector<int64_t>& l) {
    put_u32(out, static_cast<uint32_t>(l.size()));
    for (int64_t v : l) put_i64(out, v);
  };
  put_list(p.sources);
  put_list(p.list_sources);
  put_u32(out, static_cast<uint32_t>(p.lists.size()));
  for (const auto& l : p.lists) put_list(l);
  put_u32(out, static_cast<uint32_t>(p.bodies.size()));
  for (const auto& b : p.bodies) {
    put_u32(out, static_cast<uint32_t>(b.size()));
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

std::string decode_params(const uint8_t* data, size_t size, DynParams* out) {
  Reader r(data, size);
  uint32_t magic = 0, version = 0, lists = 0;
  uint8_t op = 0;
  if (!r.u32(&magic) || magic != kParamsMagic) return "parameters without the DYNP magic";
  // Version 1 had no list sources.
  if (!r.u32(&version) || version < 1 || version > kParamsVersion)
    return "parameters of version " + std::to_string(version) + "; this module reads versions 1 to " +
           std::to_string(kParamsVersion);
  if (!r.u8(&op) || op >= static_cast<uint8_t>(DynOp::count_))
    return "unknown operator " + std::to_string(op);
  out->op = static_cast<DynOp>(op);
  auto get_list = [&](std::vector<int64_t>& l) {
    uint32_t n = 0;
    if (!r.u32(&n) || n > r.left() / 8) return false;
    l.resize(n);
    for (int64_t& v : l) r.i64(&v);
    return true;
  };
  if (!get_list(out->sources) || (version >= 2 && !get_list(out->list_sources)))
    return "truncated parameters";
  for (int64_t s : out->list_sources)
    if (s < -1 || s >= static_cast<int64_t>(out->sources.size()))
      return "a list source " + std::to_string(s) + " names no operand";
  if (!r.u32(&lists) || lists > r.left() / 4) return "truncated parameters";
  out->lists.assign(lists, {});
  for (auto& l : out->lists)
    if (!get_list(l)) return "truncated parameters";
  uint32_t bodies = 0;
  if (version >= 3 && (!r.u32(&bodies) || bodies > r.left() / 4))
    return "truncated parameters";
  out->bodies.assign(bodies, {});
  for (auto& b : out->bodies) {
    uint32_t n = 0;
    if (!r.u32(&n) || n > r.left()) return "truncated parameters: a body";
    if (!r.bytes(n, &b)) return "truncated parameters: a body";
  }
  if (is_control_flow(out->op) != !out->bodies.empty())
    return std::string(dyn_op_name(out->op)) +
           (out->bodies.empty() ? " without bodies" : " with bodies");
  if (r.left() != 0) return "trailing bytes after the parameters";
  return "";
}

}  // namespace collage::rt_dynamic
