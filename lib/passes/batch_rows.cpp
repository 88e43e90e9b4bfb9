// trace_batch_rows: the batch axis of every value, propagated node by node with a rule per kind
// of operator; any node whose rows could mix stops the trace with its name.
#include "passes/batch_rows.h"

#include <cstring>

#include "collage/ops.h"
#include "core/str_cat.h"
#include "ir/attr_inputs.h"

namespace collage {
namespace {

constexpr int kNone = -1;

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

int normalized(int64_t axis, size_t rank) {
  return static_cast<int>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// All slices of `t` along `axis` are equal, so any row of it serves every batch row.
bool rows_equal(const Tensor& t, int axis) {
  const Shape& s = t.shape();
  const int64_t outer = product(s, 0, axis), n = s[axis], inner = product(s, axis + 1, s.size());
  const size_t row = static_cast<size_t>(inner) * dtype_size(t.dtype());
  const auto* p = static_cast<const uint8_t*>(t.raw());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 1; i < n; ++i)
      if (std::memcmp(p + (o * n + i) * row, p + o * n * row, row) != 0) return false;
  return true;
}

class Tracer {
 public:
  Tracer(const Graph& g, int64_t batch) : g_(g), batch_(batch), axis_(g.values().size(), kNone) {}

  void set_input(ValueId v, int axis) { axis_[v] = axis; }
  int axis(ValueId v) const { return v == kNoValue ? kNone : axis_[v]; }

  // `n` gathers one scalar index along its data's batch axis.
  bool picks_row(const Node& n) const {
    if (n.op_name() != "Gather" || n.inputs.size() < 2) return false;
    const int a = axis(n.inputs[0]);
    const size_t rank = type(n.inputs[0]).shape.size();
    return a != kNone && a == normalized(n.get<GatherAttrs>().axis, rank) &&
           axis(n.inputs[1]) == kNone && type(n.inputs[1]).shape.empty();
  }

  absl::Status node(const Node& n) {
    bool batched = false;
    for (ValueId v : n.inputs) batched = batched || axis(v) != kNone;
    if (!batched) return absl::OkStatus();  // computed from constants and unbatched inputs only
    auto out = rule(n);
    if (!out.ok()) return out.status();
    for (ValueId v : n.outputs) axis_[v] = *out;
    return absl::OkStatus();
  }

 private:
  absl::Status mixes(const Node& n, std::string_view why) const {
    return absl::FailedPreconditionError(
        str_cat(n.op_name(), " '", n.name, "' ", why, ", so a smaller batch cannot be padded to "
                "a compiled one"));
  }
  const TensorType& type(ValueId v) const { return g_.value(v).type; }

  // An unbatched input whose axis `pos` meets the batch axis: size 1 broadcasts; the batch size
  // is fine for a constant whose rows are all equal.
  bool fits_unbatched(ValueId v, int pos) const {
    const Shape& s = type(v).shape;
    if (pos < 0 || pos >= static_cast<int>(s.size()) || s[pos] == 1) return true;
    const Tensor* c = g_.constant_of(v);
    return c && s[pos] == batch_ && rows_equal(*c, pos);
  }

  // Elementwise and broadcasting operators: the batch axes of the inputs align at one output axis.
  absl::StatusOr<int> broadcast(const Node& n) const {
    const size_t rank = type(n.outputs[0]).shape.size();
    int out = kNone;
    for (ValueId v : n.inputs)
      if (axis(v) != kNone) {
        const int pos = axis(v) + static_cast<int>(rank - type(v).shape.size());
        if (out != kNone && out != pos) return mixes(n, "combines batch rows along different axes");
        out = pos;
      }
    for (ValueId v : n.inputs)
      if (v != kNoValue && axis(v) == kNone &&
          !fits_unbatched(v, out - static_cast<int>(rank - type(v).shape.size())))
        return mixes(n, "combines the batch rows with a tensor that differs from row to row");
    return out;
  }

  // Inputs other than the first must not be batched (weights, scales, indices of a table).
  bool only_first_batched(const Node& n) const {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (axis(n.inputs[i]) != kNone) return false;
    return true;
  }

  // A reshape of row-major data keeps batch rows apart when the batch axis survives whole: the
  // same block of elements before it and after it.
  absl::StatusOr<int> reshape(const Node& n) const {
    const Shape& in = type(n.inputs[0]).shape;
    const Shape& out = type(n.outputs[0]).shape;
    const int a = axis(n.inputs[0]);
    const int64_t before = product(in, 0, a), after = product(in, a + 1, in.size());
    for (size_t j = 0; j < out.size(); ++j)
      if (out[j] == in[a] && product(out, 0, j) == before &&
          product(out, j + 1, out.size()) == after)
        return static_cast<int>(j);
    return mixes(n, "merges the batch axis with another");
  }

