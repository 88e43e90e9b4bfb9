// If, Loop and Scan in the dynamic module (dyn_control_flow.h): each body a list of this module's
// kernels over the body's values, the values of one run held in slots that own their buffers.
#include "dyn_control_flow.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "dyn_body.h"
#include "dyn_kernel.h"

namespace collage::rt_dynamic {

struct ControlFlow::BodyRun {
  Body body;
  std::vector<std::unique_ptr<DynKernel>> kernels;  // per step
  std::vector<const uint8_t*> constants;            // per value: its constant's data, or null
};

// A value of one body run: its type and data, and the buffer when the run made it (null for a
// value borrowed from the kernel's operands or constants).
struct ControlFlow::Slot {
  Value v;
  std::shared_ptr<uint8_t[]> owned;
  bool set = false;
};

namespace {

// The largest value a body step may make (as the runtime's own bound).
constexpr uint64_t kMaxBytes = uint64_t{1} << 40;

std::string type_of(const BodyValue& v) { return type_text(v.dtype, v.shape); }

// Whether a value of `dtype` and `shape` may be `want` (-1 dimensions take any size).
bool fits(int32_t dtype, const std::vector<int64_t>& shape, const BodyValue& want) {
  if (dtype != want.dtype || shape.size() != want.shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (want.shape[d] >= 0 && shape[d] != want.shape[d]) return false;
  return true;
}

// A slot with a new buffer of `dtype` and `shape` (throws when it cannot be had).
std::shared_ptr<uint8_t[]> new_buffer(int32_t dtype, const std::vector<int64_t>& shape,
                                      uint64_t* bytes_out) {
  uint64_t bytes = element_size(dtype);
  for (int64_t d : shape) {
    if (d < 0) throw KernelError("a value of " + type_text(dtype, shape));
    if (d != 0 && bytes > kMaxBytes / static_cast<uint64_t>(d))
      throw KernelError("a value of " + type_text(dtype, shape) + " would take over 2^40 bytes");
    bytes *= static_cast<uint64_t>(d);
  }
  std::shared_ptr<uint8_t[]> p(new (std::nothrow) uint8_t[std::max<uint64_t>(bytes, 1)]);
  if (!p) throw KernelError("out of memory for " + type_text(dtype, shape));
  if (bytes_out) *bytes_out = bytes;
  return p;
}

uint64_t byte_size(const Value& v) { return element_size(v.dtype) * static_cast<uint64_t>(v.numel()); }

bool truth(const Value& v) {
  if (v.numel() < 1) return false;
  switch (v.dtype) {
    case COLLAGE_DTYPE_BOOL: return v.data[0] != 0;
    case COLLAGE_DTYPE_I64:
    case COLLAGE_DTYPE_I32: return int_at(v, 0) != 0;
    default: throw KernelError("a condition of " + type_text(v.dtype, v.shape));
  }
}

}  // namespace

ControlFlow::~ControlFlow() = default;

std::string ControlFlow::create(const DynParams& p, const collage_kernel_desc_t& desc, int depth,
                                std::shared_ptr<const ControlFlow>* out) {
  if (depth >= kMaxBodyDepth)
    return "control flow nested more than " + std::to_string(kMaxBodyDepth) + " deep";
  const size_t want = p.op == DynOp::if_ ? 2 : 1;
  if (p.bodies.size() != want)
    return std::string(dyn_op_name(p.op)) + " with " + std::to_string(p.bodies.size()) +
           " bodies";
  std::shared_ptr<ControlFlow> cf(new ControlFlow());
  cf->params_ = p;
  cf->slots_ = p.lists.empty() ? std::vector<int64_t>() : p.lists.back();
  const int32_t outputs = desc.num_args - desc.num_inputs;
  if (static_cast<int32_t>(cf->slots_.size()) != outputs)
    return std::to_string(cf->slots_.size()) + " output slots for " + std::to_string(outputs) +
           " outputs";
  for (size_t b = 0; b < p.bodies.size(); ++b) {
    auto run = std::make_unique<BodyRun>();
    const std::string which = "body " + std::to_string(b) + ": ";
    if (std::string e = decode_body(p.bodies[b].data(), p.bodies[b].size(), desc.num_constants,
                                    &run->body);
        !e.empty())
      return which + e;
    const Body& body = run->body;
    for (int64_t s : cf->slots_)
      if (s < 0 || s >= static_cast<int64_t>(body.outputs.size()) - (p.op == DynOp::loop ? 1 : 0))
        return which + "output slot " + std::to_string(s) + " names no output";
    run->constants.assign(body.values.size(), nullptr);
    for (size_t v = 0; v < body.values.size(); ++v) {
      const BodyValue& bv = body.values[v];
      if (bv.constant < 0) continue;
      const collage_tensor_desc_t& c = desc.constant_descs[bv.constant];
      if (!fits(c.dtype, std::vector<int64_t>(c.shape, c.shape + std::max(c.rank, 0)), bv) ||
          std::find(bv.shape.begin(), bv.shape.end(), -1) != bv.shape.end())
        return which + "value " + std::to_string(v) + " (" + type_of(bv) +
               ") is not its constant's type";
      run->constants[v] = static_cast<const uint8_t*>(desc.constants[bv.constant]);
    }
    for (size_t s = 0; s < body.steps.size(); ++s) {
      const BodyStep& st = body.steps[s];
      std::vector<collage_tensor_desc_t> args;
      for (int64_t a : st.args) {
        const BodyValue& v = body.values[a];
        args.push_back({v.dtype, static_cast<int32_t>(v.shape.size()), v.shape.data()});
      }
      collage_kernel_desc_t d{};
      d.struct_size = sizeof d;
      d.entry = st.entry.c_str();
      d.params = st.params.data();
      d.params_size = st.params.size();
      d.num_args = static_cast<int32_t>(args.size());
      d.args = args.data();
      d.num_inputs = static_cast<int32_t>(st.num_inputs);
      // Every body's constants, at any depth, are this kernel's: a nested If, Loop or Scan
      // finds its own among them.
      d.num_constants = desc.num_constants;
      d.constant_descs = desc.constant_descs;
      d.constants = desc.constants;
      DynKernel* k = nullptr;
      if (std::string e = DynKernel::create(d, k, depth + 1); !e.empty())
        return which + "step " + std::to_string(s) + " '" + st.name + "': " + e;
      run->kernels.emplace_back(k);
    }
    cf->bodies_.push_back(std::move(run));
  }
  *out = std::move(cf);
  return "";
}

std::vector<ControlFlow::Slot> ControlFlow::run_body(const BodyRun& b,
                                                     const std::vector<Slot>& inputs,
                                                     const char* what) const {
  const Body& body = b.body;
  if (inputs.size() != body.inputs.size())
    throw KernelError(std::string(what) + " takes " + std::to_string(body.inputs.size()) +
                      " values, given " + std::to_string(inputs.size()));
  std::vector<Slot> slots(body.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BodyValue& want = body.values[body.inputs[i]];
    if (!fits(inputs[i].v.dtype, inputs[i].v.shape, want))
      throw KernelError(std::string(what) + " input " + std::to_string(i) + " is " +
                        type_text(inputs[i].v.dtype, inputs[i].v.shape) + ", the body takes " +
                        type_of(want));
    slots[body.inputs[i]] = inputs[i];
  }
  for (size_t v = 0; v < body.values.size(); ++v)
    if (b.constants[v])
      slots[v] = {{body.values[v].dtype, body.values[v].shape, b.constants[v]}, nullptr, true};
  struct Ctx {
    std::vector<Slot>* slots;
    const Body* body;
    const BodyStep* step;
    std::string error;
  };
  auto alloc = [](void* c, int32_t index, const int64_t* shape) -> void* {
    auto& ctx = *static_cast<Ctx*>(c);
    const int64_t outputs = static_cast<int64_t>(ctx.step->args.size()) - ctx.step->num_inputs;
    // A scalar's shape may come as a null pointer (no dimension to read).
    if (index < 0 || index >= outputs) {
      ctx.error = "asked for output " + std::to_string(index) + " of " + std::to_string(outputs);
      return nullptr;
    }
    const int64_t id = ctx.step->args[ctx.step->num_inputs + index];
    const BodyValue& want = ctx.body->values[id];
    if (!shape && !want.shape.empty()) {
      ctx.error = "output " + std::to_string(index) + " without a shape";
      return nullptr;
    }
    std::vector<int64_t> s = want.shape.empty() ? std::vector<int64_t>()
                                                : std::vector<int64_t>(shape, shape + want.shape.size());
    if (!fits(want.dtype, s, want)) {
      ctx.error = "output " + std::to_string(index) + " came out as " +
                  type_text(want.dtype, s) + ", the body says " + type_of(want);
      return nullptr;
    }
    try {
      Slot& slot = (*ctx.slots)[id];
      slot.owned = new_buffer(want.dtype, s, nullptr);
      slot.v = {want.dtype, std::move(s), slot.owned.get()};
      slot.set = true;
      return slot.owned.get();
    } catch (const KernelError& e) {
      ctx.error = e.what();
      return nullptr;
    }
  };
  for (size_t s = 0; s < body.steps.size(); ++s) {
    const BodyStep& st = body.steps[s];
    std::vector<collage_rt_tensor_t> ins;
    for (int64_t a = 0; a < st.num_inputs; ++a) {
      const Slot& in = slots[st.args[a]];
      ins.push_back({in.v.data, in.v.shape.data()});
    }
    Ctx ctx{&slots, &body, &st, ""};
    std::string e = b.kernels[s]->run(ins.data(), static_cast<int32_t>(ins.size()), alloc, &ctx);
    if (e.empty() && !ctx.error.empty()) e = ctx.error;
    for (size_t a = st.num_inputs; e.empty() && a < st.args.size(); ++a)
      if (!slots[st.args[a]].set) e = "output " + std::to_string(a - st.num_inputs) + " not made";
    if (!e.empty())
      throw KernelError(std::string(what) + ": " + st.entry + " '" + st.name + "': " + e +
                        (ctx.error.empty() || ctx.error == e ? "" : " (" + ctx.error + ")"));
  }
  std::vector<Slot> out;
  for (int64_t v : body.outputs) out.push_back(slots[v]);
  return out;
}

void ControlFlow::write_outputs(const std::vector<Slot>& values, Outputs& out) const {
  for (size_t k = 0; k < slots_.size(); ++k) {
    const Value& v = values[static_cast<size_t>(slots_[k])].v;
    if (v.dtype != out.dtype(k))
      throw KernelError("output " + std::to_string(k) + " came out as " +
                        type_text(v.dtype, v.shape) + ", the kernel makes " +
                        type_text(out.dtype(k), {}));
    uint8_t* dst = out.make(k, v.shape);
    if (const uint64_t bytes = byte_size(v)) std::memcpy(dst, v.data, bytes);
  }
}

void ControlFlow::run(const std::vector<Value>& in, Outputs& out) const {
  switch (params_.op) {
    case DynOp::if_: return run_if(in, out);
    case DynOp::loop: return run_loop(in, out);
    default: return run_scan(in, out);
  }
}

void ControlFlow::run_if(const std::vector<Value>& in, Outputs& out) const {
  if (in.empty() || !in[0].data) throw KernelError("If without a condition");
  const bool taken = truth(in[0]);
  std::vector<Slot> inputs;
  for (size_t i = 1; i < in.size(); ++i) inputs.push_back({in[i], nullptr, true});
  write_outputs(run_body(*bodies_[taken ? 0 : 1], inputs, taken ? "then_branch" : "else_branch"),
                out);
}

namespace {

// Parts of the same type stacked along a new axis `axis` (in reverse order with `reverse`);
// `part` is the body's type of a part, for a loop that ran no iteration.
ControlFlow::Slot stack(const std::vector<Value>& parts, const BodyValue& part, int64_t axis,
                        bool reverse) {
  std::vector<int64_t> shape = parts.empty() ? part.shape : parts.front().shape;
  for (const Value& p : parts)
    if (p.shape != shape)
      throw KernelError("a scan output changes shape between iterations (" +
                        type_text(p.dtype, shape) + " and " + type_text(p.dtype, p.shape) + ")");
  for (int64_t& d : shape)
    if (d < 0) d = 0;  // no iteration ran: no element either
  shape.insert(shape.begin() + axis, static_cast<int64_t>(parts.size()));
  ControlFlow::Slot out;
  out.owned = new_buffer(part.dtype, shape, nullptr);
  int64_t outer = 1, inner = static_cast<int64_t>(element_size(part.dtype));
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  const auto n = static_cast<int64_t>(parts.size());
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t* src = parts[reverse ? n - 1 - k : k].data;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.owned.get() + (o * n + k) * inner, src + o * inner, inner);
  }
  out.v = {part.dtype, std::move(shape), out.owned.get()};
  out.set = true;
  return out;
}

// Slice `index` of `t` along `axis`, the axis removed.
ControlFlow::Slot slice_at(const Value& t, int64_t axis, int64_t index) {
  std::vector<int64_t> shape = t.shape;
  const int64_t n = shape[axis];
  shape.erase(shape.begin() + axis);
  ControlFlow::Slot out;
  out.owned = new_buffer(t.dtype, shape, nullptr);
  int64_t outer = 1, inner = static_cast<int64_t>(element_size(t.dtype));
  for (int64_t d = 0; d < static_cast<int64_t>(t.shape.size()); ++d) {
    if (d < axis) outer *= t.shape[d];
    if (d > axis) inner *= t.shape[d];
  }
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.owned.get() + o * inner, t.data + (o * n + index) * inner, inner);
  out.v = {t.dtype, std::move(shape), out.owned.get()};
  out.set = true;
  return out;
}

