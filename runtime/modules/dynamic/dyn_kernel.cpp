// DynKernel: descriptor checks and one run (dyn_kernel.h).
#include "dyn_kernel.h"

#include "dyn_control_flow.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace collage::rt_dynamic {
namespace {

struct Arity {
  int min_inputs, max_inputs, min_outputs, max_outputs;  // -1: any number of inputs
};

Arity arity_of(DynOp op) {
  switch (op) {
    case DynOp::nms: return {2, 5, 1, 1};
    case DynOp::unique: return {1, 1, 1, 4};
    case DynOp::gather:
    case DynOp::gather_elements:
    case DynOp::add:
    case DynOp::sub:
    case DynOp::mul:
    case DynOp::div:
    case DynOp::greater:
    case DynOp::less:
    case DynOp::equal:
    case DynOp::pow:
    case DynOp::matmul: return {2, 2, 1, 1};
    case DynOp::gemm: return {2, 3, 1, 1};
    case DynOp::max_unpool: return {2, 3, 1, 1};
    case DynOp::rnn:
    case DynOp::gru: return {3, 6, 1, 2};
    case DynOp::lstm: return {3, 8, 1, 3};
    case DynOp::concat: return {1, -1, 1, 1};
    case DynOp::constant_of_shape: return {0, 0, 1, 1};
    case DynOp::range: return {3, 3, 1, 1};
    case DynOp::split: return {1, 1, 1, 1 << 20};
    case DynOp::top_k: return {1, 1, 2, 2};
    case DynOp::mel_weight_matrix: return {5, 5, 1, 1};
    case DynOp::center_crop_pad:
    case DynOp::affine_grid: return {2, 2, 1, 1};
    case DynOp::col2im:
    case DynOp::scatter_nd:
    case DynOp::scatter_elements: return {3, 3, 1, 1};
    case DynOp::cum_sum:
    case DynOp::cum_prod: return {2, 2, 1, 1};
    case DynOp::dropout: return {1, 1, 1, 2};
    case DynOp::logical_and:
    case DynOp::logical_or: return {2, 2, 1, 1};
    case DynOp::if_:
    case DynOp::scan: return {1, -1, 1, 1 << 20};
    case DynOp::loop: return {0, -1, 1, 1 << 20};
    default: return {1, 1, 1, 1};
  }
}

}  // namespace

std::string DynKernel::create(const collage_kernel_desc_t& desc, DynKernel*& kernel,
                              int depth) {
  auto k = std::make_unique<DynKernel>();
  if (std::string e = decode_params(desc.params, desc.params_size, &k->params_); !e.empty())
    return e;
  const DynParams& p = k->params_;
  if (dyn_op_name(p.op) != desc.entry)
    return std::string("entry '") + desc.entry + "' does not match the parameters' operator " +
           std::string(dyn_op_name(p.op));
  const int32_t outputs = desc.num_args - desc.num_inputs;
  const Arity a = arity_of(p.op);
  // The operands that give lists at run time come last and are not the operator's own.
  int64_t operands = static_cast<int64_t>(p.sources.size());
  for (int64_t s : p.list_sources) operands -= s >= 0;
  for (int64_t s : p.list_sources)
    if (s >= 0 && s < operands) return "a list source is one of the operator's own operands";
  if (p.list_sources.size() > p.lists.size()) return "more list sources than lists";
  if (operands < a.min_inputs || (a.max_inputs >= 0 && operands > a.max_inputs) ||
      outputs < a.min_outputs || outputs > a.max_outputs || desc.num_inputs < 0)
    return std::string(dyn_op_name(p.op)) + " with " + std::to_string(operands) + " inputs and " +
           std::to_string(outputs) + " outputs";
  for (size_t i = 0; i < p.sources.size(); ++i) {
    const int64_t s = p.sources[i];
    const bool ok = s == -1 ? static_cast<int64_t>(i) >= a.min_inputs
                    : s >= 0 ? s < desc.num_inputs
                             : -2 - s < desc.num_constants;
    if (!ok) return "input " + std::to_string(i) + " comes from nowhere the kernel has";
  }
  for (int32_t i = 0; i < desc.num_args; ++i) {
    const collage_tensor_desc_t& t = desc.args[i];
    (i < desc.num_inputs ? k->input_dtypes_ : k->output_dtypes_).push_back(t.dtype);
    k->arg_shapes_.emplace_back(t.shape, t.shape + std::max<int32_t>(t.rank, 0));
    (i < desc.num_inputs ? k->input_ranks_ : k->output_ranks_)
        .push_back(static_cast<size_t>(std::max<int32_t>(t.rank, 0)));
  }
  for (int32_t c = 0; c < desc.num_constants; ++c) {
    const collage_tensor_desc_t& t = desc.constant_descs[c];
    k->constants_.push_back({t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank),
                             static_cast<const uint8_t*>(desc.constants[c])});
  }
  try {
    for (int32_t d : k->input_dtypes_) element_size(d);
    for (int32_t d : k->output_dtypes_) element_size(d);
  } catch (const KernelError& e) {
    return e.what();
  }
  if (is_control_flow(p.op))
    if (std::string e = ControlFlow::create(p, desc, depth, &k->control_); !e.empty())
      return std::string(dyn_op_name(p.op)) + ": " + e;
  if (is_scan_op(p.op) && k->static_shapes_error().empty() && desc.num_inputs > 0)
    k->tasks_ = scan_task_count(p.op, k->arg_shapes_[0]);
  kernel = k.release();
  return "";
}

