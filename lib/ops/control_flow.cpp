// If, Loop and Scan: operators whose bodies are graphs, run by the reference executor. Their
// output types come from the bodies' (a dimension the branches or iterations disagree on is
// dynamic); an output whose size only the run decides is left for the kernel to set.
#include <cassert>
#include <cstring>

#include "collage/ops/control_flow.h"
#include "collage/reference.h"
#include "core/str_cat.h"
#include "ops/op_sets.h"
#include "ops/op_util.h"

namespace collage::ops {
namespace {

// Iterations a Loop may run before it is stopped: a loop whose condition never turns false must
// not hang the process.
constexpr int64_t kMaxIterations = 1'000'000;

std::vector<TensorType> output_types(const Graph& g) {
  std::vector<TensorType> out;
  for (ValueId v : g.outputs()) out.push_back(g.value(v).type);
  return out;
}

// The graph inputs of `body` from `first` on take the node's inputs from `node_first` on.
absl::Status check_body_inputs(const InferContext& ctx, const Graph& body, size_t first,
                               int node_first, const char* what) {
  const auto n = static_cast<int>(body.inputs().size() - first);
  if (ctx.num_inputs() - node_first != n)
    return ctx.error(str_cat(what, " takes ", n, " values, the node gives ",
                             ctx.num_inputs() - node_first));
  for (int i = 0; i < n; ++i) {
    const TensorType& want = body.value(body.inputs()[first + i]).type;
    if (!ctx.has_input(node_first + i) || !type_fits(ctx.input(node_first + i), want))
      return ctx.error(str_cat(what, " input ", first + i, " is ", type_to_string(want),
                               ", the node gives ",
                               ctx.has_input(node_first + i)
                                   ? type_to_string(ctx.input(node_first + i))
                                   : std::string("none")));
  }
  return absl::OkStatus();
}

// The type both of two types can be: their shared dimensions, dynamic where they differ.
absl::StatusOr<TensorType> merge(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.shape.size() != b.shape.size())
    return absl::InvalidArgumentError(
        str_cat(type_to_string(a), " and ", type_to_string(b), " differ in type or rank"));
  TensorType t = a;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (a.shape[d] != b.shape[d]) t.shape[d] = kDynamicDim;
  return t;
}

bool truth(const Tensor& t) { return t.numel() > 0 && t.get_as_double(0) != 0.0; }

// Tensors of the same type stacked along a new axis `axis` (reversed with `reverse`).
Tensor stack(const std::vector<Tensor>& parts, const TensorType& part_type, int64_t axis,
             bool reverse) {
  Shape shape = part_type.shape;
  if (!parts.empty()) shape = parts.front().shape();
  for (int64_t& d : shape)
    if (d == kDynamicDim) d = 0;  // no iteration ran: no element either
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  Tensor out(part_type.dtype, shape);
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(part_type.dtype));
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  const auto n = static_cast<int64_t>(parts.size());
  for (int64_t k = 0; k < n; ++k) {
    const auto* src = static_cast<const uint8_t*>(parts[reverse ? n - 1 - k : k].raw());
    auto* dst = static_cast<uint8_t*>(out.raw());
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + (o * n + k) * inner, src + o * inner, inner);
  }
  return out;
}

// Slice `index` of `t` along `axis`, the axis removed.
Tensor slice_at(const Tensor& t, int64_t axis, int64_t index) {
  Shape shape = t.shape();
  const int64_t n = shape[axis];
  shape.erase(shape.begin() + axis);
  Tensor out(t.dtype(), shape);
  int64_t outer = 1, inner = static_cast<int64_t>(dtype_size(t.dtype()));
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (d < axis) outer *= t.shape()[d];
    if (d > axis) inner *= t.shape()[d];
  }
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<uint8_t*>(out.raw()) + o * inner,
                static_cast<const uint8_t*>(t.raw()) + (o * n + index) * inner, inner);
  return out;
}

// ---- If ----------------------------------------------------------------------------------------

absl::Status infer_if(InferContext& ctx) {
  const auto& a = ctx.attrs<IfAttrs>();
  if (!a.then_branch || !a.else_branch) return ctx.error("a branch is missing");
  if (ctx.input(0).numel() != 1 || ctx.input(0).dtype != DType::boolean)
    return ctx.error(str_cat("cond must be one bool, got ", type_to_string(ctx.input(0))));
  for (const Graph* g : {a.then_branch.get(), a.else_branch.get()})
    if (absl::Status s = check_body_inputs(ctx, *g, 0, 1, "a branch"); !s.ok()) return s;
  const std::vector<TensorType> then_out = output_types(*a.then_branch);
  const std::vector<TensorType> else_out = output_types(*a.else_branch);
  if (then_out.size() != else_out.size())
    return ctx.error(str_cat("then_branch has ", then_out.size(), " outputs, else_branch ",
                             else_out.size()));
  if (const Tensor* c = ctx.constant(0)) {
    const std::vector<TensorType>& chosen = truth(*c) ? then_out : else_out;
    for (size_t i = 0; i < chosen.size(); ++i) ctx.set_output(static_cast<int>(i), chosen[i]);
    return absl::OkStatus();
  }
  for (size_t i = 0; i < then_out.size(); ++i) {
    auto t = merge(then_out[i], else_out[i]);
    if (!t.ok()) return ctx.error(str_cat("output ", i, ": ", t.status().message()));
    ctx.set_output(static_cast<int>(i), *t);
  }
  return absl::OkStatus();
}