  absl::StatusOr<int> matmul(const Node& n) const {
    const ValueId a = n.inputs[0], b = n.inputs[1];
    const size_t ra = type(a).shape.size(), rb = type(b).shape.size();
    const size_t ro = type(n.outputs[0]).shape.size();
    int out = kNone;
    if (axis(a) != kNone) {
      if (axis(a) == static_cast<int>(ra) - 1 || ra == 1)
        return mixes(n, "sums over the batch axis");
      out = axis(a) + static_cast<int>(ro - ra);  // a batch dimension, or the rows
    }
    if (axis(b) != kNone) {
      if (rb == 1 || axis(b) == static_cast<int>(rb) - 2)
        return mixes(n, "sums over the batch axis");
      const int pos = axis(b) + static_cast<int>(ro - rb);  // a batch dimension, or the columns
      if (out != kNone && out != pos)
        return mixes(n, "multiplies rows of one batch by columns of another");
      out = pos;
    }
    // An unbatched side broadcasting over the batch dimension must have size 1 there.
    if (out < static_cast<int>(ro) - 2) {
      for (ValueId v : {a, b})
        if (axis(v) == kNone &&
            !fits_unbatched(v, out - static_cast<int>(ro - type(v).shape.size())))
          return mixes(n, "multiplies the batch by a tensor that differs from row to row");
    }
    return out;
  }

  absl::StatusOr<int> rule(const Node& n) const {
    // Its attributes are not what it computes with: its axes or shape come when the model runs.
    if (reads_attr_inputs(n)) return mixes(n, "takes an attribute computed at run time");
    const std::string& op = n.op_name();
    const int a = axis(n.inputs[0]);
    const size_t rank = n.inputs[0] == kNoValue ? 0 : type(n.inputs[0]).shape.size();
    auto unless = [&](bool ok, std::string_view why) -> absl::StatusOr<int> {
      if (!ok) return mixes(n, why);
      return a;
    };
    if (op == "MaxPool" && n.outputs.size() > 1)
      return mixes(n, "numbers its Indices across the whole batch");
    if (op == "Conv" || op == "ConvTranspose" || op == "MaxPool" || op == "AveragePool" ||
        op == "GlobalAveragePool" || op == "BatchNormalization" ||
        op == "InstanceNormalization" || op == "TreeEnsemble")
      return unless(a == 0 && only_first_batched(n), "is batched on another axis than the first");
    if (op == "Resize")
      return unless(a == 0 && type(n.outputs[0]).shape[0] == type(n.inputs[0]).shape[0],
                    "resizes the batch axis");
    if (op == "MatMul") return matmul(n);
    if (op == "Gemm") {
      const auto& g = n.get<GemmAttrs>();
      if (axis(n.inputs[0]) != (g.transA ? 1 : 0) || axis(n.inputs[1]) != kNone)
        return mixes(n, "sums over the batch axis");
      if (n.inputs.size() > 2 && axis(n.inputs[2]) != kNone && axis(n.inputs[2]) +
              2 - static_cast<int>(type(n.inputs[2]).shape.size()) != 0)
        return mixes(n, "adds a bias batched on the columns");
      return 0;
    }
    if (op == "Softmax" || op == "LogSoftmax")
      return unless(normalized(n.get<SoftmaxAttrs>().axis, rank) != a, "normalises over the batch");
    if (op == "LayerNormalization")
      return unless(a < normalized(n.get<LayerNormalizationAttrs>().axis, rank) &&
                        only_first_batched(n),
                    "normalises over the batch");
    if (op == "ArgMax") {
      const auto& m = n.get<ArgMaxAttrs>();
      const int ax = normalized(m.axis, rank);
      if (ax == a) return mixes(n, "reduces over the batch axis");
      return a - (ax < a && !m.keepdims);
    }
    if (n.op->fusion == FusionKind::reduction) {
      const auto* r = dynamic_cast<const ReduceAttrs*>(n.attrs.get());
      if (!r) return mixes(n, "is not known to keep batch rows apart");
      if (r->axes.empty() && r->noop_with_empty_axes) return a;
      if (r->axes.empty()) return mixes(n, "reduces over every axis, the batch's too");
      int removed = 0;
      for (int64_t x : r->axes) {
        const int ax = normalized(x, rank);
        if (ax == a) return mixes(n, "reduces over the batch axis");
        removed += ax < a && !r->keepdims;
      }
      return a - removed;
    }
    if (op == "Transpose") {
      const auto& perm = n.get<TransposeAttrs>().perm;
      for (size_t j = 0; j < rank; ++j) {
        const int64_t from = perm.empty() ? static_cast<int64_t>(rank - 1 - j) : perm[j];
        if (from == a) return static_cast<int>(j);
      }
      return mixes(n, "has no batch axis in its permutation");
    }
    if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze")
      return reshape(n);
    if (op == "Concat") {
      // The batch axis of the first batched input (the first input may be a constant).
      int b = kNone;
      for (ValueId v : n.inputs)
        if (b == kNone) b = axis(v);
      const int ax = normalized(n.get<ConcatAttrs>().axis, rank);
      if (ax == b) return mixes(n, "concatenates along the batch axis");
      for (ValueId v : n.inputs)
        if (axis(v) == kNone ? (!fits_unbatched(v, b) || type(v).shape[b] != batch_)
                             : (axis(v) != b))
          return mixes(n, "concatenates tensors batched differently");
      return b;
    }
    if (op == "Split")
      return unless(normalized(n.get<SplitAttrs>().axis, rank) != a, "splits the batch axis");
    if (op == "Slice") {
      const auto& s = n.get<SliceAttrs>();
      for (size_t i = 0; i < s.starts.size(); ++i) {
        const int ax = normalized(s.axes.empty() ? static_cast<int64_t>(i) : s.axes[i], rank);
        const int64_t step = s.steps.empty() ? 1 : s.steps[i];
        // A step of 1 keeping the whole axis starts at its first row.
        if (ax == a && (step != 1 || type(n.outputs[0]).shape[a] != batch_))
          return mixes(n, "slices the batch axis");
      }
      return a;
    }
    if (op == "Pad") {
      const auto& p = n.get<PadAttrs>().pads;
      return unless(n.get<PadAttrs>().axes.empty() && p.size() == 2 * rank && p[a] == 0 &&
                        p[a + rank] == 0,
                    "pads the batch axis");
    }
    if (op == "Tile") {
      const auto& r = n.get<TileAttrs>().repeats;
      return unless(static_cast<size_t>(a) < r.size() && r[a] == 1, "repeats the batch axis");
    }
    if (op == "Expand") {
      const Shape& out = type(n.outputs[0]).shape;
      const int pos = a + static_cast<int>(out.size() - rank);
      if (out[pos] != type(n.inputs[0]).shape[a]) return mixes(n, "expands the batch axis");
      return pos;
    }
    if (op == "Gather") {
      const int ax = normalized(n.get<GatherAttrs>().axis, rank);
      const int ai = axis(n.inputs[1]);
      const int ri = static_cast<int>(type(n.inputs[1]).shape.size());
      if (a != kNone && ai != kNone) return mixes(n, "indexes a batch with another batch");
      if (a != kNone) {
        if (a == ax) return mixes(n, "indexes into the batch axis");
        return a < ax ? a : a + ri - 1;
      }
      return ax + ai;  // rows of the indices pick rows of an unbatched table
    }
    if (n.op->fusion == FusionKind::elementwise || n.op->fusion == FusionKind::broadcast)
      return broadcast(n);
    return mixes(n, "is not known to keep batch rows apart");
  }