DynParams DynKernel::with_run_time_lists(const std::vector<Value>& in) const {
  DynParams p = params_;
  for (size_t i = 0; i < p.list_sources.size(); ++i) {
    const int64_t s = p.list_sources[i];
    if (s < 0) continue;
    const Value& v = in[s];
    // A floating-point operand (Pad's constant_value) is no list: the operator reads it.
    if (v.dtype != COLLAGE_DTYPE_I32 && v.dtype != COLLAGE_DTYPE_I64) continue;
    if (v.shape.size() > 1)
      throw KernelError("input " + std::to_string(s) + " gives a list, but it has rank " +
                        std::to_string(v.shape.size()));
    std::vector<int64_t>& list = p.lists[i];
    list.clear();
    for (int64_t k = 0; k < v.numel(); ++k) list.push_back(int_at(v, k));
  }
  return p;
}

std::vector<Value> DynKernel::operands(const collage_rt_tensor_t* inputs) const {
  std::vector<Value> in;
  for (int64_t s : params_.sources) {
    if (s == -1) {
      in.emplace_back();
    } else if (s < 0) {
      in.push_back(constants_[-2 - s]);
    } else {
      const collage_rt_tensor_t& t = inputs[s];
      in.push_back({input_dtypes_[s], std::vector<int64_t>(t.shape, t.shape + input_ranks_[s]),
                    static_cast<const uint8_t*>(t.data)});
    }
  }
  return in;
}

std::string DynKernel::run(const collage_rt_tensor_t* inputs, int32_t num_inputs,
                           collage_rt_alloc_fn alloc, void* alloc_ctx) const {
  if (num_inputs != static_cast<int32_t>(input_dtypes_.size()) || (num_inputs && !inputs) ||
      !alloc)
    return "run with " + std::to_string(num_inputs) + " inputs for " +
           std::to_string(input_dtypes_.size());
  const std::vector<Value> in = operands(inputs);
  Outputs out(alloc, alloc_ctx, output_dtypes_, output_ranks_);
  try {
    std::optional<DynParams> run_time;
    if (!params_.list_sources.empty()) run_time = with_run_time_lists(in);
    const DynParams& params = run_time ? *run_time : params_;
    if (control_) {
      control_->run(in, out);
      return "";
    }
    if (!run_data_dependent_op(params, in, out) && !run_layout_op(params, in, out) &&
        !run_math_op(params, in, out) && !run_reduce_op(params, in, out) &&
        !run_generate_op(params, in, out) && !run_pad_split_op(params, in, out) &&
        !run_resize_op(params, in, out) && !run_sort_op(params, in, out) &&
        !run_ml_op(params, in, out) && !run_value_shaped_op(params, in, out) &&
        !run_scan_op(params, in, out) && !run_unpool_tfidf_op(params, in, out) &&
        !run_recurrent_op(params, in, out) && !run_matmul_op(params, in, out))
      return "operator " + std::string(dyn_op_name(params_.op)) + " has no implementation";
  } catch (const KernelError& e) {
    return std::string(dyn_op_name(params_.op)) + ": " + e.what();
  }
  return "";
}

namespace {

// The planned output buffers of a static run, handed out in the planned shapes only.
struct PlannedOutputs {
  void* const* buffers;
  const std::vector<std::vector<int64_t>>* shapes;
  bool mismatch = false;
};

void* planned_buffer(void* ctx, int32_t output, const int64_t* shape) {
  auto* p = static_cast<PlannedOutputs*>(ctx);
  const std::vector<int64_t>& want = (*p->shapes)[static_cast<size_t>(output)];
  for (size_t d = 0; d < want.size(); ++d)
    if (shape[d] != want[d]) {
      p->mismatch = true;
      return nullptr;
    }
  // An empty output may have no buffer; the runtime's allocator must not return null.
  return p->buffers[output] ? p->buffers[output] : ctx;
}

}  // namespace

std::string DynKernel::static_shapes_error() const {
  for (const std::vector<int64_t>& shape : arg_shapes_)
    for (int64_t d : shape)
      if (d < 0)
        return "a kernel of the dynamic module with shapes known only at run time runs with "
               "kernel_run_dynamic";
  return "";
}

std::string DynKernel::run_static_task(void* const* args, int32_t task, int32_t tasks) const {
  if (tasks != tasks_ || task < 0 || task >= tasks)
    return "task " + std::to_string(task) + " of " + std::to_string(tasks) + " for a kernel of " +
           std::to_string(tasks_);
  if (!is_scan_op(params_.op)) return run_static(args);
  if (std::string e = static_shapes_error(); !e.empty()) return e;
  if (!args) return "null arguments";
  const size_t num_inputs = input_dtypes_.size();
  std::vector<collage_rt_tensor_t> inputs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) inputs[i] = {args[i], arg_shapes_[i].data()};
  try {
    run_scan_task(params_, operands(inputs.data()), args[num_inputs], task, tasks);
  } catch (const KernelError& e) {
    return std::string(dyn_op_name(params_.op)) + ": " + e.what();
  }
  return "";
}

std::string DynKernel::run_static(void* const* args) const {
  const size_t num_inputs = input_dtypes_.size();
  if (std::string e = static_shapes_error(); !e.empty()) return e;
  if (!args) return "null arguments";
  std::vector<collage_rt_tensor_t> inputs(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) inputs[i] = {args[i], arg_shapes_[i].data()};
  const std::vector<std::vector<int64_t>> outputs(arg_shapes_.begin() + num_inputs,
                                                  arg_shapes_.end());
  PlannedOutputs planned{args + num_inputs, &outputs};
  std::string e = run(inputs.data(), static_cast<int32_t>(num_inputs), planned_buffer, &planned);
  if (!e.empty() && planned.mismatch)
    e += " (the operator made an output of another shape than the plan's)";
  return e;
}

}  // namespace collage::rt_dynamic