absl::Status run_if(const KernelArgs& k) {
  const auto& a = k.get<IfAttrs>();
  const Graph& branch = truth(k.inputs[0]) ? *a.then_branch : *a.else_branch;
  auto outs = run_reference(branch, {k.inputs.begin() + 1, k.inputs.end()});
  if (!outs.ok()) return outs.status();
  for (size_t i = 0; i < outs->size(); ++i) k.outputs[i] = std::move((*outs)[i]);
  return absl::OkStatus();
}

// ---- Loop --------------------------------------------------------------------------------------

struct LoopShape {
  int64_t carried = 0, scans = 0;
};

absl::StatusOr<LoopShape> loop_shape(const InferContext& ctx, const LoopAttrs& a) {
  if (!a.body) return ctx.error("the body is missing");
  const Graph& body = *a.body;
  const auto inputs = static_cast<int64_t>(body.inputs().size());
  const int64_t carried = inputs - 2 - a.num_captured;
  const int64_t scans = static_cast<int64_t>(body.outputs().size()) - 1 - carried;
  // Absent trailing inputs (M and cond of a loop without other inputs) are not counted.
  const int64_t given = ctx.num_inputs();
  if (a.num_captured < 0 || carried < 0 || scans < 0 ||
      (given != 2 + carried + a.num_captured && !(carried + a.num_captured == 0 && given <= 2)))
    return ctx.error(str_cat("the body takes ", inputs, " inputs and gives ",
                             body.outputs().size(), " outputs, with ", a.num_captured,
                             " captured values and ", ctx.num_inputs(), " node inputs"));
  return LoopShape{carried, scans};
}

absl::Status infer_loop(InferContext& ctx) {
  const auto& a = ctx.attrs<LoopAttrs>();
  auto shape = loop_shape(ctx, a);
  if (!shape.ok()) return shape.status();
  const Graph& body = *a.body;
  const TensorType i64_scalar{DType::i64, {}}, bool_scalar{DType::boolean, {}};
  if (ctx.has_input(0) && (ctx.input(0).dtype != DType::i64 || ctx.input(0).numel() != 1))
    return ctx.error(str_cat("M must be one i64, got ", type_to_string(ctx.input(0))));
  if (ctx.has_input(1) && (ctx.input(1).dtype != DType::boolean || ctx.input(1).numel() != 1))
    return ctx.error(str_cat("cond must be one bool, got ", type_to_string(ctx.input(1))));
  if (!type_fits(i64_scalar, body.value(body.inputs()[0]).type) ||
      !type_fits(bool_scalar, body.value(body.inputs()[1]).type) ||
      !type_fits(bool_scalar, body.value(body.outputs()[0]).type))
    return ctx.error("the body's iteration number must be an i64 and its condition a bool");
  if (shape->carried + a.num_captured > 0)
    if (absl::Status s = check_body_inputs(ctx, body, 2, 2, "the body"); !s.ok()) return s;
  // The carried values keep the type the body gives them, dynamic where it is not the initial's.
  for (int64_t i = 0; i < shape->carried; ++i) {
    auto t = merge(ctx.input(static_cast<int>(2 + i)),
                   body.value(body.outputs()[1 + i]).type);
    if (!t.ok()) return ctx.error(str_cat("carried value ", i, ": ", t.status().message()));
    ctx.set_output(static_cast<int>(i), *t);
  }
  // The iterations are known when only a constant trip count bounds them.
  int64_t trips = kDynamicDim;
  if (ctx.constant(0) && !ctx.has_input(1))
    trips = std::clamp<int64_t>(ctx.constant(0)->get_as_int64(0), 0, kMaxIterations);
  for (int64_t i = 0; i < shape->scans; ++i) {
    TensorType t = body.value(body.outputs()[1 + shape->carried + i]).type;
    t.shape.insert(t.shape.begin(), trips);
    ctx.set_output(static_cast<int>(shape->carried + i), t);
  }
  return absl::OkStatus();
}