int64_t entry(const std::vector<int64_t>& v, int64_t i) {
  return i < static_cast<int64_t>(v.size()) ? v[i] : 0;
}

}  // namespace

void ControlFlow::run_loop(const std::vector<Value>& in, Outputs& out) const {
  const BodyRun& b = *bodies_[0];
  const Body& body = b.body;
  const int64_t num_captured = params_.value(0, 0);
  const auto carried = static_cast<int64_t>(body.inputs.size()) - 2 - num_captured;
  const auto scans = static_cast<int64_t>(body.outputs.size()) - 1 - carried;
  if (carried < 0 || scans < 0 || in.size() < 2 ||
      static_cast<int64_t>(in.size()) != 2 + carried + num_captured)
    throw KernelError("a body of " + std::to_string(body.inputs.size()) + " inputs and " +
                      std::to_string(body.outputs.size()) + " outputs for " +
                      std::to_string(in.size()) + " operands and " +
                      std::to_string(num_captured) + " captured values");
  // As the reference: an absent trip count (or a negative one) leaves the condition alone to
  // end the loop, an absent condition leaves the trip count.
  const bool has_trips = in[0].data != nullptr;
  const int64_t trips = has_trips ? int_at(in[0], 0) : -1;
  const bool use_cond = in[1].data != nullptr;
  bool cond = !use_cond || truth(in[1]);
  std::vector<Slot> inputs(body.inputs.size());
  int64_t iteration = 0;
  uint8_t cond_byte = 0;
  inputs[0] = {{COLLAGE_DTYPE_I64, {}, reinterpret_cast<const uint8_t*>(&iteration)}, nullptr,
               true};
  inputs[1] = {{COLLAGE_DTYPE_BOOL, {}, &cond_byte}, nullptr, true};
  for (int64_t i = 0; i < carried + num_captured; ++i) inputs[2 + i] = {in[2 + i], nullptr, true};
  std::vector<std::vector<Slot>> stacked(scans);
  for (; (trips < 0 || iteration < trips) && cond; ++iteration) {
    if (iteration == kMaxLoopIterations)
      throw KernelError("ran " + std::to_string(kMaxLoopIterations) +
                        " iterations without reaching its end; stopped");
    cond_byte = cond ? 1 : 0;
    std::vector<Slot> res;
    try {
      res = run_body(b, inputs, "body");
    } catch (const KernelError& e) {
      throw KernelError("iteration " + std::to_string(iteration) + ": " + e.what());
    }
    if (use_cond) cond = truth(res[0].v);
    for (int64_t c = 0; c < carried; ++c) inputs[2 + c] = std::move(res[1 + c]);
    for (int64_t s = 0; s < scans; ++s) stacked[s].push_back(std::move(res[1 + carried + s]));
  }
  // Node outputs: the carried values, then the scan outputs (slot 0 is the body's condition).
  std::vector<Slot> results(1);
  for (int64_t c = 0; c < carried; ++c) results.push_back(inputs[2 + c]);
  for (int64_t s = 0; s < scans; ++s) {
    std::vector<Value> parts;
    for (const Slot& p : stacked[s]) parts.push_back(p.v);
    results.push_back(stack(parts, body.values[body.outputs[1 + carried + s]], 0, false));
  }
  results.erase(results.begin());
  write_outputs(results, out);
}

