// The dynamic backend: which nodes it takes, and their attributes turned into the module's
// parameters (runtime/modules/dynamic/dyn_params.h).
#include <algorithm>
#include <cstring>

#include "backends/common/module_kernel.h"
#include "collage/backends/dynamic.h"
#include "collage/ops.h"
#include "collage/ops/ml.h"
#include "collage/ops/trees.h"
#include "collage/ops/geometry.h"
#include "collage/ops/indexing.h"
#include "collage/ops/pooling.h"
#include "collage/ops/recurrent.h"
#include "collage/ops/text.h"
#include "collage/ops/signal.h"
#include "core/str_cat.h"
#include "dyn_module.h"
#include "dyn_params.h"
#include "dyn_recurrent.h"
#include "dyn_tfidf.h"
#include "dynamic_encode.h"
#include "ir/attr_inputs.h"

namespace collage {
namespace {

using rt_dynamic::DynOp;
using rt_dynamic::DynParams;

bool touches_dynamic(const Graph& g, const Node& n) {
  if (reads_attr_inputs(n)) return true;
  for (ValueId v : n.inputs)
    if (v != kNoValue && g.value(v).type.is_dynamic()) return true;
  for (ValueId v : n.outputs)
    if (g.value(v).type.is_dynamic()) return true;
  return false;
}

// `v` converted to element type `t`, its bytes as one little-endian i64.
int64_t element_bits(float v, DType t) {
  unsigned char bytes[8] = {};
  const Tensor value = Tensor::scalar_f32(v).cast(t);
  std::memcpy(bytes, value.raw(), std::min<size_t>(8, dtype_size(t)));
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return static_cast<int64_t>(bits);
}

// Each float's bits, for the module's integer lists.
std::vector<int64_t> float_bits(const std::vector<float>& v) {
  std::vector<int64_t> out;
  for (float f : v) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    out.push_back(static_cast<int64_t>(u));
  }
  return out;
}

// The bits of `v` as one i64.
int64_t f64_bits(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

// The operator's attributes as the module's lists (dyn_params.h, DynOp).
absl::StatusOr<std::vector<std::vector<int64_t>>> lists_of(const Graph& g, const Node& n,
                                                           DynOp op) {
  switch (op) {
    case DynOp::nms:
      return std::vector<std::vector<int64_t>>{
          {n.get<NonMaxSuppressionAttrs>().center_point_box}};
    case DynOp::unique: {
      const auto& a = n.get<UniqueAttrs>();
      return std::vector<std::vector<int64_t>>{
          {a.axis == UniqueAttrs::kAll ? rt_dynamic::kAllAxes : a.axis}, {a.sorted}};
    }
    case DynOp::gather:
      return std::vector<std::vector<int64_t>>{{n.get<GatherAttrs>().axis}};
    case DynOp::gather_elements:
      return std::vector<std::vector<int64_t>>{{n.get<GatherElementsAttrs>().axis}};
    case DynOp::slice: {
      const auto& a = n.get<SliceAttrs>();
      return std::vector<std::vector<int64_t>>{a.starts, a.ends, a.axes, a.steps};
    }
    case DynOp::squeeze:
      return std::vector<std::vector<int64_t>>{n.get<SqueezeAttrs>().axes};
    case DynOp::unsqueeze:
      return std::vector<std::vector<int64_t>>{n.get<UnsqueezeAttrs>().axes};
    case DynOp::reshape: {
      const auto& a = n.get<ReshapeAttrs>();
      return std::vector<std::vector<int64_t>>{a.shape, {a.allowzero}};
    }
    case DynOp::transpose:
      return std::vector<std::vector<int64_t>>{n.get<TransposeAttrs>().perm};
    case DynOp::concat:
      return std::vector<std::vector<int64_t>>{{n.get<ConcatAttrs>().axis}};
    case DynOp::reduce_sum:
    case DynOp::reduce_mean:
    case DynOp::reduce_max:
    case DynOp::reduce_min:
    case DynOp::reduce_prod:
    case DynOp::reduce_l1:
    case DynOp::reduce_l2:
    case DynOp::reduce_sum_square:
    case DynOp::reduce_log_sum:
    case DynOp::reduce_log_sum_exp: {
      const auto& a = n.get<ReduceAttrs>();
      return std::vector<std::vector<int64_t>>{a.axes, {a.keepdims}, {a.noop_with_empty_axes}};
    }
    case DynOp::expand:
      return std::vector<std::vector<int64_t>>{n.get<ExpandAttrs>().shape};
    case DynOp::tile:
      return std::vector<std::vector<int64_t>>{n.get<TileAttrs>().repeats};
    case DynOp::constant_of_shape: {
      const auto& a = n.get<ConstantOfShapeAttrs>();
      std::vector<std::vector<int64_t>> lists{a.shape, {}};
      if (!a.value.empty()) {
        uint64_t bits = 0;
        const auto* b = static_cast<const uint8_t*>(a.value.raw());
        for (size_t i = 0; i < dtype_size(a.value.dtype()) && i < 8; ++i)
          bits |= static_cast<uint64_t>(b[i]) << (8 * i);
        lists[1] = {static_cast<int64_t>(bits)};
      }
      return lists;
    }
    case DynOp::pad: {
      // Attribute inputs first (pads, value, axes), then the mode.
      const auto& a = n.get<PadAttrs>();
      const int64_t mode = a.mode == "constant" ? 0
                           : a.mode == "reflect" ? 1
                           : a.mode == "edge"    ? 2
                           : a.mode == "wrap"    ? 3
                                                 : -1;
      if (mode < 0) return absl::InvalidArgumentError(str_cat("Pad mode '", a.mode, "'"));
      const DType t = g.value(n.inputs[0]).type.dtype;
      return std::vector<std::vector<int64_t>>{a.pads, {element_bits(a.value, t)}, a.axes, {mode}};
    }
    case DynOp::resize: {
      // Attribute inputs first (roi, scales, sizes), floats as their f32 bits.
      const auto& a = n.get<ResizeAttrs>();
      std::vector<int64_t> modes;
      if (!rt_dynamic::encode_resize_modes(a.mode, a.coordinate_transformation_mode,
                                           a.nearest_mode, a.keep_aspect_ratio_policy, &modes))
        return absl::InvalidArgumentError(str_cat("Resize '", n.name, "': unknown mode"));
      modes.push_back(a.exclude_outside);
      modes.push_back(a.antialias);
      const DType t = g.value(n.inputs[0]).type.dtype;
      return std::vector<std::vector<int64_t>>{
          float_bits(a.roi),
          float_bits(a.scales),
          a.sizes,
          modes,
          {float_bits({a.cubic_coeff_a})[0], float_bits({a.extrapolation_value})[0],
           element_bits(a.extrapolation_value, t)},
          a.axes};
    }
    case DynOp::split: {
      const auto& a = n.get<SplitAttrs>();
      return std::vector<std::vector<int64_t>>{a.split, {a.axis}};
    }
    case DynOp::top_k: {
      const auto& a = n.get<TopKAttrs>();
      return std::vector<std::vector<int64_t>>{a.k, {a.axis}, {a.largest}, {a.sorted}};
    }
    case DynOp::cast: {
      auto to = parse_dtype(n.get<CastAttrs>().to);
      if (!to) return absl::InvalidArgumentError(str_cat("Cast to '", n.get<CastAttrs>().to, "'"));
      return std::vector<std::vector<int64_t>>{{static_cast<int64_t>(*to)}};
    }
    case DynOp::svm_pairwise_coupling:
      return std::vector<std::vector<int64_t>>{{n.get<PairwiseCouplingAttrs>().classes}};
    case DynOp::hann_window:
    case DynOp::hamming_window:
    case DynOp::blackman_window:
      return std::vector<std::vector<int64_t>>{{n.get<SignalWindowAttrs>().periodic}};
    case DynOp::center_crop_pad:
      return std::vector<std::vector<int64_t>>{n.get<CenterCropPadAttrs>().axes};
    case DynOp::col2im: {
      const auto& a = n.get<Col2ImAttrs>();
      return std::vector<std::vector<int64_t>>{a.dilations, a.pads, a.strides};
    }
    case DynOp::affine_grid:
      return std::vector<std::vector<int64_t>>{{n.get<AffineGridAttrs>().align_corners}};
    case DynOp::shape: {
      const auto& a = n.get<ShapeAttrs>();
      return std::vector<std::vector<int64_t>>{{a.start}, {a.end}};
    }
    case DynOp::dropout: {
      // Attribute inputs first (ratio, training_mode).
      const auto& a = n.get<DropoutAttrs>();
      return std::vector<std::vector<int64_t>>{float_bits({a.ratio}),
                                               {a.training_mode != 0.f ? 1 : 0}};
    }
    case DynOp::cum_sum:
    case DynOp::cum_prod: {
      const auto& a = n.get<CumSumAttrs>();
      return std::vector<std::vector<int64_t>>{{a.exclusive}, {a.reverse}};
    }
    case DynOp::scatter_nd:
    case DynOp::scatter_elements: {
      const auto& a = n.get<ScatterAttrs>();
      const auto r = rt_dynamic::scatter_reduction(a.reduction);
      if (!r) return absl::InvalidArgumentError(
                  str_cat(n.op_name(), " '", n.name, "': reduction '", a.reduction, "'"));
      return std::vector<std::vector<int64_t>>{{static_cast<int64_t>(*r)}, {a.axis}};
    }
    case DynOp::max_unpool: {
      const auto& a = n.get<MaxUnpoolAttrs>();
      return std::vector<std::vector<int64_t>>{a.kernel_shape, a.strides, a.pads};
    }
    case DynOp::tfidf_vectorizer: {
      const auto& a = n.get<TfIdfVectorizerAttrs>();
      const rt_dynamic::TfIdfMode mode = a.mode == "IDF"     ? rt_dynamic::TfIdfMode::idf
                                         : a.mode == "TFIDF" ? rt_dynamic::TfIdfMode::tfidf
                                                             : rt_dynamic::TfIdfMode::tf;
      return std::vector<std::vector<int64_t>>{
          {static_cast<int64_t>(mode)},
          {a.min_gram_length, a.max_gram_length, a.max_skip_count},
          a.ngram_counts,
          a.ngram_indexes,
          a.pool_int64s,
          float_bits(a.weights)};
    }
    case DynOp::rnn:
    case DynOp::gru:
    case DynOp::lstm: {
      const auto& a = n.get<RecurrentAttrs>();
      const rt_dynamic::RnnCell cell = op == DynOp::rnn   ? rt_dynamic::RnnCell::rnn
                                       : op == DynOp::gru ? rt_dynamic::RnnCell::gru
                                                          : rt_dynamic::RnnCell::lstm;
      const int64_t dirs = a.direction == "bidirectional" ? 2 : 1;
      if (a.input_forget != 0)
        return absl::InvalidArgumentError(str_cat(n.op_name(), " '", n.name, "': input_forget"));
      std::vector<rt_dynamic::RnnFunction> fs;
      if (std::string e = rt_dynamic::rnn_parse_functions(a.activations, a.activation_alpha,
                                                          a.activation_beta, cell, dirs, fs);
          !e.empty())
        return absl::InvalidArgumentError(str_cat(n.op_name(), " '", n.name, "': ", e));
      std::vector<int64_t> kinds, alphas, betas;
      for (const rt_dynamic::RnnFunction& f : fs) {
        kinds.push_back(static_cast<int64_t>(f.kind));
        alphas.push_back(f64_bits(f.alpha));
        betas.push_back(f64_bits(f.beta));
      }
      const TensorType& w = g.value(n.inputs[1]).type;
      const int64_t hidden = a.hidden_size > 0 ? a.hidden_size
                                               : w.shape.size() == 3
                                                     ? w.shape[1] / rt_dynamic::rnn_gates(cell)
                                                     : 0;
      return std::vector<std::vector<int64_t>>{{a.direction == "reverse" ? 1 : 0, dirs},
                                               {a.layout},
                                               {a.linear_before_reset},
                                               {hidden},
                                               {f64_bits(a.clip)},
                                               kinds,
                                               alphas,
                                               betas};
    }
    case DynOp::gemm: {
      const auto& a = n.get<GemmAttrs>();
      return std::vector<std::vector<int64_t>>{
          {a.transA}, {a.transB}, float_bits({a.alpha}), float_bits({a.beta})};
    }
    case DynOp::arg_max: {
      const auto& a = n.get<ArgMaxAttrs>();
      return std::vector<std::vector<int64_t>>{{a.axis}, {a.keepdims}, {a.select_last_index}};
    }
    default:
      return std::vector<std::vector<int64_t>>{};
  }
}

bool integer_type(DType t) { return t == DType::i32 || t == DType::i64; }

// Element types the scans and scatters run on (dyn_ops_scan.cpp).
bool scan_type(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::i32 || t == DType::i64 ||
         t == DType::u32 || t == DType::u64;
}

// Nodes offered whether their shapes are known or not, for the element types the module runs
// them on: CumSum, CumProd, ScatterND and ScatterElements run in linear time here, where native's
// tensor expressions scan the axis or the updates once per output element; Pow of integers,
// MaxUnpool and TfIdfVectorizer have no generated code; SVMPairwiseCoupling no other kernel
// outside the reference; RNN, GRU and LSTM on f32 and f64 in every variant (oneDNN's kernels,
// faster, take the common ones, without peepholes, clip or other activations).
bool offered_always(const Graph& g, const Node& n, DynOp op) {
  if (rt_dynamic::is_scan_op(op)) return scan_type(g.value(n.inputs[0]).type.dtype);
  if (op == DynOp::pow)
    return integer_type(g.value(n.inputs[0]).type.dtype) &&
           integer_type(g.value(n.inputs[1]).type.dtype);
  if (op == DynOp::rnn || op == DynOp::gru || op == DynOp::lstm) {
    const DType t = g.value(n.inputs[0]).type.dtype;
    return t == DType::f32 || t == DType::f64;
  }
  return op == DynOp::max_unpool || op == DynOp::tfidf_vectorizer ||
         op == DynOp::svm_pairwise_coupling;
}

bool is_16bit_float(const Graph& g, ValueId v) {
  return v != kNoValue &&
         (g.value(v).type.dtype == DType::f16 || g.value(v).type.dtype == DType::bf16);
}

// Whether the module runs `n` when it reads or makes f16 or bf16 values: data movement (by the
// bytes; MaxUnpool, CenterCropPad, Dropout and nearest Resize too, whose other inputs it reads
// as f32 or integers, Dropout's ratio checked below),
// Cast, the elementwise arithmetic and functions and the reductions (computed in float or double
// and rounded to the type, runtime/modules/dynamic/dyn_half.h), Shape, and control flow (whose
// body nodes are checked one by one). Any other is not offered on 16-bit floats.
bool runs_16bit_floats(const Graph& g, const Node& n, DynOp op) {
  if (op == DynOp::resize) {
    if (n.get<ResizeAttrs>().mode != "nearest") return false;
    return std::none_of(n.inputs.begin() + 1, n.inputs.end(),
                        [&](ValueId v) { return is_16bit_float(g, v); });
  }
  switch (op) {
    case DynOp::gather: case DynOp::gather_elements: case DynOp::slice: case DynOp::squeeze:
    case DynOp::unsqueeze: case DynOp::reshape: case DynOp::transpose: case DynOp::concat:
    case DynOp::cast: case DynOp::identity: case DynOp::expand: case DynOp::tile:
    case DynOp::constant_of_shape: case DynOp::pad: case DynOp::split: case DynOp::shape:
    case DynOp::add: case DynOp::sub: case DynOp::mul: case DynOp::div: case DynOp::greater:
    case DynOp::less: case DynOp::equal: case DynOp::relu: case DynOp::sigmoid: case DynOp::exp:
    case DynOp::neg: case DynOp::abs: case DynOp::sqrt: case DynOp::log: case DynOp::cos:
    case DynOp::sin: case DynOp::tanh: case DynOp::if_: case DynOp::loop: case DynOp::scan:
    case DynOp::max_unpool: case DynOp::center_crop_pad: case DynOp::dropout:
      return true;
    default:
      return op >= DynOp::reduce_sum && op <= DynOp::reduce_log_sum_exp;
  }
}

// The element types the module reads and makes for the operators that compute in double (the
// generators, Col2Im, AffineGrid), Dropout's ratio and the scans' and scatters' data, and the
// operators that take 16-bit floats; an error naming the node otherwise.
absl::Status check_dtypes(const Graph& g, const Node& n, DynOp op) {
  if (!runs_16bit_floats(g, n, op))
    for (const std::vector<ValueId>* values : {&n.inputs, &n.outputs})
      for (ValueId v : *values)
        if (is_16bit_float(g, v))
          return absl::InvalidArgumentError(
              str_cat("dynamic: ", n.op_name(), " '", n.name, "' on ",
                      dtype_name(g.value(v).type.dtype),
                      ": the module runs 16-bit floats through data movement, Cast, elementwise "
                      "arithmetic, reductions and nearest Resize only"));
  if ((op == DynOp::rnn || op == DynOp::gru || op == DynOp::lstm) && !offered_always(g, n, op))
    return absl::InvalidArgumentError(str_cat("dynamic: ", n.op_name(), " '", n.name, "' on ",
                                              dtype_name(g.value(n.inputs[0]).type.dtype),
                                              ": the module runs f32 or f64"));
  if (op == DynOp::matmul || op == DynOp::gemm)
    for (ValueId v : {n.inputs[0], n.inputs[1]})
      if (const DType t = g.value(v).type.dtype; t != DType::f32 && t != DType::f64)
        return absl::InvalidArgumentError(str_cat("dynamic: ", n.op_name(), " '", n.name, "' on ",
                                                  dtype_name(t), ": the module runs f32 or f64"));
  if (op == DynOp::pow && !offered_always(g, n, op))
    return absl::InvalidArgumentError(
        str_cat("dynamic: Pow '", n.name, "' of ", dtype_name(g.value(n.inputs[0]).type.dtype),
                " to ", dtype_name(g.value(n.inputs[1]).type.dtype),
                ": the module runs i32 or i64 to i32 or i64"));
  if (rt_dynamic::is_scan_op(op) && !scan_type(g.value(n.inputs[0]).type.dtype))
    return absl::InvalidArgumentError(
        str_cat("dynamic: ", n.op_name(), " '", n.name, "' on ",
                dtype_name(g.value(n.inputs[0]).type.dtype),
                ": the module runs it on f32, f64, i32, i64, u32 or u64"));
  const bool computes = op == DynOp::hann_window || op == DynOp::hamming_window ||
                        op == DynOp::blackman_window || op == DynOp::mel_weight_matrix ||
                        op == DynOp::col2im || op == DynOp::affine_grid;
  std::vector<ValueId> checked;
  if (computes) {
    checked = n.inputs;
    checked.insert(checked.end(), n.outputs.begin(), n.outputs.end());
  } else if (op == DynOp::dropout && n.inputs.size() > 1) {
    checked = {n.inputs[1]};
  }
  for (ValueId v : checked) {
    if (v == kNoValue) continue;
    const DType t = g.value(v).type.dtype;
    if (t != DType::f32 && t != DType::f64 && t != DType::i32 && t != DType::i64)
      return absl::InvalidArgumentError(str_cat("dynamic: ", n.op_name(), " '", n.name,
                                                "' on ", dtype_name(t),
                                                ": the module computes it in f32, f64, i32 or i64"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status check_encodable(const Graph& g, const Node& node) {
  const DynOp op = rt_dynamic::dyn_op_of(node.op_name());
  if (op == DynOp::count_)
    return absl::InvalidArgumentError(
        str_cat("dynamic: no kernel for ", node.op_name(), " '", node.name, "'"));
  for (const std::vector<ValueId>* vs : {&node.inputs, &node.outputs})
    for (ValueId v : *vs)
      if (v != kNoValue && g.value(v).type.dtype == DType::str)
        return absl::InvalidArgumentError(str_cat("dynamic: ", node.op_name(), " '", node.name,
                                                  "' on strings"));
  if (absl::Status s = check_dtypes(g, node, op); !s.ok()) return s;
  if (rt_dynamic::is_control_flow(op)) return check_bodies_encodable(node);
  return lists_of(g, node, op).status();
}

absl::StatusOr<DynParams> encode_node(const Graph& g, const Node& node,
                                      const std::vector<ValueId>& kernel_inputs,
                                      const std::vector<ValueId>& kernel_outputs,
                                      std::vector<Tensor>* constants, bool constants_as_inputs) {
  DynParams p;
  p.op = rt_dynamic::dyn_op_of(node.op_name());
  if (absl::Status s = check_encodable(g, node); !s.ok()) return s;
  if (rt_dynamic::is_control_flow(p.op)) {
    if (absl::Status s = encode_control_flow(node, kernel_outputs, constants, &p); !s.ok())
      return s;
  } else {
    auto lists = lists_of(g, node, p.op);
    if (!lists.ok()) return lists.status();
    p.lists = std::move(*lists);
  }
  if (p.op == DynOp::rnn || p.op == DynOp::gru || p.op == DynOp::lstm) {
    // Which of the node's outputs (Y, Y_h, Y_c) each kernel output is: a model may leave any out.
    std::vector<int64_t> slots;
    for (ValueId v : kernel_outputs)
      slots.push_back(std::find(node.outputs.begin(), node.outputs.end(), v) -
                      node.outputs.begin());
    p.lists.push_back(std::move(slots));
  }
  // The operator's own inputs, then each attribute input present, which gives the list of the
  // same index at run time (lists_of puts the attributes that can be inputs first).
  std::vector<ValueId> operands = node.inputs;
  if (node.op->first_attr_input >= 0 &&
      operands.size() > static_cast<size_t>(node.op->first_attr_input)) {
    operands.resize(node.op->first_attr_input);
    for (size_t j = 0; j < node.op->attr_inputs.size(); ++j) {
      const size_t i = node.op->first_attr_input + j;
      const bool present = i < node.inputs.size() && node.inputs[i] != kNoValue;
      p.list_sources.push_back(present ? static_cast<int64_t>(operands.size()) : -1);
      if (present) operands.push_back(node.inputs[i]);
    }
  }
  for (ValueId v : operands) {
    const Tensor* c = constants_as_inputs ? nullptr : g.constant_of(v);
    if (v == kNoValue) {
      p.sources.push_back(-1);
    } else if (c) {
      p.sources.push_back(-2 - static_cast<int64_t>(constants->size()));
      constants->push_back(*c);
    } else {
      const auto at = std::find(kernel_inputs.begin(), kernel_inputs.end(), v);
      if (at == kernel_inputs.end())
        return absl::InternalError(str_cat("dynamic: ", node.op_name(), " '", node.name,
                                           "' reads a value its kernel is not given"));
      p.sources.push_back(at - kernel_inputs.begin());
    }
  }
  return p;
}

namespace {

class DynamicBackend : public Backend {
 public:
  DynamicBackend()
      : Backend(std::string(kDynamicBackend), DeviceKind::cpu, rt_dynamic::kModuleVersion) {
    add_pattern_rule("dynamic.node", [](const Graph& g, const GraphReachability&,
                                        const RuleOptions&) {
      std::vector<NodeSet> out;
      for (NodeId n = 0; n < static_cast<NodeId>(g.nodes().size()); ++n) {
        const Node& node = g.node(n);
        const DynOp op = rt_dynamic::dyn_op_of(node.op_name());
        if (op == DynOp::count_ || (op == DynOp::pow && !offered_always(g, node, op))) continue;
        // Control flow only when every node of its bodies has a kernel here.
        if (rt_dynamic::is_control_flow(op)) {
          if (check_encodable(g, node).ok()) out.push_back(NodeSet::of(g.nodes().size(), {n}));
          continue;
        }
        // A node whose element types the module does not run (a 16-bit MatMul) is not offered:
        // claimed, its build would fail where another backend or the reference may run it.
        if (!check_dtypes(g, node, op).ok()) continue;
        if (touches_dynamic(g, node) || offered_always(g, node, op))
          out.push_back(NodeSet::of(g.nodes().size(), {n}));
      }
      return out;
    });
  }

  bool supports_dynamic_shapes() const override { return true; }

  absl::StatusOr<std::unique_ptr<Kernel>> build(const Graph& group,
                                                const BuildOptions&) const override {
    if (absl::Status s = require_plain_layouts(group, name()); !s.ok()) return s;
    if (group.nodes().size() != 1)
      return absl::InvalidArgumentError(
          str_cat("dynamic: group '", group.name(), "' must be one node"));
    const Node& node = group.nodes()[0];
    KernelRecord record;
    auto p = encode_node(group, node, group.inputs(), group.outputs(), &record.constants,
                         /*constants_as_inputs=*/false);
    if (!p.ok()) return p.status();
    record.module = std::string(rt_dynamic::kModuleName);
    record.entry = std::string(rt_dynamic::dyn_op_name(p->op));
    record.params = rt_dynamic::encode_params(*p);
    return make_module_kernel(rt_dynamic::module_table(), std::move(record), group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_dynamic_backend() { return std::make_unique<DynamicBackend>(); }

absl::Status register_dynamic_backend(BackendRegistry& registry) {
  return registry.add(make_dynamic_backend());
}

}  // namespace collage