absl::Status run_loop(const KernelArgs& k) {
  const auto& a = k.get<LoopAttrs>();
  const Graph& body = *a.body;
  const auto carried = static_cast<int64_t>(body.inputs().size()) - 2 - a.num_captured;
  const auto scans = static_cast<int64_t>(body.outputs().size()) - 1 - carried;
  const bool has_trips = !k.inputs.empty() && !k.inputs[0].empty();
  const int64_t trips = has_trips ? k.inputs[0].get_as_int64(0) : -1;
  const bool use_cond = k.inputs.size() > 1 && !k.inputs[1].empty();
  bool cond = !use_cond || truth(k.inputs[1]);
  std::vector<Tensor> in(body.inputs().size());
  std::vector<Tensor> state(carried);
  for (int64_t c = 0; c < carried; ++c) state[c] = k.inputs[2 + c];
  for (int64_t c = 0; c < a.num_captured; ++c) in[2 + carried + c] = k.inputs[2 + carried + c];
  std::vector<std::vector<Tensor>> stacked(scans);
  int64_t i = 0;
  for (; (trips < 0 || i < trips) && cond; ++i) {
    if (i == kMaxIterations)
      return absl::InvalidArgumentError(
          str_cat("ran ", kMaxIterations, " iterations without reaching its end; stopped"));
    in[0] = Tensor::scalar_i64(i);
    in[1] = Tensor(DType::boolean, {});
    in[1].data<uint8_t>()[0] = cond;
    std::copy(state.begin(), state.end(), in.begin() + 2);
    auto out = run_reference(body, in);
    if (!out.ok())
      return absl::Status(out.status().code(),
                          str_cat("iteration ", i, ": ", out.status().message()));
    if (use_cond) cond = truth((*out)[0]);
    for (int64_t c = 0; c < carried; ++c) state[c] = std::move((*out)[1 + c]);
    for (int64_t s = 0; s < scans; ++s) stacked[s].push_back(std::move((*out)[1 + carried + s]));
  }
  for (int64_t c = 0; c < carried; ++c) k.outputs[c] = state[c];
  for (int64_t s = 0; s < scans; ++s) {
    const TensorType& part = body.value(body.outputs()[1 + carried + s]).type;
    for (const Tensor& t : stacked[s])
      if (!stacked[s].empty() && t.shape() != stacked[s].front().shape())
        return absl::InvalidArgumentError(str_cat(
            "scan output ", s, " changes shape between iterations (",
            shape_to_string(stacked[s].front().shape()), " and ", shape_to_string(t.shape()),
            ")"));
    k.outputs[carried + s] = stack(stacked[s], part, 0, false);
  }
  return absl::OkStatus();
}

// ---- Scan --------------------------------------------------------------------------------------

struct ScanShape {
  int64_t states = 0, scan_outputs = 0;
  std::vector<int64_t> in_axes, out_axes;
};

int64_t entry(const std::vector<int64_t>& v, int64_t i) {
  return i < static_cast<int64_t>(v.size()) ? v[i] : 0;
}

absl::StatusOr<ScanShape> scan_shape(const InferContext& ctx, const ScanAttrs& a) {
  if (!a.body) return ctx.error("the body is missing");
  const Graph& body = *a.body;
  ScanShape s;
  s.states = static_cast<int64_t>(body.inputs().size()) - a.num_scan_inputs - a.num_captured;
  s.scan_outputs = static_cast<int64_t>(body.outputs().size()) - s.states;
  if (a.num_scan_inputs < 1 || a.num_captured < 0 || s.states < 0 || s.scan_outputs < 0 ||
      ctx.num_inputs() != static_cast<int>(body.inputs().size()))
    return ctx.error(str_cat("the body takes ", body.inputs().size(), " inputs and gives ",
                             body.outputs().size(), " outputs, with ", a.num_scan_inputs,
                             " scan inputs, ", a.num_captured, " captured values and ",
                             ctx.num_inputs(), " node inputs"));
  for (int64_t i = 0; i < a.num_scan_inputs; ++i) {
    const auto rank = static_cast<int64_t>(ctx.input(static_cast<int>(s.states + i)).shape.size());
    auto axis = normalize_axis(entry(a.scan_input_axes, i), rank);
    if (!axis) return ctx.error(str_cat("scan input ", i, ": axis out of range"));
    s.in_axes.push_back(*axis);
  }
  for (int64_t i = 0; i < s.scan_outputs; ++i) {
    const auto rank = static_cast<int64_t>(
        body.value(body.outputs()[s.states + i]).type.shape.size() + 1);
    auto axis = normalize_axis(entry(a.scan_output_axes, i), rank);
    if (!axis) return ctx.error(str_cat("scan output ", i, ": axis out of range"));
    s.out_axes.push_back(*axis);
  }
  return s;
}