void ControlFlow::run_scan(const std::vector<Value>& in, Outputs& out) const {
  const BodyRun& b = *bodies_[0];
  const Body& body = b.body;
  const int64_t num_scan = params_.value(0, 1), num_captured = params_.value(1, 0);
  const std::vector<int64_t>&in_axes = params_.list(2), &in_dirs = params_.list(3),
                            &out_axes = params_.list(4), &out_dirs = params_.list(5);
  const auto states = static_cast<int64_t>(body.inputs.size()) - num_scan - num_captured;
  const auto scan_outputs = static_cast<int64_t>(body.outputs.size()) - states;
  if (num_scan < 1 || states < 0 || scan_outputs < 0 ||
      in.size() != body.inputs.size())
    throw KernelError("a body of " + std::to_string(body.inputs.size()) + " inputs and " +
                      std::to_string(body.outputs.size()) + " outputs for " +
                      std::to_string(in.size()) + " operands");
  std::vector<int64_t> axes;
  int64_t length = -1;
  for (int64_t i = 0; i < num_scan; ++i) {
    const Value& x = in[states + i];
    const int64_t axis = axis_in(entry(in_axes, i), static_cast<int64_t>(x.shape.size()),
                                 "scan_input_axes");
    if (length >= 0 && x.shape[axis] != length)
      throw KernelError("scan inputs of lengths " + std::to_string(length) + " and " +
                        std::to_string(x.shape[axis]));
    length = x.shape[axis];
    axes.push_back(axis);
  }
  std::vector<Slot> inputs;
  for (const Value& v : in) inputs.push_back({v, nullptr, true});
  std::vector<std::vector<Slot>> stacked(scan_outputs);
  for (int64_t t = 0; t < length; ++t) {
    for (int64_t i = 0; i < num_scan; ++i)
      inputs[states + i] =
          slice_at(in[states + i], axes[i], entry(in_dirs, i) ? length - 1 - t : t);
    std::vector<Slot> res;
    try {
      res = run_body(b, inputs, "body");
    } catch (const KernelError& e) {
      throw KernelError("step " + std::to_string(t) + ": " + e.what());
    }
    for (int64_t s = 0; s < states; ++s) inputs[s] = std::move(res[s]);
    for (int64_t s = 0; s < scan_outputs; ++s) stacked[s].push_back(std::move(res[states + s]));
  }
  std::vector<Slot> results(inputs.begin(), inputs.begin() + states);
  for (int64_t s = 0; s < scan_outputs; ++s) {
    const BodyValue& part = body.values[body.outputs[states + s]];
    const int64_t axis = axis_in(entry(out_axes, s), static_cast<int64_t>(part.shape.size()) + 1,
                                 "scan_output_axes");
    std::vector<Value> parts;
    for (const Slot& p : stacked[s]) parts.push_back(p.v);
    results.push_back(stack(parts, part, axis, entry(out_dirs, s) != 0));
  }
  write_outputs(results, out);
}

}  // namespace collage::rt_dynamic