  const Graph& g_;
  int64_t batch_;
  std::vector<int> axis_;
};

}  // namespace

const Node* find_batch_row_pick(const Graph& g, const std::vector<int>& input_axes) {
  if (input_axes.size() != g.inputs().size()) return nullptr;
  int64_t batch = -1;
  for (size_t i = 0; i < input_axes.size(); ++i) {
    const Shape& s = g.value(g.inputs()[i]).type.shape;
    if (input_axes[i] >= static_cast<int>(s.size())) return nullptr;
    if (input_axes[i] >= 0) batch = s[input_axes[i]];
  }
  Tracer t(g, batch);
  for (size_t i = 0; i < input_axes.size(); ++i) t.set_input(g.inputs()[i], input_axes[i]);
  for (const Node& n : g.nodes()) {
    if (t.picks_row(n)) return &n;
    if (!t.node(n).ok()) return nullptr;
  }
  return nullptr;
}

absl::StatusOr<std::vector<int>> trace_batch_rows(const Graph& g,
                                                  const std::vector<int>& input_axes) {
  if (input_axes.size() != g.inputs().size())
    return absl::InvalidArgumentError(str_cat("trace_batch_rows: ", input_axes.size(),
                                              " batch axes for ", g.inputs().size(), " inputs"));
  int64_t batch = -1;
  for (size_t i = 0; i < input_axes.size(); ++i) {
    if (input_axes[i] == kNone) continue;
    const Value& v = g.value(g.inputs()[i]);
    if (input_axes[i] < 0 || input_axes[i] >= static_cast<int>(v.type.shape.size()))
      return absl::InvalidArgumentError(
          str_cat("input '", v.name, "' has no axis ", input_axes[i]));
    const int64_t b = v.type.shape[input_axes[i]];
    if (batch >= 0 && b != batch)
      return absl::InvalidArgumentError(str_cat("input '", v.name, "' has a batch of ", b,
                                                ", another input one of ", batch));
    batch = b;
  }
  if (batch < 2)
    return absl::FailedPreconditionError(
        "batch rows are traced at a batch of 2 or more (at 1 they look like any size-1 axis)");
  Tracer t(g, batch);
  for (size_t i = 0; i < input_axes.size(); ++i) t.set_input(g.inputs()[i], input_axes[i]);
  for (const Node& n : g.nodes())
    if (absl::Status s = t.node(n); !s.ok()) return s;
  std::vector<int> out;
  for (ValueId v : g.outputs()) out.push_back(t.axis(v));
  return out;
}

}  // namespace collage