absl::Status infer_scan(InferContext& ctx) {
  const auto& a = ctx.attrs<ScanAttrs>();
  auto shape = scan_shape(ctx, a);
  if (!shape.ok()) return shape.status();
  const Graph& body = *a.body;
  // Every scan input has the same length on its axis; each slice is a body input.
  int64_t length = kDynamicDim;
  for (int64_t i = 0; i < a.num_scan_inputs; ++i) {
    const TensorType& t = ctx.input(static_cast<int>(shape->states + i));
    const int64_t n = t.shape[shape->in_axes[i]];
    if (length != kDynamicDim && n != kDynamicDim && n != length)
      return ctx.error(str_cat("scan inputs have lengths ", length, " and ", n));
    if (n != kDynamicDim) length = n;
    TensorType slice = t;
    slice.shape.erase(slice.shape.begin() + shape->in_axes[i]);
    if (!type_fits(slice, body.value(body.inputs()[shape->states + i]).type))
      return ctx.error(str_cat("scan input ", i, " slices are ", type_to_string(slice),
                               ", the body takes ",
                               type_to_string(body.value(body.inputs()[shape->states + i]).type)));
  }
  for (int64_t i = 0; i < shape->states; ++i)
    if (!type_fits(ctx.input(static_cast<int>(i)), body.value(body.inputs()[i]).type))
      return ctx.error(str_cat("state ", i, " does not fit the body's input"));
  if (absl::Status s = check_body_inputs(ctx, body, body.inputs().size() - a.num_captured,
                                         static_cast<int>(body.inputs().size() - a.num_captured),
                                         "the body");
      !s.ok())
    return s;
  for (int64_t i = 0; i < shape->states; ++i) {
    auto t = merge(ctx.input(static_cast<int>(i)), body.value(body.outputs()[i]).type);
    if (!t.ok()) return ctx.error(str_cat("state ", i, ": ", t.status().message()));
    ctx.set_output(static_cast<int>(i), *t);
  }
  for (int64_t i = 0; i < shape->scan_outputs; ++i) {
    TensorType t = body.value(body.outputs()[shape->states + i]).type;
    t.shape.insert(t.shape.begin() + shape->out_axes[i], length);
    ctx.set_output(static_cast<int>(shape->states + i), t);
  }
  return absl::OkStatus();
}

absl::Status run_scan(const KernelArgs& k) {
  const auto& a = k.get<ScanAttrs>();
  const Graph& body = *a.body;
  const auto states = static_cast<int64_t>(body.inputs().size()) - a.num_scan_inputs -
                      a.num_captured;
  const auto scan_outputs = static_cast<int64_t>(body.outputs().size()) - states;
  std::vector<int64_t> in_axes, out_axes;
  for (int64_t i = 0; i < a.num_scan_inputs; ++i)
    in_axes.push_back(*normalize_axis(entry(a.scan_input_axes, i),
                                      k.inputs[states + i].rank()));
  for (int64_t i = 0; i < scan_outputs; ++i)
    out_axes.push_back(*normalize_axis(
        entry(a.scan_output_axes, i),
        static_cast<int64_t>(body.value(body.outputs()[states + i]).type.shape.size() + 1)));
  const int64_t length = k.inputs[states].shape()[in_axes[0]];
  std::vector<Tensor> in(k.inputs.begin(), k.inputs.end());
  std::vector<std::vector<Tensor>> stacked(scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t i = 0; i < a.num_scan_inputs; ++i) {
      const int64_t at = entry(a.scan_input_directions, i) ? length - 1 - t : t;
      in[states + i] = slice_at(k.inputs[states + i], in_axes[i], at);
    }
    auto out = run_reference(body, in);
    if (!out.ok())
      return absl::Status(out.status().code(), str_cat("step ", t, ": ", out.status().message()));
    for (int64_t s = 0; s < states; ++s) in[s] = std::move((*out)[s]);
    for (int64_t s = 0; s < scan_outputs; ++s)
      stacked[s].push_back(std::move((*out)[states + s]));
  }
  for (int64_t s = 0; s < states; ++s) k.outputs[s] = in[s];
  for (int64_t s = 0; s < scan_outputs; ++s)
    k.outputs[states + s] = stack(stacked[s], body.value(body.outputs()[states + s]).type,
                                  out_axes[s], entry(a.scan_output_directions, s) != 0);
  return absl::OkStatus();
}

OpDef control_flow_op(OpDef d) {
  d.dynamic_shapes = true;
  return d;
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  for (OpDef d : {make_op<IfAttrs>("If", FusionKind::opaque, 1, -1, infer_if, run_if),
                  make_op<LoopAttrs>("Loop", FusionKind::opaque, 0, -1, infer_loop, run_loop),
                  make_op<ScanAttrs>("Scan", FusionKind::opaque, 1, -1, infer_scan, run_scan)}) {
    [[maybe_unused]] absl::Status s = r.add(control_flow_op(std::move(d)));
    assert(s.ok());
  }
}

}  // namespace collage::ops
