// Graph statistics: operator counts, parameter totals and per-operator FLOP formulas.
#include "collage/graph_stats.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>

namespace collage {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
int64_t add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

// Reads one attribute field by name (the attribute structs are typed, the formulas here only
// need a kernel size or a mode, so they look the field up through the visitor).
class FieldReader : public AttrVisitor {
 public:
  explicit FieldReader(std::string_view name) : name_(name) {}
  std::vector<int64_t> ints;
  std::string text;
  void field(const char* n, std::vector<int64_t>& v) override {
    if (name_ == n) ints = v;
  }
  void field(const char* n, std::string& v) override {
    if (name_ == n) text = v;
  }
  void field(const char*, int64_t&) override {}
  void field(const char*, float&) override {}
  void field(const char*, std::vector<float>&) override {}
  void field(const char*, Tensor&) override {}

 private:
  std::string_view name_;
};

FieldReader read_field(const Node& n, std::string_view name) {
  FieldReader r(name);
  // Reading visitors leave the shared instance unchanged (see OpAttrs::visit).
  if (n.attrs) const_cast<OpAttrs&>(*n.attrs).visit(r);
  return r;
}

// The types a formula sees; absent inputs read as empty shapes with no elements.
struct NodeTypes {
  const Graph& g;
  const Node& n;
  Shape none{0};
  bool has_in(size_t i) const { return i < n.inputs.size() && n.inputs[i] != kNoValue; }
  const Shape& in(size_t i) const { return has_in(i) ? g.value(n.inputs[i]).type.shape : none; }
  const Shape& out() const { return g.value(n.outputs[0]).type.shape; }
  int64_t in_numel(size_t i) const { return shape_numel(in(i)); }
  int64_t out_numel() const { return shape_numel(out()); }
};

// Product of the dimensions after the first (a weight's per-output-channel size).
int64_t tail_numel(const Shape& s) {
  int64_t p = 1;
  for (size_t i = 1; i < s.size(); ++i) p = mul(p, s[i]);
  return s.empty() ? 0 : p;
}

int64_t conv(const NodeTypes& t) {
  return mul(2, mul(t.out_numel(), tail_numel(t.in(1))));
}
int64_t conv_transpose(const NodeTypes& t) {
  return mul(2, mul(t.in_numel(0), tail_numel(t.in(1))));
}
int64_t matmul(const NodeTypes& t) {
  const Shape& a = t.in(0);
  return a.empty() ? 0 : mul(2, mul(t.out_numel(), a.back()));
}
int64_t gemm(const NodeTypes& t) {
  const Shape& out = t.out();
  if (out.empty() || out[0] == 0) return 0;
  return mul(2, mul(t.out_numel(), t.in_numel(0) / out[0]));
}
int64_t zero(const NodeTypes&) {
  return 0;
}
int64_t per_output(const NodeTypes& t) {
  return t.out_numel();
}
int64_t per_input(const NodeTypes& t) {
  return t.in_numel(0);
}
int64_t pool(const NodeTypes& t) {
  int64_t k = 1;
  for (int64_t d : read_field(t.n, "kernel_shape").ints) k = mul(k, d);
  return mul(t.out_numel(), k);
}
int64_t batch_norm(const NodeTypes& t) {
  return mul(2, t.in_numel(0));
}
int64_t normalization(const NodeTypes& t) {
  return mul(7, t.in_numel(0));
}
int64_t softmax(const NodeTypes& t) {
  return mul(5, t.in_numel(0));
}
int64_t resize(const NodeTypes& t) {
  if (read_field(t.n, "mode").text != "linear") return 0;
  const Shape &in = t.in(0), &out = t.out();
  int64_t neighbours = 1;
  for (size_t i = 0; i < in.size() && i < out.size(); ++i)
    if (in[i] != out[i]) neighbours = mul(neighbours, 2);
  return mul(mul(2, neighbours), t.out_numel());
}

struct Formula {
  std::string_view op;
  int64_t (*flops)(const NodeTypes&);
};
constexpr Formula kFormulas[] = {
    {"Conv", conv},
    {"ConvTranspose", conv_transpose},
    {"MatMul", matmul},
    {"Gemm", gemm},
    {"MaxPool", pool},
    {"AveragePool", pool},
    {"GlobalAveragePool", per_input},
    {"ReduceMean", per_input},
    {"ReduceSum", per_input},
    {"ReduceMax", per_input},
    {"BatchNormalization", batch_norm},
    {"InstanceNormalization", normalization},
    {"LayerNormalization", normalization},
    {"Softmax", softmax},
    {"LogSoftmax", softmax},
    {"Resize", resize},
    {"Identity", zero},
    {"Dropout", zero},
    {"Cast", zero},
};

}  // namespace

int64_t node_flops(const Graph& g, const Node& n) {
  if (n.outputs.empty()) return 0;
  // Sizes known only at run time: no figure.
  for (ValueId v : n.inputs)
    if (v != kNoValue && g.value(v).type.is_dynamic()) return 0;
  for (ValueId v : n.outputs)
    if (g.value(v).type.is_dynamic()) return 0;
  const NodeTypes types{g, n};
  for (const Formula& f : kFormulas)
    if (f.op == n.op_name()) return f.flops(types);
  switch (n.op->fusion) {
    case FusionKind::elementwise:
    case FusionKind::broadcast:
      return per_output(types);
    case FusionKind::reduction:
      return per_input(types);
    default:
      return 0;
  }
}

GraphStats graph_stats(const Graph& g) {
  GraphStats s;
  s.nodes = static_cast<int64_t>(g.nodes().size());
  s.parameters = g.parameter_count();
  for (const Tensor& c : g.constants()) s.parameter_bytes += static_cast<int64_t>(c.bytes());
  std::map<std::string_view, OpStats> by_op;
  for (const Node& n : g.nodes()) {
    OpStats& o = by_op[n.op_name()];
    const int64_t f = node_flops(g, n);
    ++o.count;
    o.flops = add(o.flops, f);
    s.flops = add(s.flops, f);
  }
  for (auto& [name, o] : by_op) {
    o.op = std::string(name);
    s.ops.push_back(std::move(o));
  }
  std::stable_sort(s.ops.begin(), s.ops.end(),
                   [](const OpStats& a, const OpStats& b) { return a.count > b.count; });
  return s;
}

}  // namespace collage
